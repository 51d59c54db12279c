import { z } from 'zod';
import { sql, type Database } from '../db/database.ts';
import { DomainError } from '../errors.ts';
import { insertAdminAudit } from '../db/admin-audit.ts';
import { suppressionsChanged } from '../email/suppression-cache.ts';

const Status = z.enum(['deferred', 'sent', 'delivery_delayed', 'delivered', 'opened', 'clicked', 'suppressed', 'failed', 'bounced', 'complained']);

export const EmailLogQuery = z.object({
  status: Status.optional(),
  category: z.enum(['auth', 'transactional', 'notification', 'alert', 'marketing', 'unknown']).optional(),
  // mail_api: the convert-by-email replies (server/intake), logged beside the library's sends.
  provider: z.enum(['provider_a', 'provider_b', 'mail_api']).optional(),
  /** Exact recipient (To, Cc or Bcc), compared lowercase. */
  recipient: z.string().max(320).optional(),
  /** Substring of the subject, case-insensitive. */
  subject: z.string().max(300).optional(),
  page: z.coerce.number().int().min(1).max(10_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(200).default(50),
});
export type EmailLogQuery = z.input<typeof EmailLogQuery>;

const EmailLogRow = z.object({
  id: z.uuid(),
  status: z.string(),
  category: z.string(),
  source: z.string().nullable(),
  provider: z.string().nullable(),
  providerMessageId: z.string().nullable(),
  failedOver: z.boolean(),
  errorKind: z.string().nullable(),
  to: z.array(z.string()),
  subject: z.string().nullable(),
  lastEvent: z.string().nullable(),
  lastEventAt: z.string().nullable(),
  alertedAt: z.string().nullable(),
  error: z.string().nullable(),
  createdAt: z.string(),
});

export const EmailLogPage = z.object({
  rows: z.array(EmailLogRow),
  total: z.number().int(),
  page: z.number().int(),
  pageSize: z.number().int(),
  /** Count per status over the same filters (without the status filter itself, so the tabs stay useful). */
  summary: z.record(z.string(), z.number().int()),
});
export type EmailLogPage = z.infer<typeof EmailLogPage>;

const DbRow = EmailLogRow.omit({ lastEventAt: true, alertedAt: true, createdAt: true }).extend({
  lastEventAt: z.date().nullable(),
  alertedAt: z.date().nullable(),
  createdAt: z.date(),
});

function escapeLike(value: string) {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** The send log, newest first, with a per-status summary. */
export async function listEmailLog(db: Database, input: EmailLogQuery): Promise<EmailLogPage> {
  const query = EmailLogQuery.parse(input);
  const common = [
    query.category ? sql.fragment`category = ${query.category}` : null,
    query.provider ? sql.fragment`provider = ${query.provider}` : null,
    query.recipient
      ? sql.fragment`(${query.recipient.trim().toLowerCase()} = any(to_addresses) or ${query.recipient.trim().toLowerCase()} = any(cc_addresses) or ${query.recipient.trim().toLowerCase()} = any(bcc_addresses))`
      : null,
    query.subject ? sql.fragment`subject ilike ${`%${escapeLike(query.subject)}%`}` : null,
  ].filter((f) => f !== null);
  const withStatus = query.status ? [...common, sql.fragment`status = ${query.status}`] : common;
  const where = (conditions: typeof common) => (conditions.length ? sql.fragment`where ${sql.join(conditions, sql.fragment` and `)}` : sql.fragment``);
  const offset = (query.page - 1) * query.pageSize;
  const [rows, total, summary] = await Promise.all([
    db.any(sql.type(DbRow)`
      select id, status, category, source, provider, provider_message_id as "providerMessageId", failed_over as "failedOver", error_kind as "errorKind",
             to_addresses as "to", subject, last_event as "lastEvent", last_event_at as "lastEventAt", alerted_at as "alertedAt", error, created_at as "createdAt"
        from email_log ${where(withStatus)}
       order by created_at desc, id
       limit ${query.pageSize} offset ${offset}`),
    db.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from email_log ${where(withStatus)}`),
    db.any(sql.type(z.object({ status: z.string(), n: z.number() }))`select status, count(*)::int as n from email_log ${where(common)} group by status`),
  ]);
  return {
    rows: rows.map((row) => ({
      ...row,
      lastEventAt: row.lastEventAt?.toISOString() ?? null,
      alertedAt: row.alertedAt?.toISOString() ?? null,
      createdAt: row.createdAt.toISOString(),
    })),
    total,
    page: query.page,
    pageSize: query.pageSize,
    summary: Object.fromEntries(summary.map((s) => [s.status, s.n])),
  };
}

export const SuppressionItem = z.object({ email: z.string(), reason: z.string(), source: z.string().nullable(), createdAt: z.string() });

export async function listSuppressions(db: Database, input: { page?: number; pageSize?: number; email?: string } = {}) {
  const pageSize = Math.min(Math.max(input.pageSize ?? 100, 1), 500);
  const page = Math.max(input.page ?? 1, 1);
  const filter = input.email ? sql.fragment`where email like ${`%${escapeLike(input.email.toLowerCase())}%`}` : sql.fragment``;
  const [rows, total] = await Promise.all([
    db.any(sql.type(z.object({ email: z.string(), reason: z.string(), source: z.string().nullable(), created_at: z.date() }))`
      select email, reason, source, created_at from email_suppressions ${filter} order by created_at desc, email limit ${pageSize} offset ${(page - 1) * pageSize}`),
    db.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from email_suppressions ${filter}`),
  ]);
  return {
    suppressions: rows.map((r) => ({ email: r.email, reason: r.reason, source: r.source, createdAt: r.created_at.toISOString() })),
    total,
    page,
    pageSize,
  };
}

/** Removes a suppression and writes the email_unsuppress audit entry in the same transaction. */
export async function removeSuppression(db: Database, input: { email: string; actorId: string }) {
  const email = input.email.trim().toLowerCase();
  try {
    return await removeInTransaction(db, email, input.actorId);
  } finally {
    // Seen by this process's library at once: a lookup made before the commit may have cached the old row.
    suppressionsChanged();
  }
}

function removeInTransaction(db: Database, email: string, actorId: string) {
  return db.transaction(async (tx) => {
    const removed = await tx.maybeOne(
      sql.type(z.object({ email: z.string(), reason: z.string() }))`delete from email_suppressions where email = ${email} returning email, reason`,
    );
    if (!removed) throw new DomainError('NOT_FOUND', 'No suppression for that address');
    await insertAdminAudit(tx, { actorId, action: 'email_unsuppress', subject: email, details: { reason: removed.reason } });
    return { removed: true as const, email, reason: removed.reason };
  });
}
