import { z } from 'zod';
import { sql, type Database } from '../db/database.ts';
import { SuppressionReason } from './types.ts';

/** The settings row that overrides EMAIL_PRIMARY / EMAIL_FALLBACK (the specification's shared parameter store). */
export const PROVIDER_PAIR_SETTING = 'email.providers';

const SuppressionRow = z.object({ email: z.string(), reason: SuppressionReason });
export type SuppressionRow = z.infer<typeof SuppressionRow>;

/** All suppressions for these bare lowercase addresses, in one query. */
export async function findSuppressions(db: Database, addresses: string[]) {
  if (addresses.length === 0) return [];
  return db.any(sql.type(SuppressionRow)`
    select email, reason from email_suppressions where email = any(${sql.array(addresses, 'text')})`);
}

/** The row `record_email_send(p_entry jsonb)` takes; see sql/010_email_send_log.sql. */
export type SendLogEntry = {
  id: string;
  status: 'deferred' | 'sent' | 'suppressed' | 'failed';
  category: string;
  source?: string;
  provider?: string;
  provider_message_id?: string;
  failed_over: boolean;
  error_kind?: string;
  idempotency_key: string;
  attempt: number;
  to: string[];
  cc: string[];
  bcc: string[];
  from: string;
  subject: string;
  tags: Record<string, string>;
  configuration_set?: string;
  error?: string;
  cost_usd?: number;
};

/** Upserts the send-log row; returns the id of the row that holds it (an event may have created it first). */
export async function recordEmailSend(db: Database, entry: SendLogEntry): Promise<string> {
  const [id] = await recordEmailSends(db, [entry]);
  return id!;
}

// Built once: a zod schema made per call costs more than the rest of the call (every send writes a row).
const SendIds = z.object({ ids: z.array(z.uuid()) });

/**
 * Several sends' rows in one round trip; ids come back in the order of the entries.
 *
 * The statement commits without waiting for its WAL to reach the disk
 * (synchronous_commit off for this one transaction, hence a pool and not a
 * caller's transaction): the send waits for its row to be written and
 * visible, not for the flush, which was most of a send's added time on a busy
 * disk. Nothing is lost on any shutdown of ours or of PostgreSQL, nor on a
 * crash of this process; only a crash of the database host can lose the last
 * fraction of a second of rows (the WAL writer flushes every 200 ms), and the
 * database stays consistent. The specification already lets a log write fail
 * without changing the send.
 */
export async function recordEmailSends(db: Database, entries: SendLogEntry[]): Promise<string[]> {
  // Sent as JSON text: JSON.stringify drops undefined fields, which the function reads as "not given".
  return db.oneFirst(sql.type(SendIds)`
    select array_agg(s.id order by s.n) as ids
      from (select set_config('synchronous_commit', 'off', true)) as no_flush_wait,
           record_email_sends(${JSON.stringify(entries)}::jsonb) as s`);
}

export async function sendLogRowExists(db: Database, id: string): Promise<boolean> {
  return db.exists(sql.type(z.object({ id: z.uuid() }))`select id from email_log where id = ${id}`);
}

export async function readProviderPairSetting(db: Database): Promise<unknown> {
  return db.maybeOneFirst(sql.type(z.object({ value: z.unknown() }))`select value from settings where key = ${PROVIDER_PAIR_SETTING}`);
}
