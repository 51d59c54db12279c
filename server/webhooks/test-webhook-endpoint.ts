import { z } from 'zod';
import type { AuthUser } from '../auth/users.ts';
import { enforceRateLimits } from '../rate-limit/take-rate-limit.ts';
import { requireManageableEndpoint } from './manage-webhook-endpoints.ts';
import type { WebhookPayload } from './webhook-payload.ts';
import { liveSecrets, postWebhook } from './post-webhook.ts';
import { webhookRateLimits } from './webhook-limits.ts';
import type { WebhookDeps } from './webhook-runtime.ts';
import { insertDeliveries, loadAttemptTargets, recordDeliveryAttempt } from './webhooks.queries.ts';

export const WebhookTestResult = z.object({
  deliveryId: z.uuid(),
  delivered: z.boolean(),
  httpStatus: z.number().int().nullable(),
  latencyMs: z.number().int().nullable(),
  responseBody: z.string().nullable(),
  error: z.string().nullable(),
});

/**
 * The test button (`POST /api/webhooks/:id/test`): one signed `ping`, sent
 * now and reported. It counts against the same hourly limits as deliveries
 * (a refusal is 429 with Retry-After), is recorded in the history, is never
 * retried, and never moves the endpoint's failure count or disables it, so an
 * owner can test a disabled endpoint before re-enabling it.
 */
export async function testWebhookEndpoint(deps: WebhookDeps, user: AuthUser, endpointId: string): Promise<z.infer<typeof WebhookTestResult>> {
  const endpoint = await requireManageableEndpoint(deps, user, endpointId);
  const now = deps.clock.now();
  await enforceRateLimits(
    deps.db,
    webhookRateLimits(deps.policy, { endpointId, userId: user.id, tenantId: endpoint.tenantId ?? user.tenantId }),
    now,
    'Too many webhook deliveries to this endpoint; try the test again later',
  );
  const payload: WebhookPayload = {
    event: 'ping',
    fileId: null,
    userId: user.id,
    tenantId: endpoint.tenantId,
    timestamp: now.toISOString(),
    data: { endpointId, message: 'Test delivery from Folio' },
  };
  const [delivery] = await insertDeliveries(deps.db, [
    { endpointId, eventId: null, event: 'ping', fileId: null, userId: user.id, tenantId: endpoint.tenantId, body: JSON.stringify(payload), status: 'pending' },
  ]);
  const target = (await loadAttemptTargets(deps.db, [delivery!.id])).get(delivery!.id)!;
  const outcome = await postWebhook(deps, {
    url: target.url,
    endpointId,
    deliveryId: target.deliveryId,
    event: 'ping',
    body: target.body,
    secrets: liveSecrets(deps, target, now),
    attempt: 1,
  });
  const delivered = outcome.result === 'success';
  await deps.db.transaction((tx) => recordDeliveryAttempt(tx, target.deliveryId, outcome, { status: delivered ? 'delivered' : 'failed', nextAttemptAt: null }));
  return {
    deliveryId: target.deliveryId,
    delivered,
    httpStatus: outcome.httpStatus,
    latencyMs: outcome.latencyMs,
    responseBody: outcome.responseBody,
    error: outcome.error,
  };
}
