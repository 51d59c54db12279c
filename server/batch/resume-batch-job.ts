import { ON_DEMAND_HOLD_WINDOW_MS } from '../credits/credits.ts';
import { enqueueChunk } from '../conversion-jobs/conversion-jobs.jobs.ts';
import type { Queryable } from '../db/database.ts';
import type { Boss } from '../queue/boss.ts';
import { resumeBatchJob } from './batch.queries.ts';

/**
 * resume_batch_conversion_job plus the chunks' queue jobs, in the caller's
 * transaction: the job runs on-demand (with `_batchPrimed` when its batch
 * results are there). The number of chunks queued; 0 when the job was no
 * longer waiting (a second resume does nothing). The caller has made sure
 * the conversion queues exist.
 */
export async function resumeBatchConversion(boss: Boss, tx: Queryable, jobId: string, primed: boolean): Promise<number> {
  const chunks = await resumeBatchJob(tx, jobId, primed, ON_DEMAND_HOLD_WINDOW_MS);
  for (const chunkId of chunks) await enqueueChunk(boss, tx, { chunkId, jobId });
  return chunks.length;
}
