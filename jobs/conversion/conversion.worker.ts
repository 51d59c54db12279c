import { requestBudgetCheck } from '../../server/budget/budget.jobs.ts';
import { assembleConversion } from '../../server/conversion-jobs/assemble-conversion.ts';
import {
  ASSEMBLE_QUEUE,
  AssembleJobData,
  CHUNK_QUEUE,
  ChunkJobData,
  DOCX_QUEUE,
  DocxJobData,
  ensureConversionQueues,
  RECOVER_QUEUE,
} from '../../server/conversion-jobs/conversion-jobs.jobs.ts';
import { recoverOrphanedChunks } from '../../server/conversion-jobs/recover-orphaned-chunks.ts';
import { runChunk } from '../../server/conversion-jobs/run-chunk.ts';
import { sweepStuckConversions } from '../../server/conversion-jobs/sweep-stuck-conversions.ts';
import type { Deps } from '../../server/deps.ts';
import { runInlineDocx } from '../../server/files/docx.ts';
import { wakeWorkers } from '../../server/queue/boss.ts';

/** A chunk whose heartbeat is this many intervals old belongs to a dead worker. */
const STALE_HEARTBEATS = 6;
/** A live job with no progress for this long is failed by the stuck-file sweep. */
const STUCK_FILE_MS = 2 * 60 * 60 * 1000;

/**
 * Chunk, assembly and inline-DOCX workers, plus the recovery schedule, on the
 * process's one engine and store. The queue's own retry covers a crashed
 * handler; orphan recovery covers a killed process whose job pg-boss still
 * thinks is active.
 */
export async function registerConversionJobs(deps: Deps, options: { schedule?: boolean } = {}): Promise<void> {
  const concurrency = Math.max(1, deps.config.conversion.chunkConcurrency);

  await ensureConversionQueues(deps.boss);

  const chunkWork = { batchSize: 1, localConcurrency: concurrency, pollingIntervalSeconds: 0.5, includeMetadata: true } as const;
  // Payloads are parsed, never trusted: one that does not parse fails its job rather than pass as done.
  await deps.boss.work<unknown, unknown, typeof chunkWork>(CHUNK_QUEUE, chunkWork, async ([job]) => {
    if (!job) return;
    const data = ChunkJobData.parse(job.data);
    // job.signal aborts when pg-boss gives the job up (expiry, shutdown): the run stops and hands the chunk back.
    const outcome = await runChunk(deps, { ...data, finalAttempt: job.retryCount >= job.retryLimit, signal: job.signal });
    // A chunk takes less than a poll interval: without this every chunk would also wait out the poll.
    if (outcome === 'completed') wakeWorkers(deps.boss, [CHUNK_QUEUE, ASSEMBLE_QUEUE]);
    // Every run booked spend on the ledger: the model budget is checked soon, not only on the minute.
    if (outcome !== 'skipped') {
      await requestBudgetCheck(deps.boss).catch((error: unknown) => deps.log.warn({ err: error }, 'budget check not requested; the minute schedule runs it'));
    }
  });
  await deps.boss.work(ASSEMBLE_QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]) => {
    if (job) await assembleConversion(deps, AssembleJobData.parse(job.data));
  });
  await deps.boss.work(DOCX_QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]) => {
    // job.signal aborts when pg-boss gives the job up; a cancel aborts the run through its heartbeat
    if (job) await runInlineDocx(deps, DocxJobData.parse(job.data).fileId, { signal: job.signal });
  });
  await deps.boss.work(RECOVER_QUEUE, { batchSize: 1 }, async () => {
    await recoverOrphanedChunks(deps, { staleMs: deps.config.conversion.heartbeatIntervalMs * STALE_HEARTBEATS });
    await sweepStuckConversions(deps, { boundMs: STUCK_FILE_MS });
  });
  if (options.schedule !== false) await deps.boss.schedule(RECOVER_QUEUE, '* * * * *');
}
