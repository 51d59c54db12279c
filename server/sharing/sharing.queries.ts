import { z } from 'zod';
import { AnyRow, sql, type Database } from '../db/database.ts';

const PromoRow = z.object({ slug: z.string(), title: z.string(), active: z.boolean(), expiresAt: z.date().nullable() });

export async function findPromo(db: Database, slug: string) {
  return db.maybeOne(sql.type(PromoRow)`select slug, title, active, expires_at as "expiresAt" from promos where slug = ${slug}`);
}

export async function recordPromoClaim(db: Database, claim: { slug: string; email: string; status: string; logId?: string }) {
  await db.query(sql.type(AnyRow)`
    insert into promo_claims (promo_slug, email, last_send_status, last_send_log_id)
    values (${claim.slug}, ${claim.email}, ${claim.status}, ${claim.logId ?? null})
    on conflict (promo_slug, email) do update
       set claims = promo_claims.claims + 1,
           last_send_status = excluded.last_send_status,
           last_send_log_id = excluded.last_send_log_id,
           updated_at = now()`);
}

const ResultFile = z.object({
  id: z.uuid(),
  originalName: z.string(),
  status: z.string(),
  jobId: z.uuid().nullable(),
  resultKey: z.string().nullable(),
});
export type ResultFile = z.infer<typeof ResultFile>;

/**
 * A file of this owner with its latest completed result (the chunked job's
 * zip, or none for the inline path, whose zip has a fixed key); null when the
 * file does not exist or belongs to someone else.
 */
export async function findOwnedResultFile(db: Database, fileId: string, ownerId: string): Promise<ResultFile | null> {
  return db.maybeOne(sql.type(ResultFile)`
    select f.id, f.original_name as "originalName", f.status, j.id as "jobId", j.result_key as "resultKey"
      from files f
      left join lateral (
        select id, result_key from large_conversion_jobs
         where file_id = f.id and status = 'completed' order by created_at desc limit 1) j on true
     where f.id = ${fileId} and f.owner_id = ${ownerId}`);
}

export async function insertFileShare(
  db: Database,
  share: { id: string; fileId: string; sharedBy: string; htmlKey: string; message?: string; expiresAt: Date },
) {
  await db.query(sql.type(AnyRow)`
    insert into file_shares (id, file_id, shared_by, html_key, message, expires_at)
    values (${share.id}, ${share.fileId}, ${share.sharedBy}, ${share.htmlKey}, ${share.message ?? null}, ${share.expiresAt.toISOString()}::timestamptz)`);
}

export async function recordShareOutcome(db: Database, shareId: string, sent: number, unsent: number) {
  await db.query(sql.type(AnyRow)`update file_shares set recipients_sent = ${sent}, recipients_unsent = ${unsent} where id = ${shareId}`);
}

/** The HTML a live share points at; null when the share is gone (file deleted) or expired. */
export async function findLiveShare(db: Database, shareId: string, now: Date) {
  return db.maybeOne(sql.type(z.object({ htmlKey: z.string() }))`
    select html_key as "htmlKey" from file_shares where id = ${shareId} and expires_at > ${now.toISOString()}::timestamptz`);
}

/** Opens an invite for the address, or renews the open one (new expiry, new inviter). */
export async function upsertTeamInvite(db: Database, invite: { tenantId: string; email: string; invitedBy: string; expiresAt: Date }) {
  return db.one(sql.type(z.object({ id: z.uuid(), tenantName: z.string() }))`
    with invite as (
      insert into team_invites (tenant_id, email, invited_by, expires_at)
      values (${invite.tenantId}, ${invite.email}, ${invite.invitedBy}, ${invite.expiresAt.toISOString()}::timestamptz)
      on conflict (tenant_id, email) where status = 'pending'
      do update set invited_by = excluded.invited_by, expires_at = excluded.expires_at, updated_at = now()
      returning id, tenant_id)
    select invite.id, t.name as "tenantName" from invite join tenants t on t.id = invite.tenant_id`);
}

export async function isTenantMember(db: Database, tenantId: string, email: string): Promise<boolean> {
  return db.exists(sql.type(z.object({ id: z.uuid() }))`select id from users where tenant_id = ${tenantId} and email = ${email}`);
}

export async function recordInviteSend(db: Database, inviteId: string, status: string) {
  await db.query(sql.type(AnyRow)`update team_invites set last_send_status = ${status}, updated_at = now() where id = ${inviteId}`);
}

const InviteRow = z.object({
  id: z.uuid(),
  tenantId: z.uuid(),
  email: z.string(),
  status: z.string(),
  expiresAt: z.date(),
  acceptedBy: z.uuid().nullable(),
});

export async function lockTeamInvite(db: Pick<Database, 'maybeOne'>, inviteId: string) {
  return db.maybeOne(sql.type(InviteRow)`
    select id, tenant_id as "tenantId", email, status, expires_at as "expiresAt", accepted_by as "acceptedBy"
      from team_invites where id = ${inviteId} for update`);
}

/** The user joins the invite's tenant and the invite is spent, in the caller's transaction. */
export async function joinTenantByInvite(tx: Pick<Database, 'query'>, input: { inviteId: string; tenantId: string; userId: string; at: Date }) {
  await tx.query(sql.type(AnyRow)`update users set tenant_id = ${input.tenantId} where id = ${input.userId}`);
  await tx.query(sql.type(AnyRow)`
    update team_invites set status = 'accepted', accepted_by = ${input.userId}, accepted_at = ${input.at.toISOString()}::timestamptz, updated_at = now()
     where id = ${input.inviteId}`);
}
