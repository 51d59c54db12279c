import type { RateLimit } from '../rate-limit/take-rate-limit.ts';
import type { WebhookPolicy } from './webhooks.jobs.ts';

const HOUR_MS = 60 * 60 * 1000;

/**
 * The three limits a delivery counts against at once (taken all-or-none):
 * its endpoint, the user whose conversion it tells of, and that user's
 * tenant. A limit set to Infinity is lifted (the benchmark does this).
 */
export function webhookRateLimits(policy: WebhookPolicy, who: { endpointId: string; userId: string | null; tenantId: string | null }): RateLimit[] {
  const { endpointPerHour, userPerHour, tenantPerHour } = policy.limits;
  const limits: RateLimit[] = [];
  if (Number.isFinite(endpointPerHour)) limits.push({ key: `webhook:endpoint:${who.endpointId}`, limit: endpointPerHour, windowMs: HOUR_MS });
  if (who.userId && Number.isFinite(userPerHour)) limits.push({ key: `webhook:user:${who.userId}`, limit: userPerHour, windowMs: HOUR_MS });
  if (who.tenantId && Number.isFinite(tenantPerHour)) limits.push({ key: `webhook:tenant:${who.tenantId}`, limit: tenantPerHour, windowMs: HOUR_MS });
  return limits;
}
