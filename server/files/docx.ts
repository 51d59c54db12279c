import mammoth from 'mammoth';
import { z } from 'zod';
import { AnyRow, sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { DocumentMeta, PageResult } from '../conversion/model.ts';
import { htmlToBlocks } from '../conversion/backends/vision/html-to-blocks.ts';
import type { EngineProvider } from '../conversion-jobs/engine-provider.ts';
import { notifyFragment } from '../conversion-jobs/conversion-jobs.queries.ts';
import { isDomainError } from '../errors.ts';
import { readAll, type ObjectStore } from '../storage/storage.ts';

export const DOCX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export function inlineResultKey(fileId: string) {
  return `files/${fileId}/inline/result.zip`;
}

/**
 * The inline path: DOCX → HTML (mammoth) → document model → the engine's
 * render (audit included) and zip. One step with no chunk job, so it cannot
 * be cancelled; the file is `processing` until it ends.
 */
export async function runInlineDocx(deps: Pick<Deps, 'db' | 'log'> & { store: ObjectStore; engine: EngineProvider }, fileId: string): Promise<void> {
  const file = await deps.db.maybeOne(sql.type(z.object({ storageKey: z.string(), originalName: z.string(), status: z.string() }))`
    select storage_key as "storageKey", original_name as "originalName", status from files where id = ${fileId}`);
  if (file?.status !== 'processing') return;
  try {
    const source = await readAll(await deps.store.get(file.storageKey));
    const { value: html } = await mammoth.convertToHtml({ buffer: source });
    const baseName = file.originalName.replace(/\.[^.]+$/, '') || 'document';
    const page: PageResult = {
      page: 1,
      label: '1',
      backend: 'local',
      classification: 'standard',
      reasons: [],
      blocks: htmlToBlocks(html, 1),
      warnings: [],
      textLayerWords: html.split(/\s+/).length,
      ocr: false,
      timings: { ms: 0 },
      costUsd: 0,
    };
    const meta: DocumentMeta = { title: baseName, lang: 'en', pageCount: 1, tagged: false, sourceName: file.originalName };
    const engine = await deps.engine();
    const outputs = await engine.render({ meta, pages: [page] });
    await deps.store.put(inlineResultKey(fileId), engine.zip(outputs, baseName), { contentType: 'application/zip' });
    await deps.db.transaction(async (tx) => {
      const done = await tx.query(sql.type(AnyRow)`
        update files set status = 'completed', phase = null, page_count = 1, updated_at = now() where id = ${fileId} and status = 'processing'`);
      if (done.rowCount === 0) return;
      await tx.query(sql.type(AnyRow)`
        insert into outbox_events (type, aggregate_id, payload)
        values ('conversion.completed', ${fileId}, ${sql.jsonb({ fileId, jobId: null, pages: 1, inline: true, wcagStatus: outputs.report.wcagStatus })})`);
      await tx.query(sql.type(AnyRow)`select ${notifyFragment(fileId, null, 'completed')}`);
    });
  } catch (error) {
    deps.log.error({ err: error, fileId }, 'inline DOCX conversion failed');
    const code = isDomainError(error) ? error.code : 'CONVERSION_FAILED';
    const message = isDomainError(error) ? error.message : 'The document could not be converted';
    await deps.db.transaction(async (tx) => {
      await tx.query(sql.type(AnyRow)`
        update files set status = 'failed', phase = null, error_code = ${code}, error_message = ${message}, updated_at = now() where id = ${fileId}`);
      await tx.query(sql.type(AnyRow)`
        insert into outbox_events (type, aggregate_id, payload) values ('conversion.failed', ${fileId}, ${sql.jsonb({ fileId, jobId: null, inline: true, code, message })})`);
      await tx.query(sql.type(AnyRow)`select ${notifyFragment(fileId, null, 'failed')}`);
    });
  }
}
