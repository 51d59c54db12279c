import { derivedUuid } from '../email/email.jobs.ts';
import { bossDb } from '../conversion-jobs/boss-db.ts';
import { attemptJobId } from './dispatch-outbox-events.ts';
import { liveSecrets, postWebhook, type PostOutcome } from './post-webhook.ts';
import type { WebhookDeps } from './webhook-runtime.ts';
import { DELIVER_QUEUE, NOTICE_QUEUE, type DeliverJob, type NoticeJob } from './webhooks.jobs.ts';
import {
  countEndpointFailure,
  disableEndpoint,
  failUnsentDeliveries,
  loadAttemptTargets,
  recordDeliveryAttempt,
  resetEndpointFailures,
  type AttemptTarget,
} from './webhooks.queries.ts';

export type AttemptResult = 'delivered' | 'retrying' | 'failed' | 'skipped';

/**
 * Runs attempt N of each delivery (a batch of queue jobs): one query loads
 * them, the POSTs run concurrently, each outcome commits on its own (and is
 * reported on its own, so one failing job does not fail its batch). A job
 * whose delivery is gone, finished or already past attempt N is skipped, so a
 * job received twice sends at most once more (at-least-once, never a loop).
 */
export async function attemptWebhookDeliveries(deps: WebhookDeps, jobs: DeliverJob[]): Promise<Array<PromiseSettledResult<AttemptResult>>> {
  const targets = await loadAttemptTargets(
    deps.db,
    jobs.map((job) => job.deliveryId),
  );
  return Promise.allSettled(jobs.map((job) => attemptOne(deps, job, targets.get(job.deliveryId))));
}

async function attemptOne(deps: WebhookDeps, job: DeliverJob, target: AttemptTarget | undefined): Promise<AttemptResult> {
  if (target?.status !== 'pending' || target.attempts !== job.attempt - 1) return 'skipped';
  if (!target.enabled) {
    await failUnsentDeliveries(deps.db, { deliveryId: target.deliveryId }, 'the endpoint was disabled before this attempt');
    return 'failed';
  }
  const outcome = await postWebhook(deps, {
    url: target.url,
    endpointId: target.endpointId,
    deliveryId: target.deliveryId,
    event: target.event,
    body: target.body,
    secrets: liveSecrets(deps, target, deps.clock.now()),
    attempt: job.attempt,
  });
  return recordOutcome(deps, target, outcome);
}

/**
 * The wait before the next attempt: its scheduled delay, or longer when a 429
 * asked for it with Retry-After, but never past the schedule's longest wait
 * (5 minutes), so a receiver cannot stretch the three attempts for ever.
 */
function nextDelaySeconds(policy: WebhookDeps['policy'], attempt: number, retryAfterSeconds: number | undefined): number {
  const scheduled = policy.retryDelaysSeconds[attempt - 1]!;
  if (retryAfterSeconds === undefined) return scheduled;
  return Math.min(Math.max(scheduled, retryAfterSeconds), Math.max(...policy.retryDelaysSeconds));
}

async function recordOutcome(deps: WebhookDeps, target: AttemptTarget, outcome: PostOutcome): Promise<AttemptResult> {
  const { policy } = deps;
  const attempts = policy.retryDelaysSeconds.length + 1;
  const retry = outcome.result === 'failure' && outcome.attempt < attempts;
  const delay = retry ? nextDelaySeconds(policy, outcome.attempt, outcome.retryAfterSeconds) : 0;
  const status = outcome.result === 'success' ? 'delivered' : retry ? 'pending' : 'failed';
  const nextAttemptAt = retry ? new Date(outcome.startedAt.getTime() + delay * 1000) : null;
  const recorded = await deps.db.transaction(async (tx) => {
    if (!(await recordDeliveryAttempt(tx, target.deliveryId, outcome, { status, nextAttemptAt }))) return false;
    if (retry) {
      const next: DeliverJob = { deliveryId: target.deliveryId, attempt: outcome.attempt + 1 };
      await deps.boss.send(DELIVER_QUEUE, next, { id: attemptJobId(target.deliveryId, next.attempt), startAfter: delay, db: bossDb(tx) });
    } else if (outcome.result === 'success') {
      await resetEndpointFailures(tx, target.endpointId);
    } else {
      // 410 disables at once; otherwise this is one more delivery that exhausted its retries.
      const reason =
        outcome.result === 'gone'
          ? 'gone'
          : ((await countEndpointFailure(tx, target.endpointId)) ?? 0) >= policy.disableAfterFailures
            ? 'consecutive_failures'
            : undefined;
      const disabledAt = reason ? await disableEndpoint(tx, target.endpointId, reason) : null;
      if (reason && disabledAt) {
        const notice: NoticeJob = { kind: 'disabled', endpointId: target.endpointId, reason, disabledAt: disabledAt.toISOString() };
        await deps.boss.send(NOTICE_QUEUE, notice, { id: derivedUuid(`webhook-disabled:${target.endpointId}:${disabledAt.toISOString()}`), db: bossDb(tx) });
      }
    }
    return true;
  });
  if (!recorded) return 'skipped';
  return status === 'delivered' ? 'delivered' : status === 'pending' ? 'retrying' : 'failed';
}
