import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { Boss } from '../queue/boss.ts';
import { EmailAttachment, SendRequest } from './types.ts';

/**
 * The deferred-retry queue (specification: "Deferred retry"). An ambiguous
 * attempt is retried with the same idempotency key on the same provider after
 * 2 minutes; an ambiguous retry waits 10, then 15 minutes; the attempt after
 * that is logged `failed` ('defer failed'). Each wait is a new job with
 * `startAfter`, so pg-boss's own retries stay free for crashes: a worker that
 * dies leaves the job active until it expires, it is received again, and the
 * third failed receive moves it to the dead-letter queue.
 */
export const DEFER_DELAYS_SECONDS = [2 * 60, 10 * 60, 15 * 60] as const;

/** Receives of one job before it is dead-lettered (1 + retryLimit). */
export const DEFER_RECEIVE_LIMIT = 3;

/** "Messages over about 250 KB cannot be queued" (the SQS limit the specification inherits). */
const DEFER_MAX_PAYLOAD_BYTES = 256 * 1024;

const DEFER_QUEUE_OPTIONS = {
  retryLimit: DEFER_RECEIVE_LIMIT - 1,
  // A crashed receive comes back after a minute, like a visibility timeout.
  retryDelay: 60,
  // Longer than one retry can take: two provider attempts of 15 s plus two 2.5 s hooks.
  expireInSeconds: 120,
  retentionSeconds: 24 * 60 * 60,
};

export type DeferQueues = { queue: string; deadLetter: string };

/**
 * EMAIL_DEFER_QUEUE names a pg-boss queue. EMAIL_DEFER_QUEUE_URL (the
 * specification's name) is accepted too; given an SQS-style URL we use its
 * last path segment as the queue name.
 */
export function deferQueueNames(config: Config): DeferQueues | undefined {
  const configured = config.email.deferQueue;
  if (!configured) return undefined;
  const base = /^[a-z][a-z0-9+.-]*:\/\//i.test(configured) ? (new URL(configured).pathname.split('/').filter(Boolean).pop() ?? 'email-deferred') : configured;
  const queue = base.replace(/[^\w.\-/]/g, '_');
  return { queue, deadLetter: `${queue}.dead-letter` };
}

export async function createDeferQueues(boss: Boss, queues: DeferQueues): Promise<void> {
  // The dead-letter queue must exist before a queue can name it.
  await boss.createQueue(queues.deadLetter, { retentionSeconds: 14 * 24 * 60 * 60 });
  await boss.createQueue(queues.queue, { ...DEFER_QUEUE_OPTIONS, deadLetter: queues.deadLetter });
}

/** A queued retry: the request as the caller gave it (pinned, keyed, attachments in base64) and where it stands. */
export const DeferredSend = z.object({
  request: SendRequest.safeExtend({ attachments: z.array(EmailAttachment.extend({ content: z.string() })).optional() }),
  /** The first attempt's send-log id: the folio_log_id every attempt carries to the provider. */
  correlationId: z.uuid(),
  /** The attempt this job makes (2 for the first retry). */
  attempt: z.number().int().min(2),
  failedOver: z.boolean(),
});
export type DeferredSend = z.infer<typeof DeferredSend>;

/**
 * A stable UUID (version 8) from text: the send-log id of attempt N of a send
 * and the job id of its retry are derived, so a handler that runs twice writes
 * the same row and queues the same job.
 */
export function derivedUuid(text: string): string {
  const hex = createHash('sha256').update(text).digest('hex');
  const variant = ((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function attemptLogId(correlationId: string, attempt: number): string {
  return attempt === 1 ? correlationId : derivedUuid(`email-attempt:${correlationId}:${attempt}`);
}

export type EnqueueOutcome = { queued: true } | { queued: false; error: string };

/** Queues attempt `job.attempt` after the delay its predecessor earned; refuses payloads over the cap. */
export async function enqueueDeferredSend(boss: Boss, queues: DeferQueues, job: DeferredSend): Promise<EnqueueOutcome> {
  const delay = DEFER_DELAYS_SECONDS[job.attempt - 2];
  if (delay === undefined) return { queued: false, error: 'defer failed' };
  const bytes = Buffer.byteLength(JSON.stringify(job));
  if (bytes > DEFER_MAX_PAYLOAD_BYTES) return { queued: false, error: `message too large to defer (${bytes} bytes, limit ${DEFER_MAX_PAYLOAD_BYTES})` };
  await boss.send(queues.queue, job, { id: derivedUuid(`email-defer:${job.correlationId}:${job.attempt}`), startAfter: delay });
  return { queued: true };
}
