import { z } from 'zod';
import type { Config } from '../config.ts';
import { sql, type Database } from '../db/database.ts';
import type { Log } from '../log.ts';

export const Cadence = z.enum(['daily', 'weekly']);
export type Cadence = z.infer<typeof Cadence>;

export type DigestResult = { ok: boolean; cadence: Cadence; entries: number; recipients: number; sent: number; suppressed: number; failed: number };

const WINDOW_MS: Record<Cadence, number> = { daily: 24 * 60 * 60 * 1000, weekly: 7 * 24 * 60 * 60 * 1000 };

const Entry = z.object({ action: z.string(), subject: z.string().nullable(), actor: z.string().nullable(), created_at: z.date() });

function escapeHtml(value: string) {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * Sends the admin audit digest for one cadence to every subscriber, through
 * the relay route at INTERNAL_SEND_EMAIL_URL (the digest insists on it, as
 * the specification says). Each recipient is one request: 422 counts as
 * suppressed, any other failure as failed, and one failure never stops the
 * others. The idempotency key is recipient + cadence + window end, so a
 * rerun on the same UTC day does not mail twice
 * (the relay's library dedupes on the key).
 */
export async function sendAuditDigest(deps: { config: Config; db: Database; log: Log; now: Date }, cadence: Cadence): Promise<DigestResult> {
  const url = deps.config.alerts.internalSendEmailUrl;
  if (!url) throw new Error('INTERNAL_SEND_EMAIL_URL is not set');
  const since = new Date(deps.now.getTime() - WINDOW_MS[cadence]);
  const [recipients, entries] = await Promise.all([
    deps.db.anyFirst(sql.type(z.object({ email: z.string() }))`select email from audit_digest_subscriptions where cadence = ${cadence} order by email`),
    deps.db.any(sql.type(Entry)`
      select a.action, a.subject, u.email as actor, a.created_at
        from admin_audit_log a left join users u on u.id = a.actor_id
       where a.created_at >= ${since.toISOString()}::timestamptz and a.created_at < ${deps.now.toISOString()}::timestamptz
       order by a.created_at`),
  ]);
  const result: DigestResult = { ok: true, cadence, entries: entries.length, recipients: recipients.length, sent: 0, suppressed: 0, failed: 0 };
  if (recipients.length === 0) return result;
  const lines = entries.map((e) => `${e.created_at.toISOString()}  ${e.action}  ${e.subject ?? ''}  by ${e.actor ?? 'system'}`);
  const text = entries.length
    ? `Admin audit log, ${cadence} digest since ${since.toISOString()}:\n\n${lines.join('\n')}`
    : `No admin audit entries since ${since.toISOString()}.`;
  const html = `<h1>Admin audit digest (${cadence})</h1>${entries.length ? `<ul>${lines.map((l) => `<li>${escapeHtml(l)}</li>`).join('')}</ul>` : `<p>No admin audit entries since ${escapeHtml(since.toISOString())}.</p>`}`;
  // Both cadences run at most once a day, so the UTC date names the run.
  const windowKey = deps.now.toISOString().slice(0, 10);
  await Promise.all(
    recipients.map(async (to) => {
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-proxy-secret': deps.config.secrets.proxyShared ?? '' },
          body: JSON.stringify({
            to,
            subject: `Folio admin audit digest (${cadence}, ${entries.length} entries)`,
            text,
            html,
            category: 'notification',
            source: `audit-digest:${cadence}`,
            idempotencyKey: `audit-digest/${cadence}/${windowKey}/${to}`,
          }),
          signal: AbortSignal.timeout(30_000),
        });
        await response.body?.cancel();
        if (response.ok) result.sent++;
        else if (response.status === 422) result.suppressed++;
        else {
          result.failed++;
          deps.log.warn({ event: 'audit_digest_failed', cadence, status: response.status }, 'audit digest not sent to one recipient');
        }
      } catch (error) {
        result.failed++;
        deps.log.warn({ event: 'audit_digest_failed', cadence, err: error }, 'audit digest not sent to one recipient');
      }
    }),
  );
  result.ok = result.failed === 0;
  return result;
}
