import { createChunkRunner, type ChunkRunner } from '../../server/conversion-jobs/runner.ts';
import { lazyEngine, type EngineProvider } from '../../server/conversion-jobs/engine-provider.ts';
import { ASSEMBLE_QUEUE, CHUNK_QUEUE, createConversionQueues, DOCX_QUEUE, RECOVER_QUEUE } from '../../server/conversion-jobs/jobs.queries.ts';
import type { ChunkJobData } from '../../server/conversion-jobs/service.ts';
import { runInlineDocx } from '../../server/files/docx.ts';
import type { Deps } from '../../server/deps.ts';
import { createObjectStore, type ObjectStore } from '../../server/storage/storage.ts';

/** A chunk whose heartbeat is this many intervals old belongs to a dead worker. */
export const STALE_HEARTBEATS = 6;
/** A live job with no progress for this long is failed by the stuck-file sweep. */
export const STUCK_FILE_MS = 2 * 60 * 60 * 1000;

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

export type ConversionWorkerOptions = { store?: ObjectStore; engine?: EngineProvider; schedule?: boolean };

/**
 * Chunk, assembly and inline-DOCX workers, plus the recovery schedule. The
 * queue's own retry covers a crashed handler; orphan recovery covers a killed
 * process whose job pg-boss still thinks is active.
 */
export async function registerConversionJobs(deps: Deps, options: ConversionWorkerOptions = {}): Promise<ChunkRunner> {
  const store = options.store ?? createObjectStore(deps.config.storage);
  const engine = options.engine ?? lazyEngine(deps);
  const runner = createChunkRunner({ ...deps, store, engine });
  const concurrency = Math.max(1, deps.config.conversion.chunkConcurrency);

  await createConversionQueues(deps.boss);

  await deps.boss.work<ChunkJobData>(CHUNK_QUEUE, { batchSize: 1, localConcurrency: concurrency, pollingIntervalSeconds: 0.5 }, async ([job]) => {
    if (!job) return;
    const outcome = await runner.runChunk(job.data);
    // A chunk takes less than a poll interval: without this every chunk would also wait out the poll.
    if (outcome === 'completed') wakeWorkers(deps.boss, [CHUNK_QUEUE, ASSEMBLE_QUEUE]);
  });
  await deps.boss.work<{ jobId: string }>(ASSEMBLE_QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]) => {
    if (job) await runner.assemble(job.data.jobId);
  });
  await deps.boss.work<{ fileId: string }>(DOCX_QUEUE, { batchSize: 1, pollingIntervalSeconds: 0.5 }, async ([job]) => {
    if (job) await runInlineDocx({ ...deps, store, engine }, job.data.fileId);
  });
  await deps.boss.work(RECOVER_QUEUE, { batchSize: 1 }, async () => {
    await runner.recoverOrphans(deps.config.conversion.heartbeatIntervalMs * STALE_HEARTBEATS);
    await runner.sweepStuck(STUCK_FILE_MS);
  });
  if (options.schedule !== false) await deps.boss.schedule(RECOVER_QUEUE, '* * * * *');
  return runner;
}
