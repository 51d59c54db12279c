import type { Deps } from '../server/deps.ts';
import { registerCreditJobs } from './credits/expire-holds.worker.ts';
import { registerEmailJobs } from './email/deferred-send.worker.ts';
import { registerDeliveryEventJobs } from './delivery-events/poll.worker.ts';
import { registerAuditDigestJobs } from './audit-digest/audit-digest.worker.ts';
import { registerConversionJobs } from './conversion/conversion.worker.ts';
import { registerRateLimitJobs } from './rate-limit/sweep-rate-limits.worker.ts';
import { registerIntakeJobs } from './intake/intake.worker.ts';
import { registerWebhookJobs } from './webhooks/webhooks.worker.ts';
import { registerStorageJobs } from './storage/storage.worker.ts';
import { registerResultMailJobs } from './result-mail/result-mail.worker.ts';
import { registerAlarmJobs } from './alarms/alarms.worker.ts';
import { registerOutreachJobs } from './outreach/outreach.worker.ts';
import { registerFlyerJobs } from './flyers/flyers.worker.ts';

/**
 * Every queue, worker and schedule of the worker process. Each area exports a
 * `register...` function from jobs/<area>/; the order does not matter.
 */
const registrations: Array<(deps: Deps) => Promise<void>> = [
  registerCreditJobs,
  registerEmailJobs,
  registerDeliveryEventJobs,
  registerAuditDigestJobs,
  registerRateLimitJobs,
  registerConversionJobs,
  async (deps) => void (await registerIntakeJobs(deps)),
  async (deps) => void (await registerWebhookJobs(deps)),
  async (deps) => void (await registerStorageJobs(deps)),
  registerResultMailJobs,
  (deps) => registerAlarmJobs(deps),
  registerOutreachJobs,
  registerFlyerJobs,
];

export async function registerWorkers(deps: Deps): Promise<void> {
  for (const register of registrations) await register(deps);
}
