import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { AnyRow, sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { releaseHold, settleHold } from '../credits/credits.ts';
import type { DocumentRender } from '../conversion/engine.ts';
import type { DocumentMeta, PageResult } from '../conversion/model.ts';
import { isDomainError } from '../errors.ts';
import { readAll, type ObjectStore } from '../storage/storage.ts';
import { bossDb } from './boss-db.ts';
import type { EngineProvider } from './engine-provider.ts';
import { ASSEMBLE_QUEUE, CHUNK_QUEUE, JobRow, jobColumns, notifyFragment } from './jobs.queries.ts';
import { jobKey, type ChunkJobData } from './service.ts';

export type RunnerDeps = Pick<Deps, 'db' | 'boss' | 'config' | 'log'> & { store: ObjectStore; engine: EngineProvider };

const ClaimedChunk = z.object({
  id: z.uuid(),
  jobId: z.uuid(),
  fileId: z.uuid(),
  chunkIndex: z.number(),
  pageStart: z.number(),
  pageEnd: z.number(),
  totalChunks: z.number(),
  sourceKey: z.string(),
  sourceName: z.string(),
  options: z.record(z.string(), z.unknown()),
});

export type ChunkOutcome = 'completed' | 'cancelled' | 'skipped' | 'lost';

/** Sum of page costs, booked even for a run whose result is thrown away: the money was spent. */
function pagesCost(pages: PageResult[]) {
  return pages.reduce((sum, page) => sum + (Number.isFinite(page.costUsd) ? page.costUsd : 0), 0);
}

export function createChunkRunner(deps: RunnerDeps) {
  const { db, log } = deps;

  async function bookSpend(jobId: string, chunkId: string, costUsd: number, metadata: Record<string, unknown>) {
    await db.transaction(async (tx) => {
      await tx.query(sql.type(AnyRow)`
        insert into cost_ledger (source, job_id, chunk_id, cost_usd, metadata)
        values ('chunk-scheduler', ${jobId}, ${chunkId}, ${costUsd}, ${sql.jsonb(metadata as never)})`);
      await tx.query(sql.type(AnyRow)`update large_conversion_jobs set total_cost_usd = total_cost_usd + ${costUsd} where id = ${jobId}`);
    });
  }

  /**
   * Runs one chunk. Claims it (pending only, and only while its job runs),
   * heartbeats with an UPDATE guarded by this run's id — a cancel or a
   * re-queue makes that match no row, which aborts the run — and completes it
   * under the job row's lock so a cancel and a completion serialise.
   */
  async function runChunk(data: ChunkJobData): Promise<ChunkOutcome> {
    const runId = randomUUID();
    const chunk = await db.transaction(async (tx) => {
      const job = await tx.maybeOne(sql.type(z.object({ status: z.string() }))`
        select status from large_conversion_jobs where id = ${data.jobId} for update`);
      if (!job || (job.status !== 'pending' && job.status !== 'processing')) return null;
      const claimed = await tx.maybeOne(sql.type(ClaimedChunk)`
        update chunk_jobs c
           set status = 'processing', run_id = ${runId}, attempt = c.attempt + 1, heartbeat_at = now(), pages_done = 0,
               started_at = coalesce(c.started_at, now())
          from large_conversion_jobs j join files f on f.id = j.file_id
         where c.id = ${data.chunkId} and c.job_id = j.id and c.status = 'pending'
        returning c.id, c.job_id as "jobId", j.file_id as "fileId", c.chunk_index as "chunkIndex", c.page_start as "pageStart",
                  c.page_end as "pageEnd", j.total_chunks as "totalChunks", f.storage_key as "sourceKey", f.original_name as "sourceName", j.options`);
      if (!claimed) return null;
      if (job.status === 'pending') {
        await tx.query(sql.type(AnyRow)`update large_conversion_jobs set status = 'processing', updated_at = now() where id = ${data.jobId}`);
      }
      return claimed;
    });
    if (!chunk) return 'skipped';

    const controller = new AbortController();
    const pages: PageResult[] = [];
    let beats: Promise<void> = Promise.resolve();
    let lost = false;
    // One statement per beat: the guarded UPDATE, and the progress notice only when it matched.
    const heartbeat = async (pagesDone: number, notify = false) => {
      const result = await db.query(sql.type(AnyRow)`
        with beat as (
          update chunk_jobs set heartbeat_at = now(), pages_done = ${pagesDone}
           where id = ${chunk.id} and run_id = ${runId} and status = 'processing' returning id)
        select ${notify ? notifyFragment(chunk.fileId, chunk.jobId, 'progress') : sql.fragment`null`} from beat`);
      if (result.rowCount === 0) {
        lost = true;
        controller.abort();
      }
      return result.rowCount > 0;
    };
    const timer = setInterval(() => {
      heartbeat(pages.length).catch((error: unknown) => log.warn({ err: error, chunkId: chunk.id }, 'chunk heartbeat failed'));
    }, deps.config.conversion.heartbeatIntervalMs);

    try {
      const source = await readAll(await deps.store.get(chunk.sourceKey));
      const engine = await deps.engine();
      const numbers = Array.from({ length: chunk.pageEnd - chunk.pageStart + 1 }, (_, index) => chunk.pageStart + index);
      const backend =
        chunk.options.parser === 'vision' || chunk.options.highFidelity === true ? 'chunked-vision' : chunk.options.parser === 'parser' ? 'parser' : 'local';
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
        if (!lost) throw error;
      }
      await beats;
      if (!lost && !controller.signal.aborted && pages.length !== numbers.length) {
        // never complete (and so charge for) a chunk the engine came back short on; the queue retries it
        throw new Error(`the engine returned ${pages.length} of ${numbers.length} pages`);
      }
      if (lost || controller.signal.aborted) {
        await bookSpend(chunk.jobId, chunk.id, pagesCost(pages), { chunkIndex: chunk.chunkIndex, pages: pages.length, outcome: 'aborted' });
        log.info({ chunkId: chunk.id, pages: pages.length }, 'chunk stopped: cancelled or re-queued');
        return 'cancelled';
      }

      const resultKey = jobKey(chunk.fileId, chunk.jobId, `chunks/${String(chunk.chunkIndex).padStart(5, '0')}.json`);
      await deps.store.put(resultKey, Buffer.from(JSON.stringify({ pages })), { contentType: 'application/json' });
      const costUsd = pagesCost(pages);
      const outcome = await db.transaction(async (tx) => {
        // Job row first: cancel_conversion_job locks it too, so exactly one of the two wins.
        const job = await tx.maybeOne(
          sql.type(z.object({ status: z.string() }))`select status from large_conversion_jobs where id = ${chunk.jobId} for update`,
        );
        if (job?.status !== 'processing') return 'lost' as const;
        const done = await tx.query(sql.type(AnyRow)`
          update chunk_jobs set status = 'completed', result_key = ${resultKey}, cost_usd = ${costUsd}, pages_done = ${pages.length},
                                completed_at = now(), heartbeat_at = now()
           where id = ${chunk.id} and run_id = ${runId} and status = 'processing'`);
        if (done.rowCount === 0) return 'lost' as const;
        await tx.query(sql.type(AnyRow)`
          insert into cost_ledger (source, job_id, chunk_id, cost_usd, metadata)
          values ('chunk-scheduler', ${chunk.jobId}, ${chunk.id}, ${costUsd}, ${sql.jsonb({ chunkIndex: chunk.chunkIndex, pages: pages.length })})`);
        const counts = await tx.one(sql.type(z.object({ done: z.number(), total: z.number() }))`
          select count(*) filter (where status = 'completed')::int as done, count(*)::int as total from chunk_jobs where job_id = ${chunk.jobId}`);
        const last = counts.done === counts.total;
        await tx.query(sql.type(AnyRow)`
          update large_conversion_jobs set total_cost_usd = total_cost_usd + ${costUsd}, updated_at = now(),
                 status = case when ${last} then 'assembling' else status end
           where id = ${chunk.jobId}`);
        await tx.query(sql.type(AnyRow)`
          update files set phase = ${last ? 'Assembling' : `Converting: ${counts.done}/${counts.total} chunks`}, updated_at = now() where id = ${chunk.fileId}`);
        if (last) await deps.boss.send(ASSEMBLE_QUEUE, { jobId: chunk.jobId }, { db: bossDb(tx), retryLimit: 3, retryDelay: 2, singletonKey: chunk.jobId });
        await tx.query(sql.type(AnyRow)`select ${notifyFragment(chunk.fileId, chunk.jobId, 'progress')}`);
        return 'completed' as const;
      });
      if (outcome === 'lost') {
        await bookSpend(chunk.jobId, chunk.id, costUsd, { chunkIndex: chunk.chunkIndex, pages: pages.length, outcome: 'discarded' });
        await deps.store.delete(resultKey).catch(() => {});
        return 'lost';
      }
      return 'completed';
    } catch (error) {
      await failJob(
        chunk.jobId,
        isDomainError(error) ? error.code : 'CONVERSION_FAILED',
        isDomainError(error) ? error.message : 'The conversion failed',
        error,
      );
      throw error;
    } finally {
      clearInterval(timer);
    }
  }

  /** Fails a live job: hold released (failed), file failed, conversion.failed in the outbox. Guarded; a second call does nothing. */
  async function failJob(jobId: string, code: string, message: string, cause?: unknown) {
    if (cause) log.error({ err: cause, jobId }, 'conversion failed');
    await db.transaction(async (tx) => {
      const job = await tx.maybeOne(sql.type(JobRow)`
        update large_conversion_jobs j set status = 'failed', error_code = ${code}, error_message = ${message}, updated_at = now(), finished_at = now()
         where j.id = ${jobId} and j.status in ('pending', 'processing', 'paused_budget', 'assembling', 'waiting_batch')
        returning ${jobColumns}`);
      if (!job) return;
      await tx.query(
        sql.type(
          AnyRow,
        )`update chunk_jobs set status = 'failed', run_id = null where job_id = ${jobId} and status in ('pending', 'processing', 'waiting_batch')`,
      );
      if (job.holdId) await releaseHold(tx, job.holdId, 'failed').catch(() => {});
      await tx.query(sql.type(AnyRow)`
        update files set status = 'failed', phase = null, error_code = ${code}, error_message = ${message}, updated_at = now() where id = ${job.fileId}`);
      await tx.query(sql.type(AnyRow)`
        insert into outbox_events (type, aggregate_id, payload)
        values ('conversion.failed', ${job.fileId}, ${sql.jsonb({ fileId: job.fileId, jobId, code, message })})`);
      await tx.query(sql.type(AnyRow)`select ${notifyFragment(job.fileId, jobId, 'failed')}`);
    });
  }

  /**
   * Assembly: chunk results in page order → render → zip in the store, then
   * (guarded assembling → completed) the hold settled to 1 credit per page and
   * conversion.completed in the outbox. Re-running after a crash redoes only
   * the idempotent parts; settlement happens once.
   */
  async function assemble(jobId: string): Promise<'completed' | 'skipped'> {
    const job = await db.maybeOne(sql.type(JobRow.extend({ originalName: z.string(), sourceKey: z.string() }))`
      select ${jobColumns}, f.original_name as "originalName", f.storage_key as "sourceKey"
        from large_conversion_jobs j join files f on f.id = j.file_id where j.id = ${jobId}`);
    if (job?.status !== 'assembling') return 'skipped';
    try {
      const chunks = await db.any(sql.type(z.object({ resultKey: z.string() }))`
        select result_key as "resultKey" from chunk_jobs where job_id = ${jobId} and status = 'completed' order by chunk_index`);
      const engine = await deps.engine();
      const source = await readAll(await deps.store.get(job.sourceKey));
      const meta: DocumentMeta = await engine.inspect(new Uint8Array(source.buffer, source.byteOffset, source.byteLength), { sourceName: job.originalName });
      const baseName = job.originalName.replace(/\.[^.]+$/, '') || 'document';
      // Chunks are in page order and each holds its pages in order: they stream into the renderer one
      // chunk at a time, and the outputs go through a scratch folder, so no step holds the whole document.
      const scratch = await mkdtemp(path.join(os.tmpdir(), 'folio-assemble-'));
      let outputs: Awaited<ReturnType<DocumentRender['finish']>>;
      const zipKey = jobKey(job.fileId, jobId, 'result.zip');
      try {
        const render = engine.openRender(meta, { dir: scratch, baseName: 'document' });
        try {
          for (const chunk of chunks) {
            const stored = JSON.parse((await readAll(await deps.store.get(chunk.resultKey))).toString('utf8')) as { pages: PageResult[] };
            for (const page of stored.pages.sort((a, b) => a.page - b.page)) await render.add(page);
          }
          outputs = await render.finish();
        } catch (error) {
          await render.abort();
          throw error;
        }
        await deps.store.put(zipKey, engine.zipFiles(outputs, baseName), { contentType: 'application/zip' });
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
      const credits = job.totalPages * Math.max(1, deps.config.conversion.highFidelityCreditMultiplier);
      const finished = await db.transaction(async (tx) => {
        const moved = await tx.query(sql.type(AnyRow)`
          update large_conversion_jobs set status = 'completed', result_key = ${zipKey}, credits_charged = ${credits}, updated_at = now(), finished_at = now()
           where id = ${jobId} and status = 'assembling'`);
        if (moved.rowCount === 0) return false;
        if (job.holdId) await settleHold(tx, job.holdId, credits);
        await tx.query(sql.type(AnyRow)`
          update files set status = 'completed', phase = null, error_code = null, error_message = null, updated_at = now() where id = ${job.fileId}`);
        await tx.query(sql.type(AnyRow)`
          insert into outbox_events (type, aggregate_id, payload)
          values ('conversion.completed', ${job.fileId}, ${sql.jsonb({ fileId: job.fileId, jobId, pages: job.totalPages, credits, wcagStatus: outputs.report.wcagStatus })})`);
        await tx.query(sql.type(AnyRow)`select ${notifyFragment(job.fileId, jobId, 'completed')}`);
        return true;
      });
      return finished ? 'completed' : 'skipped';
    } catch (error) {
      await failJob(
        jobId,
        isDomainError(error) ? error.code : 'ASSEMBLY_FAILED',
        isDomainError(error) ? error.message : 'Assembling the conversion failed',
        error,
      );
      throw error;
    }
  }

  /**
   * Orphan recovery: a processing chunk whose heartbeat is older than
   * staleMs goes back to pending under a fresh queue job (its old run's
   * guarded writes then match nothing); an assembling job idle that long gets
   * its assembly re-sent. Cancelled rows are never touched.
   */
  async function recoverOrphans(staleMs: number): Promise<{ requeued: number; reassembled: number }> {
    return db.transaction(async (tx) => {
      const chunks = await tx.any(sql.type(z.object({ id: z.uuid(), jobId: z.uuid() }))`
        update chunk_jobs c set status = 'pending', run_id = null
          from large_conversion_jobs j
         where c.job_id = j.id and c.status = 'processing' and j.status in ('pending', 'processing')
           and c.heartbeat_at < now() - make_interval(secs => ${staleMs / 1000})
        returning c.id, c.job_id as "jobId"`);
      for (const chunk of chunks) {
        await deps.boss.send(CHUNK_QUEUE, { chunkId: chunk.id, jobId: chunk.jobId } satisfies ChunkJobData, { db: bossDb(tx), retryLimit: 3, retryDelay: 1 });
      }
      const assembling = await tx.any(sql.type(z.object({ id: z.uuid() }))`
        update large_conversion_jobs set updated_at = now()
         where status = 'assembling' and updated_at < now() - make_interval(secs => ${staleMs / 1000}) returning id`);
      for (const job of assembling) await deps.boss.send(ASSEMBLE_QUEUE, { jobId: job.id }, { db: bossDb(tx), retryLimit: 3, retryDelay: 2 });
      if (chunks.length > 0) log.warn({ chunks: chunks.map((c) => c.id) }, 're-queued chunks whose heartbeat stopped');
      return { requeued: chunks.length, reassembled: assembling.length };
    });
  }

  /** Stuck-file sweep: live jobs with no progress past the bound fail (hold released). Cancelled jobs are not live. */
  async function sweepStuck(boundMs: number): Promise<number> {
    const stuck = await db.any(sql.type(z.object({ id: z.uuid() }))`
      select j.id from large_conversion_jobs j
       where j.status in ('pending', 'processing', 'assembling')
         and j.updated_at < now() - make_interval(secs => ${boundMs / 1000})
         and not exists (select 1 from chunk_jobs c where c.job_id = j.id and c.heartbeat_at >= now() - make_interval(secs => ${boundMs / 1000}))`);
    for (const job of stuck) await failJob(job.id, 'CONVERSION_STUCK', 'The conversion made no progress and was stopped');
    // Inline (DOCX) files have no job; one left processing past the bound failed with its worker.
    await db.query(sql.type(AnyRow)`
      update files f set status = 'failed', error_code = 'CONVERSION_STUCK', error_message = 'The conversion made no progress and was stopped', updated_at = now()
       where f.status = 'processing' and f.updated_at < now() - make_interval(secs => ${boundMs / 1000})
         and not exists (select 1 from large_conversion_jobs j where j.file_id = f.id and j.status not in ('completed', 'failed', 'cancelled'))`);
    return stuck.length;
  }

  return { runChunk, assemble, failJob, recoverOrphans, sweepStuck };
}

export type ChunkRunner = ReturnType<typeof createChunkRunner>;
