import { assembleConversion } from '../../server/conversion-jobs/assemble-conversion.ts';
import {
  ASSEMBLE_QUEUE,
  type AssembleJobData,
  CHUNK_QUEUE,
  type ChunkJobData,
  DOCX_QUEUE,
  type DocxJobData,
  ensureConversionQueues,
  RECOVER_QUEUE,
} from '../../server/conversion-jobs/conversion-jobs.jobs.ts';
import { recoverOrphanedChunks } from '../../server/conversion-jobs/recover-orphaned-chunks.ts';
import { runChunk } from '../../server/conversion-jobs/run-chunk.ts';
import { sweepStuckConversions } from '../../server/conversion-jobs/sweep-stuck-conversions.ts';
import type { Deps } from '../../server/deps.ts';
import { runInlineDocx } from '../../server/files/docx.ts';

/** A chunk whose heartbeat is this many intervals old belongs to a dead worker. */
const STALE_HEARTBEATS = 6;
/** A live job with no progress for this long is failed by the stuck-file sweep. */
const STUCK_FILE_MS = 2 * 60 * 60 * 1000;

/**
 * Makes this process's workers of the given queues fetch at once when their
 * current job ends, instead of sleeping out `pollingIntervalSeconds`
 * (pg-boss bursts only for batches larger than one). A fetch that finds
 * nothing falls back to normal polling.
 */
function wakeWorkers(boss: Deps['boss'], queues: string[]): void {
  for (const worker of boss.getWipData()) {
    if (queues.includes(worker.name)) boss.notifyWorker(worker.id);
  }
}

/**
 * Chunk, assembly and inline-DOCX workers, plus the recovery schedule, on the
 * process's one engine and store. The queue's own retry covers a crashed
 * handler; orphan recovery covers a killed process whose job pg-boss still
 * thinks is active.
 */
export async function registerConversionJobs(deps: Deps, options: { schedule?: boolean } = {}): Promise<void> {
  const concurrency = Math.max(1, deps.config.conversion.chunkConcurrency);

  await ensureConversionQueues(deps.boss);

  await deps.boss.work<ChunkJobData>(CHUNK_QUEUE, { batchSize: 1, localConcurrency: concurrency, pollingIntervalSeconds: 0.5 }, async ([job]) => {
    if (!job) return;
    const outcome = await runChunk(deps, job.data);
    // A chunk takes less than a poll interval: without this every chunk would also wait out the poll.
    if (outcome === 'completed') wakeWorkers(deps.boss, [CHUNK_QUEUE, ASSEMBLE_QUEUE]);
  });
  await deps.boss.work<AssembleJobData>(ASSEMBLE_QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]) => {
    if (job) await assembleConversion(deps, { jobId: job.data.jobId });
  });
  await deps.boss.work<DocxJobData>(DOCX_QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]) => {
    if (job) await runInlineDocx(deps, job.data.fileId);
  });
  await deps.boss.work(RECOVER_QUEUE, { batchSize: 1 }, async () => {
    await recoverOrphanedChunks(deps, { staleMs: deps.config.conversion.heartbeatIntervalMs * STALE_HEARTBEATS });
    await sweepStuckConversions(deps, { boundMs: STUCK_FILE_MS });
  });
  if (options.schedule !== false) await deps.boss.schedule(RECOVER_QUEUE, '* * * * *');
}
