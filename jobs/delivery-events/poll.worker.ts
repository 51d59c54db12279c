import { raiseAlertDeps } from '../../server/alerts/raise-alert.ts';
import type { Deps } from '../../server/deps.ts';
import { pollResendEvents } from '../../server/delivery-events/poll-resend-events.ts';

export const POLL_EVENTS_QUEUE = 'email-events.poll';

/**
 * The provider-A events poller every 15 minutes. A singleton queue, so two
 * overlapping runs never race on the same page; a rerun records nothing new
 * (unchanged last_event is skipped and the claim is already taken).
 */
export async function registerDeliveryEventJobs(deps: Deps) {
  await deps.boss.createQueue(POLL_EVENTS_QUEUE, { policy: 'singleton', retryLimit: 0, expireInSeconds: 600 });
  await deps.boss.work(POLL_EVENTS_QUEUE, async () => {
    const result = await pollResendEvents({ ...raiseAlertDeps(deps), now: deps.clock.now() });
    const line = { event: 'email_events_poll', ...result };
    if (result.ok || result.truncated) deps.log.info(line, 'provider-A events polled');
    else deps.log.warn(line, 'provider-A events poll failed');
  });
  await deps.boss.schedule(POLL_EVENTS_QUEUE, '*/15 * * * *', null, { tz: 'UTC' });
}
