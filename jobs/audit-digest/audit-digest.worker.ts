import type { Deps } from '../../server/deps.ts';
import { sendAuditDigest, type Cadence } from '../../server/audit-digest/send-audit-digest.ts';

export const AUDIT_DIGEST_QUEUES = { daily: 'audit-digest.daily', weekly: 'audit-digest.weekly' } as const;

/** Daily at 14:00 UTC and Mondays at 14:00 UTC. With INTERNAL_SEND_EMAIL_URL unset a run logs an error and sends nothing. */
export async function registerAuditDigestJobs(deps: Deps) {
  const schedules: [Cadence, string][] = [
    ['daily', '0 14 * * *'],
    ['weekly', '0 14 * * 1'],
  ];
  for (const [cadence, cron] of schedules) {
    const queue = AUDIT_DIGEST_QUEUES[cadence];
    await deps.boss.createQueue(queue, { policy: 'singleton', retryLimit: 0 });
    await deps.boss.work(queue, async () => {
      if (!deps.config.alerts.internalSendEmailUrl) {
        deps.log.error({ event: 'audit_digest_unconfigured', cadence }, 'INTERNAL_SEND_EMAIL_URL is not set');
        return;
      }
      const result = await sendAuditDigest({ ...deps, now: deps.clock.now() }, cadence);
      if (result.ok) deps.log.info({ event: 'audit_digest', ...result }, 'audit digest sent');
      else deps.log.warn({ event: 'audit_digest', ...result }, 'audit digest partly failed');
    });
    await deps.boss.schedule(queue, cron, null, { tz: 'UTC' });
  }
}
