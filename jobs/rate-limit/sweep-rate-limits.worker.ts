import type { Deps } from '../../server/deps.ts';
import { sweepRateLimitHits } from '../../server/rate-limit/take-rate-limit.ts';

const SWEEP_RATE_LIMITS_QUEUE = 'rate-limit.sweep';

/** Hourly: the sliding windows prune their own keys; this drops keys nobody has hit for a day. */
export async function registerRateLimitJobs(deps: Deps) {
  await deps.boss.createQueue(SWEEP_RATE_LIMITS_QUEUE, { policy: 'singleton', retryLimit: 2 });
  await deps.boss.work(SWEEP_RATE_LIMITS_QUEUE, async () => {
    const swept = await sweepRateLimitHits(deps.db);
    if (swept > 0) deps.log.debug({ swept }, 'swept rate-limit hits');
  });
  await deps.boss.schedule(SWEEP_RATE_LIMITS_QUEUE, '17 * * * *');
}
