import { z } from 'zod';
import { AnyRow, sql, type Database } from '../db/database.ts';
import { clampEventTime, stripNuls } from '../db/strip-nuls.ts';
import { suppressionsChanged } from '../email/suppression-cache.ts';

export const EmailEvent = z.enum([
  'sent',
  'delivery_delayed',
  'delivered',
  'opened',
  'clicked',
  'bounced',
  'complained',
  'failed',
  'suppressed',
  'bounce_transient',
]);
export type EmailEvent = z.infer<typeof EmailEvent>;

export type EmailEventInput = {
  provider: 'provider_a' | 'provider_b';
  providerMessageId: string;
  event: EmailEvent;
  occurredAt?: Date;
  raw?: unknown;
  /** The provider's own event name kept in last_event (default: event). */
  lastEvent?: string;
  error?: string;
  to?: string[];
  from?: string;
  subject?: string;
  configurationSet?: string;
  tags?: Record<string, string>;
  /** The folio_log_id tag: lets the event adopt the library's row. */
  logId?: string;
  suppress?: { addresses: string[]; reason: 'hard_bounce' | 'complaint' };
  /** false for outreach mail: no alert and no claim. */
  alert?: boolean;
  /** The poller's backfill rule: a row this call creates keeps the claim set with no alert. */
  backfill?: boolean;
};

export const RecordedEvent = z.object({ send_id: z.uuid(), status: z.string(), alert: z.boolean() });
export type RecordedEvent = z.infer<typeof RecordedEvent>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Calls record_email_event (sql/030_email_events.sql); see there for the state and claim rules. */
export async function recordEmailEvent(db: Database, given: EmailEventInput): Promise<RecordedEvent> {
  // a signed event is the provider's: a NUL or a year-99999 date in it must not fail the statement (the
  // provider would redeliver it forever), so it is stored without the one and with the other clamped
  const input = { ...stripNuls({ ...given, occurredAt: undefined }), occurredAt: clampEventTime(given.occurredAt) };
  const logId = input.logId && UUID.test(input.logId) ? input.logId : null;
  if (!input.suppress) return recordEvent(db, input, logId);
  try {
    return await recordEvent(db, input, logId);
  } finally {
    // The function may have added suppressions: this process's library must see them at once.
    suppressionsChanged();
  }
}

function recordEvent(db: Database, input: EmailEventInput, logId: string | null): Promise<RecordedEvent> {
  return db.one(sql.type(RecordedEvent)`
    select send_id, status, alert from record_email_event(
      p_provider => ${input.provider},
      p_provider_message_id => ${input.providerMessageId},
      p_event => ${input.event},
      p_occurred_at => ${input.occurredAt ? input.occurredAt.toISOString() : null}::timestamptz,
      p_raw => ${input.raw === undefined ? null : JSON.stringify(input.raw)}::jsonb,
      p_last_event => ${input.lastEvent ?? null},
      p_error => ${input.error ?? null},
      p_to => ${input.to ? JSON.stringify(input.to) : null}::jsonb,
      p_from => ${input.from ?? null},
      p_subject => ${input.subject ?? null},
      p_configuration_set => ${input.configurationSet ?? null},
      p_tags => ${input.tags ? JSON.stringify(input.tags) : null}::jsonb,
      p_log_id => ${logId}::uuid,
      p_suppress => ${input.suppress ? JSON.stringify(input.suppress.addresses) : null}::jsonb,
      p_suppress_reason => ${input.suppress?.reason ?? null},
      p_alert => ${input.alert ?? true},
      p_backfill => ${input.backfill ?? false}
    )`);
}

/** The send log's words for an alert's outcome (email_log.alert_outcome). */
export type RecordedAlertOutcome = 'delivered' | 'disabled' | 'not_configured' | 'failed';

/** Writes what became of the row's alert; `release` also gives its claim back, in the same statement. */
export async function recordAlertOutcome(db: Database, sendId: string, outcome: RecordedAlertOutcome, options: { release: boolean }): Promise<void> {
  await db.query(sql.type(AnyRow)`
    update email_log set alert_outcome = ${outcome}, alerted_at = case when ${options.release} then null else alerted_at end, updated_at = now()
     where id = ${sendId}`);
}

/** Gives an alert claim back so the next event or poll alerts again. */
export async function releaseAlertClaim(db: Database, sendId: string): Promise<boolean> {
  return db.oneFirst(sql.type(z.object({ released: z.boolean() }))`select release_email_alert_claim(${sendId}::uuid) as released`);
}
