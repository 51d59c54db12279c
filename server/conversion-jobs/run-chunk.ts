import { randomUUID } from 'node:crypto';
import type { PageResult } from '../conversion/model.ts';
import { isDomainError } from '../errors.ts';
import { readAll } from '../storage/storage.ts';
import { bookChunkSpend, pagesCost } from './book-chunk-spend.ts';
import { backendFor, jobObjectKey, type ConversionDeps } from './conversion-deps.ts';
import { enqueueAssembly, type ChunkJobData } from './conversion-jobs.jobs.ts';
import {
  advanceJob,
  beatChunk,
  claimChunk,
  completeChunk,
  countChunks,
  insertChunkCost,
  lockJobStatus,
  markJobProcessing,
  notifyConversion,
  setFilePhase,
  type ClaimedChunk,
} from './conversion-jobs.queries.ts';
import { failConversion } from './fail-conversion.ts';

export type ChunkOutcome = 'completed' | 'cancelled' | 'skipped' | 'lost';

/** Claims the chunk (pending only, and only while its job runs); moves a pending job to processing. */
function claim(deps: Pick<ConversionDeps, 'db'>, data: ChunkJobData, runId: string): Promise<ClaimedChunk | null> {
  return deps.db.transaction(async (tx) => {
    const status = await lockJobStatus(tx, data.jobId);
    if (status !== 'pending' && status !== 'processing') return null;
    const claimed = await claimChunk(tx, data.chunkId, runId);
    if (!claimed) return null;
    if (status === 'pending') await markJobProcessing(tx, data.jobId);
    return claimed;
  });
}

/**
 * Runs one chunk. Claims it under a fresh run id, heartbeats with an UPDATE
 * guarded by that id — a cancel or a re-queue makes it match no row, which
 * aborts the run — and completes it under the job row's lock so a cancel and
 * a completion serialise. The last chunk moves the job to assembling and
 * queues its assembly in the same transaction.
 */
export async function runChunk(deps: ConversionDeps, data: ChunkJobData): Promise<ChunkOutcome> {
  const { db, log } = deps;
  const runId = randomUUID();
  const chunk = await claim(deps, data, runId);
  if (!chunk) return 'skipped';

  const controller = new AbortController();
  const pages: PageResult[] = [];
  let beats: Promise<void> = Promise.resolve();
  let lost = false;
  const heartbeat = async (pagesDone: number, notify = false) => {
    const owned = await beatChunk(db, chunk, runId, pagesDone, notify);
    if (!owned) {
      lost = true;
      controller.abort();
    }
  };
  const timer = setInterval(() => {
    heartbeat(pages.length).catch((error: unknown) => log.warn({ err: error, chunkId: chunk.id }, 'chunk heartbeat failed'));
  }, deps.config.conversion.heartbeatIntervalMs);

  try {
    const source = await readAll(await deps.store.get(chunk.sourceKey));
    const engine = await deps.engine();
    const numbers = Array.from({ length: chunk.pageEnd - chunk.pageStart + 1 }, (_, index) => chunk.pageStart + index);
    try {
      await engine.convertPages(new Uint8Array(source.buffer, source.byteOffset, source.byteLength), {
        pages: numbers,
        backend: backendFor(chunk.options),
        signal: controller.signal,
        sourceName: chunk.sourceName,
        onPage: (page) => {
          pages.push(page);
          if (controller.signal.aborted) throw new Error('chunk aborted');
          // Progress beats run behind the engine, one at a time, so a page never waits on the database;
          // a beat that matches no row aborts the run before its next page.
          const done = pages.length;
          beats = beats
            .then(() => heartbeat(done, true))
            .then(
              () => undefined,
              (error: unknown) => log.warn({ err: error, chunkId: chunk.id }, 'chunk heartbeat failed'),
            );
        },
      });
    } catch (error) {
      if (!lost) throw error;
    }
    await beats;
    if (!lost && !controller.signal.aborted && pages.length !== numbers.length) {
      // never complete (and so charge for) a chunk the engine came back short on; the queue retries it
      throw new Error(`the engine returned ${pages.length} of ${numbers.length} pages`);
    }
    if (lost || controller.signal.aborted) {
      await bookChunkSpend(deps, {
        jobId: chunk.jobId,
        chunkId: chunk.id,
        costUsd: pagesCost(pages),
        metadata: { chunkIndex: chunk.chunkIndex, pages: pages.length, outcome: 'aborted' },
      });
      log.info({ chunkId: chunk.id, pages: pages.length }, 'chunk stopped: cancelled or re-queued');
      return 'cancelled';
    }

    const resultKey = jobObjectKey(chunk.fileId, chunk.jobId, `chunks/${String(chunk.chunkIndex).padStart(5, '0')}.json`);
    await deps.store.put(resultKey, Buffer.from(JSON.stringify({ pages })), { contentType: 'application/json' });
    const costUsd = pagesCost(pages);
    const outcome = await db.transaction(async (tx) => {
      // Job row first: cancel_conversion_job locks it too, so exactly one of the two wins.
      if ((await lockJobStatus(tx, chunk.jobId)) !== 'processing') return 'lost' as const;
      if (!(await completeChunk(tx, chunk.id, runId, { resultKey, costUsd, pages: pages.length }))) return 'lost' as const;
      await insertChunkCost(tx, chunk.jobId, chunk.id, costUsd, { chunkIndex: chunk.chunkIndex, pages: pages.length });
      const counts = await countChunks(tx, chunk.jobId);
      const last = counts.done === counts.total;
      await advanceJob(tx, chunk.jobId, costUsd, last);
      await setFilePhase(tx, chunk.fileId, last ? 'Assembling' : `Converting: ${counts.done}/${counts.total} chunks`);
      if (last) await enqueueAssembly(deps.boss, tx, { jobId: chunk.jobId }, { singleton: true });
      await notifyConversion(tx, chunk.fileId, chunk.jobId, 'progress');
      return 'completed' as const;
    });
    if (outcome === 'lost') {
      await bookChunkSpend(deps, {
        jobId: chunk.jobId,
        chunkId: chunk.id,
        costUsd,
        metadata: { chunkIndex: chunk.chunkIndex, pages: pages.length, outcome: 'discarded' },
      });
      await deps.store.delete(resultKey).catch(() => {});
      return 'lost';
    }
    return 'completed';
  } catch (error) {
    await failConversion(deps, {
      jobId: chunk.jobId,
      code: isDomainError(error) ? error.code : 'CONVERSION_FAILED',
      message: isDomainError(error) ? error.message : 'The conversion failed',
      cause: error,
    });
    throw error;
  } finally {
    clearInterval(timer);
  }
}
