import { z } from 'zod';
import { AnyRow, sql, type Database } from '../db/database.ts';

export const Campaign = z.object({ id: z.uuid(), name: z.string(), subject: z.string(), html: z.string().nullable(), text: z.string().nullable() });
export type Campaign = z.infer<typeof Campaign>;

export function findCampaign(db: Database, id: string): Promise<Campaign | null> {
  return db.maybeOne(sql.type(Campaign)`select id, name, subject, html, text from outreach_campaigns where id = ${id}`);
}

/**
 * Claims one address of a campaign for its send: queued -> sending. A row
 * found 'sending' was left by a crash mid-send; provider B ignores
 * idempotency keys, so it is never sent again (cold mail goes at most once).
 */
export async function claimDelivery(db: Database, campaignId: string, email: string): Promise<'claimed' | 'taken'> {
  const claimed = await db.query(sql.type(AnyRow)`
    update outreach_deliveries set status = 'sending', updated_at = now() where campaign_id = ${campaignId} and email = ${email} and status = 'queued'`);
  if (claimed.rowCount === 1) return 'claimed';
  await db.query(sql.type(AnyRow)`
    update outreach_deliveries set status = 'failed', error = 'interrupted mid-send; not sent again', updated_at = now()
     where campaign_id = ${campaignId} and email = ${email} and status = 'sending'`);
  return 'taken';
}

/** Why an address must not get campaign mail (it unsubscribed, bounced or complained), or null. */
export function optOutReason(db: Database, email: string): Promise<string | null> {
  return db.oneFirst(sql.type(z.object({ reason: z.string().nullable() }))`
    select coalesce(
      (select 'unsubscribed: ' || reason from unsubscribes where email = ${email}),
      (select 'prospect ' || status from prospects where email = ${email} and status <> 'active')) as reason`);
}

export async function finishDelivery(
  db: Database,
  row: { campaignId: string; campaignName: string; email: string; status: string; providerMessageId?: string; error?: string; at: Date },
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query(sql.type(AnyRow)`
      update outreach_deliveries set status = ${row.status}, provider_message_id = ${row.providerMessageId ?? null}, error = ${row.error ?? null}, updated_at = now()
       where campaign_id = ${row.campaignId} and email = ${row.email}`);
    if (!row.providerMessageId) return;
    // The send row exists before any event: the bookkeeping of delivery events finds the campaign either way.
    await tx.query(sql.type(AnyRow)`
      insert into prospects (email, last_contacted_at) values (${row.email}, ${row.at.toISOString()})
      on conflict (email) do update set last_contacted_at = excluded.last_contacted_at, updated_at = now()`);
    await tx.query(sql.type(AnyRow)`
      insert into email_sends (provider_message_id, prospect_email, campaign, status, sent_at)
      values (${row.providerMessageId}, ${row.email}, ${row.campaignName}, 'sent', ${row.at.toISOString()})
      on conflict (provider_message_id) do update set campaign = coalesce(email_sends.campaign, excluded.campaign), sent_at = coalesce(email_sends.sent_at, excluded.sent_at)`);
  });
}

/** Unsubscribes an address for good; true the first time. The prospect (if any) stops being contacted. */
export async function unsubscribe(db: Database, email: string, source: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const added = await tx.query(sql.type(AnyRow)`
      insert into unsubscribes (email, reason, source) values (${email}, 'unsubscribed', ${source}) on conflict (email) do nothing`);
    await tx.query(sql.type(AnyRow)`
      update prospects set status = 'unsubscribed', updated_at = now() where email = ${email} and status = 'active'`);
    return added.rowCount === 1;
  });
}

export const CampaignCounts = z.record(z.string(), z.number());

export async function campaignCounts(db: Database, campaignId: string): Promise<Record<string, number>> {
  const rows = await db.any(sql.type(z.object({ status: z.string(), n: z.number() }))`
    select status, count(*)::int as n from outreach_deliveries where campaign_id = ${campaignId} group by status`);
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}
