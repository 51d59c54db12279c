import type { DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { AnyRow, sql, type Database } from '../db/database.ts';

type Queryable = Pick<Database, 'query' | 'one' | 'maybeOne' | 'any' | 'anyFirst'> | DatabaseTransactionConnection;

export async function usersWantingResultMail(db: Queryable, userIds: string[]): Promise<Set<string>> {
  const rows = await db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    select id from users where id = any(${sql.array(userIds, 'uuid')}) and conversion_result_email`);
  return new Set(rows);
}

const ResultEvent = z.object({
  eventId: z.coerce.number(),
  type: z.enum(['conversion.completed', 'conversion.failed']),
  payload: z.record(z.string(), z.unknown()),
  fileId: z.uuid(),
  originalName: z.string(),
  resultKey: z.string().nullable(),
  userId: z.uuid(),
  email: z.string(),
  optedIn: z.boolean(),
  // convert-by-email conversions get their reply from the intake instead
  byEmail: z.boolean(),
});
export type ResultEvent = z.infer<typeof ResultEvent>;

/** The event with its file and owner as they are now; null when the event or the file is gone. */
export function findResultEvent(db: Queryable, eventId: number): Promise<ResultEvent | null> {
  return db.maybeOne(sql.type(ResultEvent)`
    select o.id as "eventId", o.type, o.payload, f.id as "fileId", f.original_name as "originalName", j.result_key as "resultKey",
           u.id as "userId", u.email, u.conversion_result_email as "optedIn",
           exists (select 1 from intake_messages m where m.file_id = f.id) as "byEmail"
      from outbox_events o
      join files f on f.id = o.aggregate_id
      join users u on u.id = f.owner_id
      left join large_conversion_jobs j on j.id = (o.payload ->> 'jobId')::uuid and o.payload ->> 'jobId' is not null
     where o.id = ${eventId} and o.type in ('conversion.completed', 'conversion.failed')`);
}

/** Longer than one send can take (15 s per provider attempt, a failover, the log write): a claim this old was left by a crash. */
const SENDING_LEASE_SECONDS = 120;

/**
 * Claims the event's mail: true for the first caller, and for a caller
 * finding a claim left 'sending' by a crash (its retry reuses the
 * idempotency key, so the provider never delivers it twice); false while
 * another caller is sending it, or after it was sent.
 */
export async function claimResultMail(db: Queryable, claim: { eventId: number; fileId: string; userId: string }): Promise<boolean> {
  const row = await db.maybeOne(sql.type(z.object({ status: z.string() }))`
    insert into conversion_result_mails (event_id, file_id, user_id) values (${claim.eventId}, ${claim.fileId}, ${claim.userId})
    on conflict (event_id) do update set updated_at = now()
     where conversion_result_mails.status = 'sending' and conversion_result_mails.updated_at < now() - make_interval(secs => ${SENDING_LEASE_SECONDS})
    returning status`);
  return row !== null;
}

export async function recordResultMail(db: Queryable, eventId: number, outcome: { status: string; logId?: string }): Promise<void> {
  await db.query(sql.type(AnyRow)`
    update conversion_result_mails set status = ${outcome.status}, log_id = ${outcome.logId ?? null}, updated_at = now() where event_id = ${eventId}`);
}

export async function recordSkippedResultMail(db: Queryable, claim: { eventId: number; fileId: string; userId: string }): Promise<void> {
  await db.query(sql.type(AnyRow)`
    insert into conversion_result_mails (event_id, file_id, user_id, status) values (${claim.eventId}, ${claim.fileId}, ${claim.userId}, 'skipped')
    on conflict (event_id) do nothing`);
}
