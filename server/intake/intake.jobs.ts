import { z } from 'zod';
import { oncePerBoss, type Boss } from '../queue/boss.ts';

/**
 * The intake queues. A message is in the store and on `intake.message` before
 * the sender hears "250 OK"; everything after that is a pg-boss job, so a
 * crash at any point leaves a job that is received again.
 */
export const INTAKE_MESSAGE_QUEUE = 'intake.message';
/** A conversion of a mailed PDF ended: reply, log the job, queue the cleanup. */
export const INTAKE_FINISH_QUEUE = 'intake.finish';
export const INTAKE_CLEANUP_QUEUE = 'intake.cleanup';
/** Every minute: conversions that ended while no process was listening (the safety net of the LISTEN path). */
export const INTAKE_SWEEP_QUEUE = 'intake.sweep';
/** Jobs of the three queues above that failed every receive; the consumer marks the message failed and logs. */
export const INTAKE_DEAD_LETTER_QUEUE = 'intake.dead-letter';

export const IntakeJob = z.object({ messageId: z.uuid() });
export type IntakeJob = z.infer<typeof IntakeJob>;

const MESSAGE_POLICY = {
  // Three receives: a message that crashes the handler three times is hostile or broken, not unlucky.
  retryLimit: 2,
  retryDelay: 10,
  retryBackoff: true,
  // Parsing a 50 MB message, opening a 25 MB PDF and one reply fit well inside this.
  expireInSeconds: 10 * 60,
  deadLetter: INTAKE_DEAD_LETTER_QUEUE,
};
const FINISH_POLICY = { retryLimit: 3, retryDelay: 15, retryBackoff: true, expireInSeconds: 10 * 60, deadLetter: INTAKE_DEAD_LETTER_QUEUE };
// Deleting objects is idempotent; a store that is down for a while is tried again for about an hour.
const CLEANUP_POLICY = { retryLimit: 6, retryDelay: 60, retryBackoff: true, expireInSeconds: 5 * 60 };

/** Idempotent; both processes call it (the listener enqueues before any worker may have run). */
async function createIntakeQueues(boss: Boss): Promise<void> {
  await boss.createQueue(INTAKE_DEAD_LETTER_QUEUE, { retentionSeconds: 14 * 24 * 60 * 60 });
  await boss.createQueue(INTAKE_MESSAGE_QUEUE, MESSAGE_POLICY);
  // exclusive: one queued-or-active job per singleton key (the message), however many times it is asked for.
  await boss.createQueue(INTAKE_FINISH_QUEUE, { ...FINISH_POLICY, policy: 'exclusive' });
  await boss.createQueue(INTAKE_CLEANUP_QUEUE, { ...CLEANUP_POLICY, policy: 'exclusive' });
  await boss.createQueue(INTAKE_SWEEP_QUEUE, { policy: 'singleton', retryLimit: 0 });
}

/** createIntakeQueues once per pg-boss instance. */
export const ensureIntakeQueues = oncePerBoss(createIntakeQueues);

type SendOptions = { db?: { executeSql: (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }> } };

export function enqueueIntakeMessage(boss: Boss, messageId: string, options: SendOptions = {}) {
  return boss.send(INTAKE_MESSAGE_QUEUE, { messageId } satisfies IntakeJob, { ...MESSAGE_POLICY, ...options });
}

/** The LISTEN path, the sweep and a retry may all ask; the singleton key keeps one job per message in the queue. */
export function enqueueIntakeFinish(boss: Boss, messageId: string) {
  return boss.send(INTAKE_FINISH_QUEUE, { messageId } satisfies IntakeJob, { ...FINISH_POLICY, singletonKey: messageId });
}

export function enqueueIntakeCleanup(boss: Boss, messageId: string, options: SendOptions = {}) {
  return boss.send(INTAKE_CLEANUP_QUEUE, { messageId } satisfies IntakeJob, { ...CLEANUP_POLICY, singletonKey: messageId, ...options });
}
