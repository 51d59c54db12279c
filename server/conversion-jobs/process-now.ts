import { ON_DEMAND_HOLD_WINDOW_MS } from '../credits/credits.ts';
import { DomainError } from '../errors.ts';
import type { ConversionDeps } from './conversion-deps.ts';
import { enqueueChunk, ensureConversionQueues } from './conversion-jobs.jobs.ts';
import {
  notifyConversion,
  queuedPhase,
  requireFile,
  restartHoldWindow,
  resumeWaitingChunks,
  resumeWaitingJob,
  selectLiveJob,
  setFilePhase,
} from './conversion-jobs.queries.ts';

/**
 * Process now: a job parked for the batch lane resumes on-demand at once —
 * job and chunks pending, the hold back to the 90-minute window, the chunks
 * queued, in one transaction. 409 NOT_BATCH_WAITING for any other job.
 */
export async function processNow(deps: Pick<ConversionDeps, 'db' | 'boss'>, input: { fileId: string }): Promise<{ resumed: true; jobId: string }> {
  const { fileId } = input;
  await requireFile(deps.db, fileId);
  const job = await selectLiveJob(deps.db, fileId);
  if (job?.status !== 'waiting_batch') throw new DomainError('NOT_BATCH_WAITING', 'The conversion is not waiting for the batch lane');
  await ensureConversionQueues(deps.boss);
  await deps.db.transaction(async (tx) => {
    if (!(await resumeWaitingJob(tx, job.id))) throw new DomainError('NOT_BATCH_WAITING', 'The conversion is not waiting for the batch lane');
    const chunks = await resumeWaitingChunks(tx, job.id);
    if (job.holdId) await restartHoldWindow(tx, job.holdId, ON_DEMAND_HOLD_WINDOW_MS);
    await setFilePhase(tx, fileId, queuedPhase(job.totalChunks));
    for (const chunk of chunks) await enqueueChunk(deps.boss, tx, { chunkId: chunk.id, jobId: job.id });
    await notifyConversion(tx, fileId, job.id, 'progress');
  });
  return { resumed: true, jobId: job.id };
}
