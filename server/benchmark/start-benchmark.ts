import { z } from 'zod';
import { createHold } from '../credits/credits.ts';
import { requireFile } from '../conversion-jobs/conversion-jobs.queries.ts';
import { DomainError } from '../errors.ts';
import { BENCHMARK_BACKENDS, ensureBenchmarkQueues, enqueuePipeline } from './benchmark.jobs.ts';
import { insertResult, insertSession } from './benchmark.queries.ts';
import { failAfterRetries } from './fail-after-retries.ts';
import { runPipeline, type BenchmarkDeps } from './run-pipeline.ts';

/** At most this many pipelines per session: each is a whole-document conversion. */
const MAX_PIPELINES = 6;

/**
 * A session's hold outlives every attempt of every pipeline: the visibility
 * timeout and retries of a slow fleet can take hours, and an expired hold
 * could no longer be settled.
 */
const BENCHMARK_HOLD_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * A strict boolean: the REST bridge coerces `z.boolean()` fields of a body
 * (any non-empty string, any number became true), and a flag that decides
 * what runs, and what is charged, must be a real JSON boolean.
 */
const StrictBoolean = z.union([z.literal(true), z.literal(false)]);

const Pipeline = z.object({ backend: z.enum(BENCHMARK_BACKENDS), uxOptimizer: StrictBoolean.default(false) });
export const StartBenchmarkInput = z.object({ fileId: z.uuid(), pipelines: z.array(Pipeline).min(1).max(MAX_PIPELINES) });
export type StartBenchmarkInput = z.infer<typeof StartBenchmarkInput>;

/**
 * Starts a benchmark session of an uploaded PDF (the caller checked the user
 * may read the file): credits held for pages x pipelines (refused with
 * INSUFFICIENT_CREDITS / FREE_PAGE_LIMIT before any work), the session, one
 * queued value and one queue job per pipeline, all in one transaction.
 * CONFLICT when the file is not an uploaded PDF; PDF_TOO_MANY_PAGES over
 * BENCHMARK_MAX_PAGES.
 *
 * In inline mode (the edge deployment) the pipelines run here, one after the
 * other, instead of being queued, and the session is complete on return.
 */
export async function startBenchmark(deps: BenchmarkDeps, input: StartBenchmarkInput): Promise<{ sessionId: string }> {
  const { db, config } = deps;
  const file = await requireFile(db, input.fileId);
  if (file.contentType !== 'application/pdf' || !file.storageKey || !file.pageCount) {
    throw new DomainError('CONFLICT', 'Only an uploaded PDF can be benchmarked');
  }
  if (file.pageCount > config.benchmark.maxPages) {
    throw new DomainError('PDF_TOO_MANY_PAGES', `A benchmark takes at most ${config.benchmark.maxPages} pages; this file has ${file.pageCount}`);
  }
  const inline = config.benchmark.mode === 'inline';
  if (!inline) await ensureBenchmarkQueues(deps.boss, config);
  const pages = file.pageCount;
  const credits = pages * Math.max(1, config.conversion.highFidelityCreditMultiplier);
  const messages = await db.transaction(async (tx) => {
    const holdId = await createHold(tx, {
      customerId: file.customerId,
      amount: credits * input.pipelines.length,
      windowMs: BENCHMARK_HOLD_WINDOW_MS,
      reference: `benchmark:${file.id}`,
    });
    const sessionId = await insertSession(tx, {
      ownerId: file.ownerId,
      customerId: file.customerId,
      fileId: file.id,
      pipelineCount: input.pipelines.length,
      pages,
      holdId,
    });
    const queued = input.pipelines.map((pipeline, index) => ({ sessionId, pipeline: index, file: file.id, ...pipeline }));
    for (const message of queued) {
      await insertResult(tx, sessionId, message.pipeline, { status: 'queued', backend: message.backend, uxOptimizer: message.uxOptimizer, attempts: 0 });
      if (!inline) await enqueuePipeline(deps.boss, config, tx, message);
    }
    return queued;
  });
  const sessionId = messages[0]!.sessionId;
  if (inline) {
    for (const message of messages) {
      // a transient failure gets the same retries the queue would give it; then the pipeline shows failed
      await runInline(deps, message);
    }
  }
  return { sessionId };
}

async function runInline(deps: BenchmarkDeps, message: Parameters<typeof runPipeline>[1]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await runPipeline(deps, message);
      return;
    } catch (error) {
      if (attempt >= deps.config.benchmark.retryLimit) {
        await failAfterRetries(deps, message, { deadLettered: false });
        return;
      }
      deps.log.warn({ err: error, sessionId: message.sessionId, pipeline: message.pipeline }, 'inline benchmark pipeline failed; trying again');
    }
  }
}
