import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { DocumentRender } from '../conversion/engine.ts';
import type { DocumentMeta, PageResult } from '../conversion/model.ts';
import { settleHold } from '../credits/credits.ts';
import { isDomainError } from '../errors.ts';
import { readAll } from '../storage/storage.ts';
import { backendFor, jobObjectKey, withoutTaggedPdf, type ConversionDeps } from './conversion-deps.ts';
import {
  insertOutboxEvent,
  markFileCompleted,
  markJobCompleted,
  notifyConversion,
  selectAssemblyJob,
  selectChunkResultKeys,
} from './conversion-jobs.queries.ts';
import { failConversion } from './fail-conversion.ts';

/**
 * Assembly: chunk results in page order → render → zip in the store, then
 * (guarded assembling → completed) the hold settled at 1 credit per page and
 * conversion.completed in the outbox. Re-running after a crash redoes only
 * the idempotent parts; settlement happens once. A failure fails the job.
 */
export async function assembleConversion(deps: ConversionDeps, input: { jobId: string }): Promise<'completed' | 'skipped'> {
  const { db } = deps;
  const { jobId } = input;
  const job = await selectAssemblyJob(db, jobId);
  if (job?.status !== 'assembling') return 'skipped';
  try {
    const resultKeys = await selectChunkResultKeys(db, jobId);
    const engine = await deps.engine();
    const source = await readAll(await deps.store.get(job.sourceKey));
    const meta: DocumentMeta = await engine.inspect(new Uint8Array(source.buffer, source.byteOffset, source.byteLength), { sourceName: job.originalName });
    const baseName = job.originalName.replace(/\.[^.]+$/, '') || 'document';
    // Chunks are in page order and each holds its pages in order: they stream into the renderer one
    // chunk at a time, and the outputs go through a scratch folder, so no step holds the whole document.
    const scratch = await mkdtemp(path.join(os.tmpdir(), 'folio-assemble-'));
    let outputs: Awaited<ReturnType<DocumentRender['finish']>>;
    const zipKey = jobObjectKey(job.fileId, jobId, 'result.zip');
    try {
      const render = engine.openRender(meta, { dir: scratch, baseName: 'document' }, { withoutTaggedPdf: withoutTaggedPdf(job.options) });
      try {
        for (const key of resultKeys) {
          const stored = JSON.parse((await readAll(await deps.store.get(key))).toString('utf8')) as { pages: PageResult[] };
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
    // A job without a hold is a comped reflow: free, so nothing is charged or reported as charged.
    const credits = job.holdId ? job.totalPages * Math.max(1, deps.config.conversion.highFidelityCreditMultiplier) : 0;
    const finished = await db.transaction(async (tx) => {
      if (!(await markJobCompleted(tx, jobId, zipKey, credits))) return false;
      if (job.holdId) await settleHold(tx, job.holdId, credits);
      await markFileCompleted(tx, job.fileId);
      await insertOutboxEvent(tx, 'conversion.completed', job.fileId, {
        fileId: job.fileId,
        jobId,
        userId: job.ownerId,
        originalName: job.originalName,
        backend: backendFor(job.options),
        pages: job.totalPages,
        credits,
        wcagStatus: outputs.report.wcagStatus,
      });
      await notifyConversion(tx, job.fileId, jobId, 'completed');
      return true;
    });
    return finished ? 'completed' : 'skipped';
  } catch (error) {
    await failConversion(deps, {
      jobId,
      code: isDomainError(error) ? error.code : 'ASSEMBLY_FAILED',
      message: isDomainError(error) ? error.message : 'Assembling the conversion failed',
      cause: error,
    });
    throw error;
  }
}
