import { expireHolds } from '../../server/credits/credits.ts';
import type { Deps } from '../../server/deps.ts';

const EXPIRE_HOLDS_QUEUE = 'credits.expire-holds';

/**
 * Balance checks already ignore expired holds lazily; this sweep marks them
 * `expired` so reports and the hold table tell the truth. Idempotent.
 */
export async function registerCreditJobs(deps: Deps) {
  await deps.boss.createQueue(EXPIRE_HOLDS_QUEUE, { policy: 'singleton', retryLimit: 2 });
  await deps.boss.work(EXPIRE_HOLDS_QUEUE, async () => {
    const expired = await expireHolds(deps.db);
    if (expired > 0) deps.log.info({ expired }, 'expired credit holds');
  });
  await deps.boss.schedule(EXPIRE_HOLDS_QUEUE, '* * * * *');
}
