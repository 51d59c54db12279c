import { z } from 'zod';
import type { DatabaseTransactionConnection } from 'slonik';
import { sql } from '../db/database.ts';
import { takeRateLimits } from '../rate-limit/take-rate-limit.ts';
import { enqueueResultMails } from '../result-mail/result-mail.jobs.ts';
import { usersWantingResultMail } from '../result-mail/result-mail.queries.ts';
import { buildConversionEvent, type ConversionEvent, type FileFacts } from './webhook-payload.ts';
import { webhookRateLimits } from './webhook-limits.ts';
import type { WebhookDeps } from './webhook-runtime.ts';
import { enqueueFirstAttempts, wakeDeliveryWorkers } from './webhooks.jobs.ts';
import { findSubscribedEndpoints, insertDeliveries, type NewDelivery, type SubscribedEndpoint } from './webhooks.queries.ts';

/** A claimed outbox row with its file's facts (null when the file is gone). */
const ClaimedRow = z.object({
  id: z.coerce.number(),
  type: z.string(),
  aggregateId: z.uuid().nullable(),
  payload: z.unknown(),
  createdAt: z.date(),
  userId: z.uuid().nullable(),
  tenantId: z.uuid().nullable(),
  originalName: z.string().nullable(),
  pages: z.number().nullable(),
});

/** Events one dispatch transaction takes: big enough to keep up with a burst, small enough to commit in well under a second. */
export const DISPATCH_BATCH = 500;

function hears(endpoint: SubscribedEndpoint, event: ConversionEvent): boolean {
  if (!endpoint.events.includes(event.type)) return false;
  return endpoint.tenantId === null ? endpoint.ownerId === event.userId : endpoint.tenantId === event.tenantId;
}

/**
 * Turns committed outbox events into deliveries, one per (event, endpoint
 * that hears it), and marks the events dispatched, all in one transaction.
 * Rows are claimed with SKIP LOCKED and the (event, endpoint) pair is unique,
 * so any number of dispatchers deliver each event to each endpoint once.
 * A delivery within its endpoint's, user's and tenant's hourly limits is
 * queued for its first attempt at once; over a limit (or behind others
 * already waiting) it joins the endpoint's overflow queue; with 100 already
 * waiting it is dropped, and the minute drain emails the owner its link.
 */
export async function dispatchOutboxEvents(deps: WebhookDeps, options: { batchSize?: number } = {}): Promise<{ events: number; queued: number }> {
  await deps.queuesReady();
  const now = deps.clock.now();
  const outcome = await deps.db.transaction(async (tx) => {
    // Claimed and marked in one statement; the mark commits (or rolls back) with the deliveries.
    const rows = await tx.any(sql.type(ClaimedRow)`
      with claimed as (
        update outbox_events o set dispatched_at = now()
         where o.id in (select id from outbox_events where dispatched_at is null order by id limit ${options.batchSize ?? DISPATCH_BATCH} for update skip locked)
        returning o.id, o.type, o.aggregate_id, o.payload, o.created_at)
      select c.id, c.type, c.aggregate_id as "aggregateId", c.payload, c.created_at as "createdAt",
             f.owner_id as "userId", coalesce(f.tenant_id, u.tenant_id) as "tenantId", f.original_name as "originalName", f.page_count as pages
        from claimed c left join files f on f.id = c.aggregate_id left join users u on u.id = f.owner_id
       order by c.id`);
    if (rows.length === 0) return { events: 0, queued: 0 };
    const link = { publicBaseUrl: deps.publicBaseUrl, downloadSecret: deps.downloadSecret, now };
    const events = rows.flatMap((row) => {
      const facts: FileFacts | undefined = row.userId
        ? { userId: row.userId, tenantId: row.tenantId, originalName: row.originalName ?? '', pages: row.pages }
        : undefined;
      return buildConversionEvent(row, facts, link) ?? [];
    });
    const endpoints = await findSubscribedEndpoints(
      tx,
      [...new Set(events.map((event) => event.userId))],
      [...new Set(events.flatMap((event) => (event.tenantId ? [event.tenantId] : [])))],
    );
    const waiting = new Map(endpoints.map((endpoint) => [endpoint.id, endpoint.waiting]));
    const deliveries: NewDelivery[] = [];
    for (const event of events) {
      for (const endpoint of endpoints) {
        if (!hears(endpoint, event)) continue;
        const who = { endpointId: endpoint.id, userId: event.userId, tenantId: event.tenantId };
        const status = await admit(tx, deps, who, waiting, now);
        deliveries.push({ ...who, eventId: event.eventId, event: event.type, fileId: event.fileId, body: event.body, status });
      }
    }
    // Result mail rides on the same claim: an event dispatched once queues its mail once.
    await enqueueResultMails(deps.boss, tx, rows, (userIds) => usersWantingResultMail(tx, userIds));
    const inserted = await insertDeliveries(tx, deliveries);
    const pending = inserted.filter((delivery) => delivery.status === 'pending');
    await enqueueFirstAttempts(
      deps.boss,
      tx,
      pending.map((delivery) => delivery.id),
    );
    return { events: rows.length, queued: pending.length };
  });
  if (outcome.queued > 0) wakeDeliveryWorkers(deps.boss);
  return outcome;
}

/**
 * Whether a new delivery goes now, waits in overflow, or is dropped. An
 * endpoint with deliveries already waiting keeps them in order: the new one
 * queues behind them (the drain releases them oldest first).
 */
async function admit(
  tx: DatabaseTransactionConnection,
  deps: WebhookDeps,
  who: { endpointId: string; userId: string; tenantId: string | null },
  waiting: Map<string, number>,
  now: Date,
): Promise<NewDelivery['status']> {
  const queued = waiting.get(who.endpointId) ?? 0;
  if (queued === 0) {
    const decision = await takeRateLimits(tx, webhookRateLimits(deps.policy, who), now);
    if (decision.allowed) return 'pending';
  }
  if (queued >= deps.policy.overflowCap) return 'dropped';
  waiting.set(who.endpointId, queued + 1);
  return 'overflow';
}
