import type { DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { bossDb } from '../conversion-jobs/boss-db.ts';
import { derivedUuid } from '../email/email.jobs.ts';
import { type Boss, oncePerBoss } from '../queue/boss.ts';

/** One job per conversion event whose owner asked for result mail. */
export const RESULT_MAIL_QUEUE = 'result-mail.send';

/** A failed send is final (the library already failed over or deferred); only a crash is retried. */
const RESULT_MAIL_POLICY = { retryLimit: 3, retryDelay: 30, retryBackoff: true, expireInSeconds: 120 } as const;

export const ResultMailJob = z.object({ eventId: z.number().int().positive() });
export type ResultMailJob = z.infer<typeof ResultMailJob>;

export const ensureResultMailQueue = oncePerBoss(async (boss) => {
  await boss.createQueue(RESULT_MAIL_QUEUE, RESULT_MAIL_POLICY);
});

/**
 * Queues result mail for the conversion events of a dispatch, in its
 * transaction, only for owners who opted in; the job checks again when it
 * runs (the setting may change, the file may be gone). The job id derives
 * from the event, so a redispatched event queues nothing new.
 */
export async function enqueueResultMails(
  boss: Boss,
  tx: DatabaseTransactionConnection,
  events: ReadonlyArray<{ id: number; type: string; userId: string | null }>,
  optedIn: (userIds: string[]) => Promise<Set<string>>,
): Promise<void> {
  const conversions = events.filter((event) => event.userId && (event.type === 'conversion.completed' || event.type === 'conversion.failed'));
  if (conversions.length === 0) return;
  const wanted = await optedIn([...new Set(conversions.map((event) => event.userId!))]);
  const jobs = conversions.filter((event) => wanted.has(event.userId!));
  if (jobs.length === 0) return;
  await ensureResultMailQueue(boss);
  await boss.insert(
    RESULT_MAIL_QUEUE,
    jobs.map((event) => ({ id: derivedUuid(`result-mail:${event.id}`), data: { eventId: event.id } satisfies ResultMailJob, ...RESULT_MAIL_POLICY })),
    { db: bossDb(tx) },
  );
}
