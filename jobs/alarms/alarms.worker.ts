import { checkAlarms } from '../../server/alarms/check-alarms.ts';
import type { Deps } from '../../server/deps.ts';

export const ALARM_CHECK_QUEUE = 'alarms.check';

/** Every minute on one worker (a singleton schedule); a run that fails is not retried, the next minute runs anyway. */
export async function registerAlarmJobs(deps: Deps, options: { schedule?: boolean } = {}): Promise<void> {
  await deps.boss.createQueue(ALARM_CHECK_QUEUE, { policy: 'singleton', retryLimit: 0, expireInSeconds: 50 });
  await deps.boss.work(ALARM_CHECK_QUEUE, async () => {
    const check = await checkAlarms(deps, deps.clock.now());
    if (check.firing.length > 0) deps.log.warn({ event: 'alarms_firing', ...check }, 'alarms firing');
  });
  if (options.schedule !== false) await deps.boss.schedule(ALARM_CHECK_QUEUE, '* * * * *', null, { tz: 'UTC' });
}
