import { randomUUID } from 'node:crypto';
import { pauseJobIfBudgetSpent } from '../budget/budget.queries.ts';
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
  releaseChunk,
  setFilePhase,
  type ClaimedChunk,
} from './conversion-jobs.queries.ts';
import { failConversion } from './fail-conversion.ts';

export type ChunkOutcome = 'completed' | 'cancelled' | 'interrupted' | 'skipped' | 'lost';

/** Claims the chunk (pending only, only while its job runs and the model budget is not spent); moves a pending job to processing. */
function claim(deps: Pick<ConversionDeps, 'db'>, data: ChunkJobData, runId: string): Promise<ClaimedChunk | null> {
  return deps.db.transaction(async (tx) => {
    const status = await lockJobStatus(tx, data.jobId);
    if (status !== 'pending' && status !== 'processing') return null;
    // The model budget is spent: the job waits in paused_budget instead of starting a page.
    if (await pauseJobIfBudgetSpent(tx, data.jobId)) return null;
    const claimed = await claimChunk(tx, data.chunkId, runId);
    if (!claimed) return null;
    if (status === 'pending') await markJobProcessing(tx, data.jobId);
    return claimed;
  });
}

/** A DomainError says whether trying again can help (a damaged PDF cannot); anything else may be transient. */
function retryable(error: unknown) {
  return !isDomainError(error) || error.retryable;
}

/**
 * Runs one chunk. Claims it under a fresh run id, heartbeats with an UPDATE
 * guarded by that id — a cancel or a re-queue makes it match no row, which
 * aborts the run — and completes it under the job row's lock so a cancel and
 * a completion serialise. The last chunk moves the job to assembling and
 * queues its assembly in the same transaction.
 *
 * A failure fails the job only on the queue's last attempt (`finalAttempt`)
 * or when retrying cannot help; otherwise the chunk goes back to pending for
 * the retry and the error is rethrown so the queue schedules it. Either way
 * the spend of the failed run is booked.
 *
 * `signal` is the queue's: when it aborts (the job expired, the worker is
 * shutting down) the run stops at its next page like a cancelled one, books
 * its spend and puts the chunk back to pending for the queue's retry.
 */
export async function runChunk(deps: ConversionDeps, input: ChunkJobData & { finalAttempt: boolean; signal?: AbortSignal }): Promise<ChunkOutcome> {
  const data: ChunkJobData = { chunkId: input.chunkId, jobId: input.jobId };
  const { db, log } = deps;
  const runId = randomUUID();
  const chunk = await claim(deps, data, runId);
  if (!chunk) return 'skipped';
  const backend = backendFor(chunk.options);

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
  const interrupt = () => controller.abort(input.signal?.reason);
  if (input.signal?.aborted) interrupt();
  input.signal?.addEventListener('abort', interrupt, { once: true });
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
        backend,
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
      // Stopped on purpose (a cancel, a re-queue, the queue's signal): not a failure of the chunk.
      if (!controller.signal.aborted) throw error;
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
        backend,
        metadata: { chunkIndex: chunk.chunkIndex, pages: pages.length, outcome: 'aborted' },
      });
      if (!lost) {
        await releaseChunk(db, chunk.id, runId);
        log.warn({ chunkId: chunk.id, pages: pages.length }, 'chunk interrupted by its queue job; the queue retries it');
        return 'interrupted';
      }
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
      await insertChunkCost(tx, chunk.jobId, chunk.id, costUsd, { chunkIndex: chunk.chunkIndex, pages: pages.length }, backend);
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
        backend,
        metadata: { chunkIndex: chunk.chunkIndex, pages: pages.length, outcome: 'discarded' },
      });
      await deps.store.delete(resultKey).catch(() => {});
      return 'lost';
    }
    return 'completed';
  } catch (error) {
    const metadata = { chunkIndex: chunk.chunkIndex, pages: pages.length, outcome: 'failed' };
    await bookChunkSpend(deps, { jobId: chunk.jobId, chunkId: chunk.id, costUsd: pagesCost(pages), backend, metadata }).catch((bookError: unknown) =>
      log.error({ err: bookError, chunkId: chunk.id }, 'the spend of a failed chunk run could not be booked'),
    );
    if (!input.finalAttempt && retryable(error)) {
      await releaseChunk(db, chunk.id, runId);
      log.warn({ err: error, chunkId: chunk.id }, 'chunk failed; the queue retries it');
      throw error;
    }
    await failConversion(deps, {
      jobId: chunk.jobId,
      code: isDomainError(error) ? error.code : 'CONVERSION_FAILED',
      message: isDomainError(error) ? error.message : 'The conversion failed',
      cause: error,
    });
    throw error;
  } finally {
    input.signal?.removeEventListener('abort', interrupt);
    clearInterval(timer);
  }
}
