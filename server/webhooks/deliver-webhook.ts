import { derivedUuid } from '../email/email.jobs.ts';
import { bossDb } from '../conversion-jobs/boss-db.ts';
import { liveSecrets, postWebhook, type PostOutcome } from './post-webhook.ts';
import type { WebhookDeps } from './webhook-runtime.ts';
import { enqueueRetry, NOTICE_QUEUE, type NoticeJob } from './webhooks.jobs.ts';
import {
  countEndpointFailure,
  disableEndpoint,
  failUnsentDeliveries,
  loadAttemptTargets,
  recordDeliveredAttempts,
  recordDeliveryAttempt,
  type AttemptTarget,
} from './webhooks.queries.ts';

export type AttemptResult = 'delivered' | 'retrying' | 'failed' | 'skipped';

type Posted = { kind: 'done'; result: AttemptResult } | { kind: 'posted'; target: AttemptTarget; outcome: PostOutcome };

/**
 * Runs attempt N of each delivery (the queue jobs of a batch): one query loads
 * them, the POSTs run concurrently, and the deliveries that succeeded are
 * recorded together in one statement (the common case, so a burst costs a
 * few round trips per batch, not several per delivery); each failure is
 * recorded in its own transaction with what it implies (the next attempt's
 * job, the failure count, a disable). Each job's result is reported on its
 * own, so one failing job does not fail its batch. A job whose delivery is
 * gone, finished or already past attempt N is skipped, so a job received
 * twice sends at most once more (at-least-once, never a loop).
 */
/** Attempt N of one delivery (a queue job names one or more). */
export type AttemptItem = { deliveryId: string; attempt: number };

export async function attemptWebhookDeliveries(deps: WebhookDeps, jobs: AttemptItem[]): Promise<Array<PromiseSettledResult<AttemptResult>>> {
  const targets = await loadAttemptTargets(
    deps.db,
    jobs.map((job) => job.deliveryId),
  );
  const posted = await Promise.allSettled(jobs.map((job) => post(deps, job, targets.get(job.deliveryId))));
  const successes = posted.flatMap((entry) =>
    entry.status === 'fulfilled' && entry.value.kind === 'posted' && entry.value.outcome.result === 'success' ? [entry.value] : [],
  );
  const recorded = await recordDeliveredAttempts(
    deps.db,
    successes.map(({ target, outcome }) => ({ deliveryId: target.deliveryId, ...outcome })),
  );
  return Promise.allSettled(
    posted.map(async (entry): Promise<AttemptResult> => {
      if (entry.status === 'rejected') throw entry.reason;
      const value = entry.value;
      if (value.kind === 'done') return value.result;
      if (value.outcome.result === 'success') return recorded.has(value.target.deliveryId) ? 'delivered' : 'skipped';
      return recordFailure(deps, value.target, value.outcome);
    }),
  );
}

async function post(deps: WebhookDeps, job: AttemptItem, target: AttemptTarget | undefined): Promise<Posted> {
  if (target?.status !== 'pending' || target.attempts !== job.attempt - 1) return { kind: 'done', result: 'skipped' };
  if (!target.enabled) {
    await failUnsentDeliveries(deps.db, { deliveryId: target.deliveryId }, 'the endpoint was disabled before this attempt');
    return { kind: 'done', result: 'failed' };
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
  return { kind: 'posted', target, outcome };
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

async function recordFailure(deps: WebhookDeps, target: AttemptTarget, outcome: PostOutcome): Promise<AttemptResult> {
  const { policy } = deps;
  const attempts = policy.retryDelaysSeconds.length + 1;
  const retry = outcome.result === 'failure' && outcome.attempt < attempts;
  const delay = retry ? nextDelaySeconds(policy, outcome.attempt, outcome.retryAfterSeconds) : 0;
  const status = retry ? 'pending' : 'failed';
  const nextAttemptAt = retry ? new Date(outcome.startedAt.getTime() + delay * 1000) : null;
  const recorded = await deps.db.transaction(async (tx) => {
    if (!(await recordDeliveryAttempt(tx, target.deliveryId, outcome, { status, nextAttemptAt }))) return false;
    if (retry) {
      await enqueueRetry(deps.boss, tx, target.deliveryId, outcome.attempt + 1, delay);
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
  return status === 'pending' ? 'retrying' : 'failed';
}
