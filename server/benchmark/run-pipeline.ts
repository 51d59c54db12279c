import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PageResult } from '../conversion/model.ts';
import type { Deps } from '../deps.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { readAll } from '../storage/storage.ts';
import type { BenchmarkMessage } from './benchmark.jobs.ts';
import { claimPipeline, requeuePipeline, selectSessionFile, type PipelineValue } from './benchmark.queries.ts';
import { finishPipeline } from './finish-pipeline.ts';
import { joinBrokenParagraphs } from '../conversion/paragraphs.ts';
import { convertedWords, textLayerWords, wordRecall } from './word-recall.ts';

export type BenchmarkDeps = Pick<Deps, 'db' | 'boss' | 'config' | 'clock' | 'log' | 'store' | 'engine' | 'metrics'>;

export type PipelineOutcome = 'complete' | 'failed' | 'skipped';

const WORKER_ID = `${os.hostname()}:${process.pid}`;

/** Where a pipeline's outputs live; deleting the session's prefix removes them. */
function benchmarkObjectKey(sessionId: string, pipeline: number, name: string): string {
  return `benchmarks/${sessionId}/${pipeline}/${name}`;
}

function describe(error: unknown): { code: string; message: string } {
  return isDomainError(error) ? { code: error.code, message: error.message } : { code: 'PIPELINE_FAILED', message: 'The pipeline failed' };
}

/**
 * Runs one pipeline of a session and writes its result. Idempotent: a
 * pipeline whose value is already terminal is skipped, and one marked
 * running by a worker that died is taken over.
 *
 * Errors: a DomainError that retrying cannot help (a damaged PDF, a parser
 * key refused) fails the pipeline at once. Anything else puts it back to
 * queued and is rethrown, so the queue retries it and, after the last retry,
 * dead-letters it (the dead-letter consumer shows it failed). When `signal`
 * aborts (the worker shuts down, the job expired) the run stops between
 * pages and the pipeline goes back to queued for the queue's retry.
 */
export async function runPipeline(deps: BenchmarkDeps, message: BenchmarkMessage, options: { signal?: AbortSignal } = {}): Promise<PipelineOutcome> {
  const { db, log } = deps;
  const { sessionId, pipeline } = message;
  const claimed = await claimPipeline(db, sessionId, pipeline, { startedAt: deps.clock.now(), worker: WORKER_ID });
  if (!claimed) return 'skipped';
  const fail = async (error: { code: string; message: string }) => {
    await finishPipeline(deps, { sessionId, pipeline, value: { ...claimed, status: 'failed', finishedAt: deps.clock.now().toISOString(), error } });
    return 'failed' as const;
  };
  const file = await selectSessionFile(db, sessionId);
  // The message names the file only as the specification's message does; the session row is what counts.
  if (!file?.storageKey || file.fileId !== message.file) return fail({ code: 'NOT_FOUND', message: 'The file is gone' });
  try {
    const measured = await measurePipeline(deps, { ...message, storageKey: file.storageKey, sourceName: file.originalName }, options.signal);
    await finishPipeline(deps, { sessionId, pipeline, value: { ...claimed, ...measured, status: 'complete', finishedAt: deps.clock.now().toISOString() } });
    return 'complete';
  } catch (error) {
    if (!options.signal?.aborted && isDomainError(error) && !error.retryable) {
      log.warn({ err: error, sessionId, pipeline }, 'benchmark pipeline failed; retrying cannot help');
      return fail(describe(error));
    }
    await requeuePipeline(db, sessionId, pipeline, options.signal?.aborted ? undefined : describe(error)).catch((requeueError: unknown) =>
      log.error({ err: requeueError, sessionId, pipeline }, 'benchmark pipeline could not be put back to queued'),
    );
    log.warn({ err: error, sessionId, pipeline, aborted: options.signal?.aborted ?? false }, 'benchmark pipeline stopped; the queue retries it');
    throw error;
  }
}

type Measured = Pick<PipelineValue, 'timeMs' | 'pages' | 'pageClasses' | 'wcagStatus' | 'violations' | 'wordRecall' | 'costUsd' | 'credits' | 'outputs'>;

/** Converts, renders and audits the whole document on the pipeline's backend, stores the outputs, and measures. */
async function measurePipeline(
  deps: BenchmarkDeps,
  run: BenchmarkMessage & { storageKey: string; sourceName: string },
  signal: AbortSignal | undefined,
): Promise<Measured> {
  const source = await readAll(await deps.store.get(run.storageKey));
  const pdf = new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  const engine = await deps.engine();
  const started = performance.now();
  const meta = await engine.inspect(pdf, { sourceName: run.sourceName });
  if (meta.pageCount > deps.config.benchmark.maxPages) {
    throw new DomainError('PDF_TOO_MANY_PAGES', `A benchmark takes at most ${deps.config.benchmark.maxPages} pages`);
  }
  const numbers = Array.from({ length: meta.pageCount }, (_, index) => index + 1);
  let pages: PageResult[] = await engine.convertPages(pdf, { pages: numbers, backend: run.backend, signal, sourceName: run.sourceName });
  signal?.throwIfAborted();
  if (pages.length !== numbers.length) throw new Error(`the engine returned ${pages.length} of ${numbers.length} pages`);
  if (run.uxOptimizer) pages = joinBrokenParagraphs(pages);
  const scratch = await mkdtemp(path.join(os.tmpdir(), 'folio-benchmark-'));
  try {
    const render = engine.openRender(meta, { dir: scratch, baseName: 'document' });
    let rendered: Awaited<ReturnType<typeof render.finish>>;
    try {
      for (const page of pages) await render.add(page);
      rendered = await render.finish();
    } catch (error) {
      await render.abort();
      throw error;
    }
    const timeMs = Math.round(performance.now() - started);
    signal?.throwIfAborted();
    const outputs = {
      html: benchmarkObjectKey(run.sessionId, run.pipeline, 'document.html'),
      pdf: benchmarkObjectKey(run.sessionId, run.pipeline, 'document.accessible.pdf'),
      report: benchmarkObjectKey(run.sessionId, run.pipeline, 'document.report.html'),
    };
    await deps.store.put(outputs.html, createReadStream(rendered.html), { contentType: 'text/html; charset=utf-8' });
    await deps.store.put(outputs.pdf, createReadStream(rendered.taggedPdf!), { contentType: 'application/pdf' });
    await deps.store.put(outputs.report, createReadStream(rendered.reportHtml), { contentType: 'text/html; charset=utf-8' });
    const report = rendered.report as typeof rendered.report & { audit?: { violationCount: number; violations: unknown[] } };
    return {
      timeMs,
      pages: pages.length,
      pageClasses: {
        standard: pages.filter((page) => page.classification === 'standard').length,
        complex: pages.filter((page) => page.classification === 'complex').length,
      },
      wcagStatus: report.wcagStatus,
      violations: { count: report.audit?.violationCount ?? 0, rules: report.audit?.violations.length ?? 0 },
      wordRecall: wordRecall(await textLayerWords(pdf, signal), convertedWords(pages)),
      costUsd: Math.round(pages.reduce((sum, page) => sum + page.costUsd, 0) * 1e6) / 1e6,
      credits: pages.length * Math.max(1, deps.config.conversion.highFidelityCreditMultiplier),
      outputs,
    };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
