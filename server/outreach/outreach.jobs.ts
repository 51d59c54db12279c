import type { DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import { bossDb } from '../conversion-jobs/boss-db.ts';
import { derivedUuid } from '../email/email.jobs.ts';
import { type Boss, oncePerBoss } from '../queue/boss.ts';

export const OUTREACH_QUEUE = 'outreach.send-batch';
/** Addresses per queue job: a batch runs in well under a job's expiry even at provider B's slowest. */
const OUTREACH_BATCH = 50;
/** A crashed batch is picked up again; every address in it is claimed, so none is mailed twice. */
const OUTREACH_POLICY = { retryLimit: 3, retryDelay: 60, expireInSeconds: 15 * 60 } as const;

export const OutreachBatchJob = z.object({ campaignId: z.uuid(), emails: z.array(z.email()).min(1).max(OUTREACH_BATCH) });
export type OutreachBatchJob = z.infer<typeof OutreachBatchJob>;

export const ensureOutreachQueue = oncePerBoss(async (boss) => {
  await boss.createQueue(OUTREACH_QUEUE, OUTREACH_POLICY);
});

/** The campaign's batch jobs, in the transaction that wrote its delivery rows; ids derive from the campaign and batch number. */
export async function enqueueOutreachBatches(boss: Boss, tx: DatabaseTransactionConnection, campaignId: string, emails: string[]): Promise<number> {
  await ensureOutreachQueue(boss);
  const jobs = [];
  for (let start = 0; start < emails.length; start += OUTREACH_BATCH) {
    const data: OutreachBatchJob = { campaignId, emails: emails.slice(start, start + OUTREACH_BATCH) };
    jobs.push({ id: derivedUuid(`outreach:${campaignId}:${start / OUTREACH_BATCH}`), data, ...OUTREACH_POLICY });
  }
  if (jobs.length > 0) await boss.insert(OUTREACH_QUEUE, jobs, { db: bossDb(tx) });
  return jobs.length;
}
