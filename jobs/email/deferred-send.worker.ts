import type { Deps } from '../../server/deps.ts';
import type { EmailService } from '../../server/email/email-service.ts';
import { createDeferQueues, deferQueueNames, DeferredSend } from '../../server/email/email.jobs.ts';

type QueuedJob = { id: string; data: unknown };

/**
 * One receive of a deferred send: the same-key retry on the pinned provider.
 * A bug or a crash here fails the receive; pg-boss receives it again and
 * dead-letters it after the third.
 */
export async function handleDeferredSend(email: EmailService, job: QueuedJob) {
  return email.retryDeferred(DeferredSend.parse(job.data));
}

/** The dead-letter consumer: counts (the "message in the deferred dead-letter queue" alarm), logs, records `failed`. */
export async function handleDeadLetteredSend(deps: Pick<Deps, 'log' | 'metrics'>, email: EmailService, job: QueuedJob) {
  const parsed = DeferredSend.safeParse(job.data);
  if (!parsed.success) {
    deps.metrics.emailDeferredDeadLetters.inc();
    deps.log.error({ event: 'email_deferred_dead_letter', jobId: job.id }, 'unreadable deferred email reached the dead-letter queue');
    return;
  }
  await email.recordDeadLetter(parsed.data);
}

/** Registers the deferred-retry worker and its dead-letter consumer when EMAIL_DEFER_QUEUE is set. */
export async function registerEmailJobs(deps: Pick<Deps, 'config' | 'boss' | 'log' | 'metrics' | 'email'>) {
  const queues = deferQueueNames(deps.config);
  if (!queues) return;
  const { email } = deps;
  await createDeferQueues(deps.boss, queues);
  await deps.boss.work(queues.queue, { batchSize: 1 }, async ([job]) => {
    if (job) await handleDeferredSend(email, job);
  });
  await deps.boss.work(queues.deadLetter, { batchSize: 1 }, async ([job]) => {
    if (job) await handleDeadLetteredSend(deps, email, job);
  });
}
