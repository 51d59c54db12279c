import { z } from 'zod';
import { AnyRow, sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { DocumentMeta, PageResult } from '../conversion/model.ts';
import type { EngineProvider } from '../conversion-jobs/engine-provider.ts';
import { notifyFragment } from '../conversion-jobs/conversion-jobs.queries.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { settleHold } from '../credits/credits.ts';
import { releaseOpenHold } from '../conversion-jobs/fail-conversion.ts';
import { readAll, type ObjectStore } from '../storage/storage.ts';

export const DOCX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export function inlineResultKey(fileId: string) {
  return `files/${fileId}/inline/result.zip`;
}

/**
 * The DOCX path, run by the `conversion.docx` queue in the worker process:
 * DOCX → blocks (mammoth, in a worker thread of its own whose heap is capped)
 * → the engine's render (audit included) and zip. The upload counted its
 * pages and holds their credits: completing settles the hold at that count,
 * failing releases it. It heartbeats like a chunk: every interval it touches
 * the file row while the file is still `processing` on this hold, and when
 * that update matches no row (a cancel reset the file, a delete removed it)
 * the run aborts: the mammoth worker is terminated and nothing is written.
 * `signal` is pg-boss's (expiry, shutdown): the run stops and the queue's
 * retry takes the file again.
 */
export async function runInlineDocx(
  deps: Pick<Deps, 'db' | 'log' | 'config'> & { store: ObjectStore; engine: EngineProvider },
  fileId: string,
  options: { signal?: AbortSignal } = {},
): Promise<void> {
  const file = await deps.db.maybeOne(sql.type(
    z.object({ storageKey: z.string(), originalName: z.string(), status: z.string(), pageCount: z.number().nullable(), holdId: z.uuid().nullable() }),
  )`
    select storage_key as "storageKey", original_name as "originalName", status, page_count as "pageCount", hold_id as "holdId" from files where id = ${fileId}`);
  if (file?.status !== 'processing') return;
  // a file queued before DOCX pages were counted has no hold: it is refused rather than converted for nothing
  const pages = file.pageCount ?? 0;
  const cancelled = new AbortController();
  const signal = options.signal ? AbortSignal.any([cancelled.signal, options.signal]) : cancelled.signal;
  const beat = setInterval(() => {
    stillProcessing(deps.db, fileId, file.holdId)
      .then((live) => {
        if (!live) cancelled.abort(new Error('the DOCX conversion was cancelled'));
      })
      .catch((error: unknown) => deps.log.warn({ err: error, fileId }, 'DOCX heartbeat failed'));
  }, deps.config.conversion.heartbeatIntervalMs);
  try {
    if (!file.holdId || pages < 1) throw new DomainError('CONFLICT', 'The DOCX has no credit hold; upload it again');
    const source = await readAll(await deps.store.get(file.storageKey));
    const baseName = file.originalName.replace(/\.[^.]+$/, '') || 'document';
    const engine = await deps.engine();
    const { blocks, words } = await untilAborted(engine.convertDocx(new Uint8Array(source.buffer, source.byteOffset, source.byteLength), { signal }), signal);
    const page: PageResult = {
      page: 1,
      label: '1',
      backend: 'local',
      classification: 'standard',
      reasons: [],
      blocks,
      warnings: [],
      textLayerWords: words,
      ocr: false,
      timings: { ms: 0 },
      costUsd: 0,
    };
    const meta: DocumentMeta = { title: baseName, lang: 'en', pageCount: 1, tagged: false, sourceName: file.originalName };
    // the render is not interruptible: a cancel during it is honoured by not waiting, and its result is never written
    const outputs = await untilAborted(engine.render({ meta, pages: [page] }), signal);
    signal.throwIfAborted();
    await deps.store.put(inlineResultKey(fileId), engine.zip(outputs, baseName), { contentType: 'application/zip' });
    await deps.db.transaction(async (tx) => {
      const done = await tx.query(sql.type(AnyRow)`
        update files set status = 'completed', phase = null, updated_at = now() where id = ${fileId} and status = 'processing'`);
      if (done.rowCount === 0) return;
      await settleHold(tx, file.holdId!, pages);
      await tx.query(sql.type(AnyRow)`
        insert into outbox_events (type, aggregate_id, payload)
        values ('conversion.completed', ${fileId}, ${sql.jsonb({ fileId, jobId: null, pages, credits: pages, inline: true, wcagStatus: outputs.report.wcagStatus })})`);
      await tx.query(sql.type(AnyRow)`select ${notifyFragment(fileId, null, 'completed')}`);
    });
  } catch (error) {
    if (cancelled.signal.aborted) {
      deps.log.info({ fileId }, 'DOCX conversion stopped: the file was cancelled or deleted');
      return;
    }
    // given up by the queue (expiry, shutdown): the file stays processing for the queue's retry
    if (options.signal?.aborted) throw error;
    deps.log.error({ err: error, fileId }, 'inline DOCX conversion failed');
    const code = isDomainError(error) ? error.code : 'CONVERSION_FAILED';
    const message = isDomainError(error) ? error.message : 'The document could not be converted';
    await deps.db.transaction(async (tx) => {
      const failed = await tx.query(sql.type(AnyRow)`
        update files set status = 'failed', phase = null, error_code = ${code}, error_message = ${message}, updated_at = now()
         where id = ${fileId} and status = 'processing'`);
      if (failed.rowCount === 0) return;
      if (file.holdId) await releaseOpenHold(tx, file.holdId);
      await tx.query(sql.type(AnyRow)`
        insert into outbox_events (type, aggregate_id, payload) values ('conversion.failed', ${fileId}, ${sql.jsonb({ fileId, jobId: null, inline: true, code, message })})`);
      await tx.query(sql.type(AnyRow)`select ${notifyFragment(fileId, null, 'failed')}`);
    });
  } finally {
    clearInterval(beat);
  }
}

/** The heartbeat: true while the file is still converting on this hold (a cancel or a delete makes it false). */
async function stillProcessing(db: Deps['db'], fileId: string, holdId: string | null): Promise<boolean> {
  const beat = await db.query(sql.type(AnyRow)`
    update files set updated_at = now() where id = ${fileId} and status = 'processing' and hold_id is not distinct from ${holdId}`);
  return beat.rowCount > 0;
}

/** The work's result, or the signal's reason as soon as it aborts (the work itself may go on; its result is dropped). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
