import { z } from 'zod';
import { AnyRow, sql, type Database } from '../db/database.ts';

const Episode = z.object({ id: z.coerce.number(), condition: z.string(), startedAt: z.date(), alertedAt: z.date().nullable() });
export type Episode = z.infer<typeof Episode>;

export function openEpisodes(db: Pick<Database, 'any'>): Promise<readonly Episode[]> {
  return db.any(sql.type(Episode)`
    select id, condition, started_at as "startedAt", alerted_at as "alertedAt" from alarm_episodes where ended_at is null`);
}

/** Opens the condition's episode, or moves the open one's latest value; the unique open index makes two checkers agree on one. */
export async function upsertOpenEpisode(
  db: Database,
  reading: { condition: string; value: number; details: Record<string, number> },
  at: Date,
): Promise<number> {
  return db.oneFirst(sql.type(z.object({ id: z.coerce.number() }))`
    insert into alarm_episodes (condition, started_at, first_value, last_value, details)
    values (${reading.condition}, ${at.toISOString()}, ${reading.value}, ${reading.value}, ${JSON.stringify(reading.details)}::jsonb)
    on conflict (condition) where ended_at is null do update set last_value = excluded.last_value, details = excluded.details
    returning id`);
}

export async function endEpisode(db: Database, id: number, at: Date): Promise<void> {
  await db.query(sql.type(AnyRow)`update alarm_episodes set ended_at = ${at.toISOString()} where id = ${id} and ended_at is null`);
}

/** The atomic claim: true for the one caller that sets alerted_at. */
export async function claimEpisodeAlert(db: Database, id: number, at: Date): Promise<boolean> {
  const claimed = await db.query(sql.type(AnyRow)`update alarm_episodes set alerted_at = ${at.toISOString()} where id = ${id} and alerted_at is null`);
  return claimed.rowCount === 1;
}

export async function releaseEpisodeAlert(db: Database, id: number): Promise<void> {
  await db.query(sql.type(AnyRow)`update alarm_episodes set alerted_at = null where id = ${id}`);
}

/** Counts a 5xx answer in its minute, for the alarm (every API process writes here; the Prometheus counter is per process). */
export async function recordApiError(db: Pick<Database, 'query'>, at: Date): Promise<void> {
  await db.query(sql.type(AnyRow)`
    insert into api_error_minutes (minute, errors) values (date_trunc('minute', ${at.toISOString()}::timestamptz), 1)
    on conflict (minute) do update set errors = api_error_minutes.errors + 1`);
}
