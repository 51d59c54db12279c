import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { FigureDescription } from '../conversion/figures.ts';
import { readAll } from '../storage/storage.ts';
import { lockJobRender, readDescriptions, storeDescription } from './figures.queries.ts';
import { findStoredFigure, loadFinishedJob, summarisePage, type FigureSummary, type FiguresDeps } from './figures.ts';
import { readStoredPages } from './stored-pages.ts';
import { withoutTaggedPdf } from '../conversion-jobs/conversion-deps.ts';

export type DescribeFigureResult = { figure: FigureSummary; wcagStatus: 'passed' | 'failed'; figuresNeedingAlt: number };

/**
 * Stores a person's description of one figure (alt text, or decorative) and
 * renders the HTML, tagged PDF and report again from the stored pages, with
 * every description of the job applied; the new outputs replace the old zip
 * under the same key, so the download link stays the same. Nothing is
 * converted and nothing is charged. The description and the new outputs
 * stand or fall together: a render that fails stores nothing. Renders of one
 * job take turns, so the zip always reflects the newest descriptions.
 */
export async function describeFigure(
  deps: FiguresDeps,
  input: { fileId: string; figureId: string; description: FigureDescription; userId: string },
): Promise<DescribeFigureResult> {
  const job = await loadFinishedJob(deps, input.fileId);
  await findStoredFigure(deps, job, input.figureId);
  const engine = await deps.engine();
  const source = await readAll(await deps.store.get(job.sourceKey));
  const meta = await engine.inspect(new Uint8Array(source.buffer, source.byteOffset, source.byteLength), { sourceName: job.originalName });
  const baseName = job.originalName.replace(/\.[^.]+$/, '') || 'document';
  return deps.db.transaction(async (tx) => {
    await lockJobRender(tx, job.jobId);
    await storeDescription(tx, { jobId: job.jobId, figureId: input.figureId, description: input.description, userId: input.userId });
    const descriptions = await readDescriptions(tx, job.jobId);
    const scratch = await mkdtemp(path.join(os.tmpdir(), 'folio-figures-'));
    try {
      const render = engine.openRender(
        meta,
        { dir: scratch, baseName: 'document' },
        {
          figures: descriptions,
          withoutTaggedPdf: withoutTaggedPdf(job.options),
        },
      );
      let figure: FigureSummary | undefined;
      let outputs;
      try {
        for await (const page of readStoredPages(deps.store, job.chunkKeys)) {
          await render.add(page);
          figure ??= summarisePage(deps, input.fileId, page, descriptions).find((entry) => entry.id === input.figureId);
        }
        outputs = await render.finish();
      } catch (error) {
        await render.abort();
        throw error;
      }
      await deps.store.put(job.resultKey, engine.zipFiles(outputs, baseName), { contentType: 'application/zip' });
      deps.log.info(
        { fileId: input.fileId, jobId: job.jobId, figureId: input.figureId, wcagStatus: outputs.report.wcagStatus },
        'figure described; outputs rendered again',
      );
      return { figure: figure!, wcagStatus: outputs.report.wcagStatus, figuresNeedingAlt: outputs.report.figuresNeedingAlt?.length ?? 0 };
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  });
}
