import type { DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { bossDb } from '../conversion-jobs/boss-db.ts';
import { derivedUuid } from '../email/email.jobs.ts';
import type { Boss } from '../queue/boss.ts';

/**
 * The webhook queues and the numbers of the specification's "Delivery
 * semantics" and limits table, each with its reason.
 */

/**
 * Attempts of deliveries. First attempts go out in groups (one job for up to
 * 50 deliveries committed together: a burst costs a queue job per 50, not per
 * delivery); each retry is a job of its own, with an id derived from
 * (delivery, attempt), so it is queued once.
 */
export const DELIVER_QUEUE = 'webhooks.deliver';
/** Emails to an endpoint's owner: disabled after failures or a 410. */
export const NOTICE_QUEUE = 'webhooks.notice';
/** Every minute: overflowed deliveries that fit the limits again go out; drops are emailed. */
export const DRAIN_QUEUE = 'webhooks.drain-overflow';

export const WEBHOOK_POLICY = {
  /** "Success: any 2xx within 10 seconds." */
  timeoutMs: 10_000,
  /** "3 attempts: immediate, +1 minute, +5 minutes": the wait before attempt 2 and attempt 3, after the previous one failed. */
  retryDelaysSeconds: [60, 300],
  /** "after 10 consecutive exhausted-retry failures" the endpoint is disabled and its owner emailed. */
  disableAfterFailures: 10,
  /** "Webhook secret rotation overlap: 1 hour." */
  rotationOverlapMs: 60 * 60 * 1000,
  /** "Webhook overflow queue: 100 per endpoint." */
  overflowCap: 100,
  /** "60 per hour per endpoint, 100 per hour per user, 500 per hour per tenant." */
  limits: { endpointPerHour: 60, userPerHour: 100, tenantPerHour: 500 },
  /** Stored and shown: at most 1 KB of what the receiver answered. */
  responseBodyBytes: 1024,
  /** Endpoints one user (or one tenant) may have: enough for every real use, bounded. */
  maxEndpointsPerScope: 20,
} as const;

export type WebhookPolicy = {
  timeoutMs: number;
  retryDelaysSeconds: readonly number[];
  disableAfterFailures: number;
  rotationOverlapMs: number;
  overflowCap: number;
  limits: { endpointPerHour: number; userPerHour: number; tenantPerHour: number };
  responseBodyBytes: number;
  maxEndpointsPerScope: number;
};

const ATTEMPTS = WEBHOOK_POLICY.retryDelaysSeconds.length + 1;

const FIRST_ATTEMPT_GROUP = 50;

export const DeliverJob = z.object({ deliveryIds: z.array(z.uuid()).min(1).max(FIRST_ATTEMPT_GROUP), attempt: z.number().int().min(1).max(ATTEMPTS) });
export type DeliverJob = z.infer<typeof DeliverJob>;

/** Queues the first attempt of these deliveries in the caller's transaction. */
export async function enqueueFirstAttempts(boss: Boss, tx: DatabaseTransactionConnection, deliveryIds: string[]): Promise<void> {
  const jobs: Array<{ data: DeliverJob }> = [];
  for (let start = 0; start < deliveryIds.length; start += FIRST_ATTEMPT_GROUP) {
    jobs.push({ data: { deliveryIds: deliveryIds.slice(start, start + FIRST_ATTEMPT_GROUP), attempt: 1 } });
  }
  if (jobs.length > 0) await boss.insert(DELIVER_QUEUE, jobs, { db: bossDb(tx) });
}

/** Queues attempt N (> 1) of one delivery after `delaySeconds`, once, in the caller's transaction. */
export async function enqueueRetry(boss: Boss, tx: DatabaseTransactionConnection, deliveryId: string, attempt: number, delaySeconds: number): Promise<void> {
  const job: DeliverJob = { deliveryIds: [deliveryId], attempt };
  await boss.send(DELIVER_QUEUE, job, { id: derivedUuid(`webhook-attempt:${deliveryId}:${attempt}`), startAfter: delaySeconds, db: bossDb(tx) });
}

export const NoticeJob = z.object({
  kind: z.literal('disabled'),
  endpointId: z.uuid(),
  reason: z.enum(['consecutive_failures', 'gone']),
  /** Which disable this notice is for: a re-enabled and again disabled endpoint gets a notice per disable. */
  disabledAt: z.iso.datetime(),
});
export type NoticeJob = z.infer<typeof NoticeJob>;

/**
 * A crashed attempt (a killed worker) comes back after its job expires: one
 * attempt takes at most the 10 s timeout plus two short transactions.
 */
const DELIVER_QUEUE_OPTIONS = { retryLimit: 2, retryDelay: 30, expireInSeconds: 60, retentionSeconds: 24 * 60 * 60 };

export async function createWebhookQueues(boss: Boss): Promise<void> {
  await boss.createQueue(DELIVER_QUEUE, DELIVER_QUEUE_OPTIONS);
  await boss.createQueue(NOTICE_QUEUE, { retryLimit: 5, retryDelay: 60, retryBackoff: true });
  await boss.createQueue(DRAIN_QUEUE, { policy: 'singleton', retryLimit: 1 });
}

/**
 * Makes this process's delivery workers fetch now instead of at their next
 * poll (an event should reach its receiver well within a second); workers of
 * other processes poll every half second.
 */
export function wakeDeliveryWorkers(boss: Boss): void {
  for (const worker of boss.getWipData()) {
    if (worker.name === DELIVER_QUEUE) boss.notifyWorker(worker.id);
  }
}
