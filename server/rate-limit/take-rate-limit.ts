import { z } from 'zod';
import { sql, type Database } from '../db/database.ts';
import { DomainError } from '../errors.ts';

const MAX_WINDOW_MS = 24 * 60 * 60 * 1000;

/** One limit: at most `limit` hits per `windowMs` for `key` (e.g. `promo:ip:1.2.3.4`). */
export type RateLimit = { key: string; limit: number; windowMs: number };

export type RateLimitDecision = { allowed: true } | { allowed: false; retryAfterMs: number; blockingKey: string };

const Decision = z.object({ allowed: z.boolean(), retryAfterMs: z.coerce.number(), blockingKey: z.string().nullable() });

/**
 * Counts one hit against every limit, or, when any of them is used up,
 * against none and says which and for how long (a sliding window kept in
 * PostgreSQL, so it holds across every API and worker process). `now` comes
 * from the caller's clock, so tests move time instead of sleeping.
 */
export async function takeRateLimits(db: Pick<Database, 'one'>, limits: RateLimit[], now: Date): Promise<RateLimitDecision> {
  if (limits.length === 0) return { allowed: true };
  const tooLong = limits.find((limit) => limit.windowMs > MAX_WINDOW_MS);
  if (tooLong) throw new Error(`rate limit ${tooLong.key}: a window is at most a day (the hourly sweep drops older hits)`);
  const row = await db.one(sql.type(Decision)`
    select allowed, retry_after_ms as "retryAfterMs", blocking_key as "blockingKey"
      from take_rate_limits(
        ${sql.array(
          limits.map((limit) => limit.key),
          'text',
        )},
        ${sql.array(
          limits.map((limit) => limit.limit),
          'int4',
        )},
        ${sql.array(
          limits.map((limit) => limit.windowMs),
          'int8',
        )},
        ${now.toISOString()}::timestamptz)`);
  return row.allowed ? { allowed: true } : { allowed: false, retryAfterMs: row.retryAfterMs, blockingKey: row.blockingKey ?? '' };
}

/**
 * The same, for a request: a refusal is a 429 `TOO_MANY_REQUESTS` whose
 * details carry `retryAfterSeconds`, which every route writes as the
 * Retry-After header (server/http/errors.ts and the tRPC response meta).
 */
export async function enforceRateLimits(
  db: Pick<Database, 'one'>,
  limits: RateLimit[],
  now: Date,
  message = 'Too many requests; try again later',
): Promise<void> {
  const decision = await takeRateLimits(db, limits, now);
  if (!decision.allowed) {
    throw new DomainError('TOO_MANY_REQUESTS', message, { context: { retryAfterSeconds: Math.max(1, Math.ceil(decision.retryAfterMs / 1000)) } });
  }
}

/** Drops hits older than a day (keys nobody has used since); returns how many. */
export async function sweepRateLimitHits(db: Pick<Database, 'oneFirst'>): Promise<number> {
  return db.oneFirst(sql.type(z.object({ swept: z.number() }))`select sweep_rate_limit_hits() as swept`);
}
