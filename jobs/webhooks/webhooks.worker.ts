import type { Deps } from '../../server/deps.ts';
import { attemptWebhookDeliveries } from '../../server/webhooks/deliver-webhook.ts';
import { drainWebhookOverflow } from '../../server/webhooks/drain-webhook-overflow.ts';
import { startOutboxDispatcher, type OutboxDispatcher } from '../../server/webhooks/outbox-dispatcher.ts';
import { sendDisabledNotice, sendDropNotices } from '../../server/webhooks/send-webhook-notices.ts';
import { webhookDeps as buildWebhookDeps, type WebhookDeps, type WebhookOverrides } from '../../server/webhooks/webhook-runtime.ts';
import { DELIVER_QUEUE, DeliverJob, DRAIN_QUEUE, NOTICE_QUEUE, NoticeJob } from '../../server/webhooks/webhooks.jobs.ts';

/**
 * Delivery jobs (a first-attempt job names up to 50 deliveries) are fetched
 * two at a time and their POSTs run concurrently; several batches are in
 * flight at once so one slow receiver holds up only the batch it is in, for
 * at most its timeout.
 */
const DELIVERY_WORK = { batchSize: 2, localConcurrency: 6, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true, perJobResults: true } as const;

export type WebhookWorkerOptions = {
  overrides?: WebhookOverrides;
  /** The minute drain schedule (tests drive the drain themselves). */
  schedule?: boolean;
  /** The outbox listener (tests that dispatch by hand turn it off). */
  dispatcher?: boolean;
};

export type WebhookWorkers = { deps: WebhookDeps; dispatcher?: OutboxDispatcher };

/**
 * The webhook side of a worker process: the outbox dispatcher (LISTEN plus a
 * 5 s backstop poll), the attempt worker, the owner-notice worker and the
 * minute overflow drain (a pg-boss schedule, so one process runs it).
 */
export async function registerWebhookJobs(deps: Deps, options: WebhookWorkerOptions = {}): Promise<WebhookWorkers> {
  const webhookDeps = buildWebhookDeps(deps, options.overrides);
  const noticeDeps = { ...webhookDeps, email: deps.email };
  await webhookDeps.queuesReady();

  await deps.boss.work(DELIVER_QUEUE, DELIVERY_WORK, async (jobs) => {
    const parsed = jobs.map((job) => ({ id: job.id, data: DeliverJob.safeParse(job.data) }));
    const items = parsed.flatMap((job) =>
      job.data.success ? job.data.data.deliveryIds.map((deliveryId) => ({ jobId: job.id, deliveryId, attempt: job.data.data!.attempt })) : [],
    );
    const results = await attemptWebhookDeliveries(webhookDeps, items);
    // A job is done when each of its deliveries was attempted and recorded (or skipped); one that could
    // not be (a database error) fails the job, whose retry skips what was recorded.
    const failures = new Map<string, unknown>();
    results.forEach((result, index) => {
      if (result.status === 'rejected') failures.set(items[index]!.jobId, result.reason);
    });
    return parsed.map((job) => {
      if (!job.data.success) return { id: job.id, status: 'failed' as const, output: { error: 'unreadable job payload' } };
      const failure = failures.get(job.id);
      if (failure === undefined) return { id: job.id, status: 'completed' as const };
      deps.log.error({ err: failure, jobId: job.id }, 'webhook attempt failed to run; the queue retries it');
      return { id: job.id, status: 'failed' as const };
    });
  });
  await deps.boss.work(NOTICE_QUEUE, { batchSize: 1 }, async ([job]) => {
    if (job) await sendDisabledNotice(noticeDeps, NoticeJob.parse(job.data), job.id);
  });
  await deps.boss.work(DRAIN_QUEUE, { batchSize: 1 }, async () => {
    const drained = await drainWebhookOverflow(webhookDeps);
    const reported = await sendDropNotices(noticeDeps);
    if (drained.released + drained.failed + reported > 0) deps.log.info({ ...drained, dropsReported: reported }, 'webhook overflow drained');
  });
  if (options.schedule !== false) await deps.boss.schedule(DRAIN_QUEUE, '* * * * *');

  if (options.dispatcher === false) return { deps: webhookDeps };
  const dispatcher = startOutboxDispatcher({ ...webhookDeps, databaseUrl: deps.databaseUrl });
  // pg-boss stops with the process (runtime.close); the listener goes with it.
  deps.boss.once('stopped', () => void dispatcher.stop());
  return { deps: webhookDeps, dispatcher };
}
