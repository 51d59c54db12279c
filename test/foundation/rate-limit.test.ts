import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sql } from '../../server/db/database.ts';
import { enforceRateLimits, sweepRateLimitHits, takeRateLimits } from '../../server/rate-limit/take-rate-limit.ts';
import { createTestDatabase } from '../helpers/database.ts';

const { db } = await createTestDatabase({ poolSize: 20 });
const HOUR = 60 * 60 * 1000;
const at = (base: Date, ms: number) => new Date(base.getTime() + ms);
const key = (name: string) => `${name}:${crypto.randomUUID()}`;

describe('take_rate_limits', () => {
  it('lets exactly 10 of 50 concurrent hits through a limit of 10, across connections', async () => {
    const limit = { key: key('burst'), limit: 10, windowMs: HOUR };
    const now = new Date();
    const decisions = await Promise.all(Array.from({ length: 50 }, () => takeRateLimits(db, [limit], now)));
    expect(decisions.filter((decision) => decision.allowed)).toHaveLength(10);
  });

  it('slides: a slot frees when the oldest hit leaves the window, and the refusal says when', async () => {
    const limit = { key: key('slide'), limit: 2, windowMs: HOUR };
    const start = new Date('2026-11-24T10:00:00Z');
    expect(await takeRateLimits(db, [limit], start)).toEqual({ allowed: true });
    expect(await takeRateLimits(db, [limit], at(start, 20 * 60_000))).toEqual({ allowed: true });
    expect(await takeRateLimits(db, [limit], at(start, 30 * 60_000))).toEqual({ allowed: false, retryAfterMs: 30 * 60_000, blockingKey: limit.key });
    // Still refused a millisecond before the first hit ages out; allowed at the hour.
    expect((await takeRateLimits(db, [limit], at(start, HOUR - 1))).allowed).toBe(false);
    expect(await takeRateLimits(db, [limit], at(start, HOUR))).toEqual({ allowed: true });
    // The second hit (at +20 min) is now the oldest: the next refusal waits for it.
    expect(await takeRateLimits(db, [limit], at(start, HOUR + 60_000))).toEqual({ allowed: false, retryAfterMs: 19 * 60_000, blockingKey: limit.key });
  });

  it('takes several keys all together or not at all', async () => {
    const endpoint = { key: key('endpoint'), limit: 5, windowMs: HOUR };
    const user = { key: key('user'), limit: 2, windowMs: HOUR };
    const now = new Date();
    expect((await takeRateLimits(db, [endpoint, user], now)).allowed).toBe(true);
    expect((await takeRateLimits(db, [endpoint, user], now)).allowed).toBe(true);
    const refused = await takeRateLimits(db, [endpoint, user], now);
    expect(refused).toMatchObject({ allowed: false, blockingKey: user.key });
    const counts = await db.many(sql.type(z.object({ key: z.string(), hits: z.number() }))`
      select key, count(*)::int as hits from rate_limit_hits where key in (${endpoint.key}, ${user.key}) group by key order by key`);
    // The refused call counted against neither key.
    expect(Object.fromEntries(counts.map((row) => [row.key, row.hits]))).toEqual({ [endpoint.key]: 2, [user.key]: 2 });
  });

  it('refuses with a 429 error that carries the seconds to wait', async () => {
    const limit = { key: key('enforce'), limit: 1, windowMs: 60_000 };
    const now = new Date();
    await enforceRateLimits(db, [limit], now);
    await expect(enforceRateLimits(db, [limit], at(now, 15_500))).rejects.toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      status: 429,
      context: { retryAfterSeconds: 45 },
    });
  });

  it('sweeps hits older than a day (keys nobody has hit since) and keeps the rest', async () => {
    const idle = { key: key('idle'), limit: 5, windowMs: HOUR };
    const busy = { key: key('busy'), limit: 5, windowMs: HOUR };
    await takeRateLimits(db, [idle], new Date(Date.now() - 2 * 24 * HOUR));
    await takeRateLimits(db, [busy], new Date());
    expect(await sweepRateLimitHits(db)).toBeGreaterThanOrEqual(1);
    const left = await db.many(sql.type(z.object({ key: z.string() }))`select key from rate_limit_hits where key in (${idle.key}, ${busy.key})`);
    expect(left.map((row) => row.key)).toEqual([busy.key]);
  });

  it('refuses a window longer than the sweep keeps hits', async () => {
    await expect(takeRateLimits(db, [{ key: key('long'), limit: 1, windowMs: 25 * HOUR }], new Date())).rejects.toThrow(/at most a day/);
  });
});
