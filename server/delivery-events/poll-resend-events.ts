import { z } from 'zod';
import { raiseClaimedAlert, type RaiseAlertDeps } from '../alerts/raise-alert.ts';
import { sql, type Database } from '../db/database.ts';
import { recordEmailEvent } from './delivery-events.queries.ts';
import { listResendEmails, parseResendTime, RESEND_EMAIL_EVENTS, resendStatusEvent } from '../email/providers/resend.ts';

/** One run reads at most this many pages of 100 (500 emails): a run stays well inside the 15-minute schedule. */
const POLL_MAX_PAGES = 5;
const POLL_PAGE_SIZE = 100;
/** Mail older than this, sent before the log's first row, is history: recorded, never alerted. */
const BACKFILL_AGE_MS = 60 * 60 * 1000;

export type PollResult = {
  ok: boolean;
  truncated: boolean;
  error?: string;
  pages: number;
  seen: number;
  recorded: number;
  unchanged: number;
  skipped: number;
  backfilled: number;
  alerts: number;
  alertsFailed: number;
};

const Known = z.object({ provider_message_id: z.string(), last_event: z.string().nullable(), status: z.string(), alerted_at: z.date().nullable() });

async function knownRows(db: Database, ids: string[]) {
  const rows = await db.any(sql.type(Known)`
    select provider_message_id, last_event, status, alerted_at from email_log
     where provider = 'provider_a' and provider_message_id = any(${sql.array(ids, 'text')})`);
  return new Map(rows.map((row) => [row.provider_message_id, row]));
}

/**
 * The provider-A events poller: lists sent emails (newest first) and calls
 * the recording function only for emails new to the log or whose last_event
 * changed — plus failures whose alert claim was released, so the next poll
 * alerts again. A bounce seen here never suppresses (the list carries no
 * bounce type); a complaint on single-recipient mail does. Backfill rule:
 * an email first seen here, sent over an hour ago and before the oldest log
 * row, is recorded with the claim set and no alert.
 */
export async function pollResendEvents(deps: RaiseAlertDeps & { now: Date }): Promise<PollResult> {
  const result: PollResult = {
    ok: true,
    truncated: false,
    pages: 0,
    seen: 0,
    recorded: 0,
    unchanged: 0,
    skipped: 0,
    backfilled: 0,
    alerts: 0,
    alertsFailed: 0,
  };
  const settings = deps.config.email.providerA;
  const apiKey = settings.apiKey;
  if (!apiKey) return { ...result, ok: false, error: 'provider A is not configured' };
  const oldest = await deps.db.maybeOneFirst(sql.type(z.object({ oldest: z.date().nullable() }))`select min(created_at) as oldest from email_log`);
  const loggingBegan = oldest ?? null;

  let after: string | undefined;
  for (let page = 0; page < POLL_MAX_PAGES; page++) {
    const { data, error } = await listResendEmails({ ...settings, apiKey }, { limit: POLL_PAGE_SIZE, after });
    if (error || !data) return { ...result, ok: false, error: `list failed: ${error?.name ?? 'no data'}` };
    result.pages++;
    const known = await knownRows(
      deps.db,
      data.data.map((email) => email.id),
    );
    for (const email of data.data) {
      result.seen++;
      const lastEvent = email.last_event as string;
      if (!RESEND_EMAIL_EVENTS.has(lastEvent)) {
        result.skipped++;
        continue;
      }
      const row = known.get(email.id);
      const releasedFailure =
        row !== undefined && row.alerted_at === null && ['bounced', 'complained', 'failed', 'suppressed'].includes(row.status) && row.status === lastEvent;
      if (row && row.last_event === lastEvent && !releasedFailure) {
        result.unchanged++;
        continue;
      }
      const sentAt = parseResendTime(email.created_at);
      const backfill =
        !row && sentAt !== undefined && deps.now.getTime() - sentAt.getTime() > BACKFILL_AGE_MS && (loggingBegan === null || sentAt < loggingBegan);
      const to = (Array.isArray(email.to) ? email.to : [email.to]).filter((a): a is string => typeof a === 'string');
      const recorded = await recordEmailEvent(deps.db, {
        provider: 'provider_a',
        providerMessageId: email.id,
        event: resendStatusEvent(lastEvent),
        occurredAt: deps.now,
        raw: email,
        lastEvent,
        error:
          lastEvent === 'bounced' || lastEvent === 'complained' || lastEvent === 'failed' || lastEvent === 'suppressed'
            ? `${lastEvent} (reported by the list API)`
            : undefined,
        to,
        from: email.from,
        subject: email.subject,
        suppress: lastEvent === 'complained' && to.length === 1 ? { addresses: to, reason: 'complaint' } : undefined,
        backfill,
      });
      result.recorded++;
      if (backfill) result.backfilled++;
      deps.metrics?.emailEvents.inc({ provider: 'provider_a', event: lastEvent });
      if (recorded.alert) {
        result.alerts++;
        const outcome = await raiseClaimedAlert(deps, recorded.send_id, {
          type: 'email_delivery_failure',
          subject: `Email ${recorded.status}: ${email.subject ?? '(no subject)'}`,
          message: `Provider A lists ${lastEvent} for ${to.join(', ') || 'unknown recipients'}.`,
          recipients: to,
          details: { provider: 'provider_a', providerMessageId: email.id, event: lastEvent, via: 'poll' },
        });
        if (outcome !== 'delivered' && outcome !== 'disabled') result.alertsFailed++;
      }
    }
    const last = data.data.at(-1);
    if (!data.has_more || !last) return result;
    after = last.id;
  }
  return { ...result, ok: false, truncated: true };
}
