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
 * The inline path: DOCX → blocks (mammoth, in a page worker whose heap is
 * capped, never on this thread) → the engine's render (audit included) and
 * zip. One step with no chunk job, so it cannot be cancelled (specification:
 * not interruptible); the file is `processing` until it ends. The upload
 * counted its pages and holds their credits: completing settles the hold at
 * that count, failing releases it.
 */
export async function runInlineDocx(deps: Pick<Deps, 'db' | 'log'> & { store: ObjectStore; engine: EngineProvider }, fileId: string): Promise<void> {
  const file = await deps.db.maybeOne(sql.type(
    z.object({ storageKey: z.string(), originalName: z.string(), status: z.string(), pageCount: z.number().nullable(), holdId: z.uuid().nullable() }),
  )`
    select storage_key as "storageKey", original_name as "originalName", status, page_count as "pageCount", hold_id as "holdId" from files where id = ${fileId}`);
  if (file?.status !== 'processing') return;
  // a file queued before DOCX pages were counted has no hold: it is refused rather than converted for nothing
  const pages = file.pageCount ?? 0;
  try {
    if (!file.holdId || pages < 1) throw new DomainError('CONFLICT', 'The DOCX has no credit hold; upload it again');
    const source = await readAll(await deps.store.get(file.storageKey));
    const baseName = file.originalName.replace(/\.[^.]+$/, '') || 'document';
    const engine = await deps.engine();
    const { blocks, words } = await engine.convertDocx(new Uint8Array(source.buffer, source.byteOffset, source.byteLength));
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
    const outputs = await engine.render({ meta, pages: [page] });
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
  }
}
