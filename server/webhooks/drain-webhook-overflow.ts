import { z } from 'zod';
import { AnyRow, sql } from '../db/database.ts';
import { takeRateLimits } from '../rate-limit/take-rate-limit.ts';
import { webhookRateLimits } from './webhook-limits.ts';
import type { WebhookDeps } from './webhook-runtime.ts';
import { enqueueFirstAttempts, wakeDeliveryWorkers } from './webhooks.jobs.ts';
import { failUnsentDeliveries } from './webhooks.queries.ts';

const Waiting = z.object({ id: z.uuid(), userId: z.uuid().nullable(), tenantId: z.uuid().nullable() });

/**
 * The minute drain of the overflow queues: for each endpoint, its waiting
 * deliveries, oldest first, are released for their first attempt while its
 * limits allow (the first refusal stops that endpoint until the next minute,
 * so order is kept). Deliveries waiting for an endpoint that was disabled
 * meanwhile end failed. Returns how many were released and failed.
 */
export async function drainWebhookOverflow(deps: WebhookDeps): Promise<{ released: number; failed: number }> {
  await deps.queuesReady();
  const endpoints = await deps.db.any(sql.type(z.object({ endpointId: z.uuid(), enabled: z.boolean() }))`
    select e.id as "endpointId", e.enabled from webhook_endpoints e
     where exists (select 1 from webhook_deliveries d where d.endpoint_id = e.id and d.status = 'overflow')`);
  let released = 0;
  let failed = 0;
  for (const { endpointId, enabled } of endpoints) {
    if (!enabled) {
      failed += await failUnsentDeliveries(deps.db, { endpointId }, 'the endpoint was disabled while this delivery waited in the overflow queue');
      continue;
    }
    released += await deps.db.transaction(async (tx) => {
      const now = deps.clock.now();
      const waiting = await tx.any(sql.type(Waiting)`
        select id, user_id as "userId", tenant_id as "tenantId" from webhook_deliveries
         where endpoint_id = ${endpointId} and status = 'overflow'
         order by created_at, event_id, id limit ${deps.policy.overflowCap}
           for update skip locked`);
      const go: string[] = [];
      for (const delivery of waiting) {
        const decision = await takeRateLimits(tx, webhookRateLimits(deps.policy, { endpointId, userId: delivery.userId, tenantId: delivery.tenantId }), now);
        if (!decision.allowed) break;
        go.push(delivery.id);
      }
      if (go.length === 0) return 0;
      await tx.query(sql.type(AnyRow)`
        update webhook_deliveries set status = 'pending', updated_at = now() where id = any(${sql.array(go, 'uuid')})`);
      await enqueueFirstAttempts(deps.boss, tx, go);
      return go.length;
    });
  }
  if (released > 0) wakeDeliveryWorkers(deps.boss);
  return { released, failed };
}
