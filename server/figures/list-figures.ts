import { readDescriptions } from './figures.queries.ts';
import { loadFinishedJob, summarisePage, type FigureSummary, type FiguresDeps } from './figures.ts';
import { readStoredPages } from './stored-pages.ts';

/**
 * Every figure of the file's latest finished conversion, in page order, with
 * what a describer needs (picture link, caption, nearby text, the text drawn
 * in it) and its description so far. Throws FIGURES_UNAVAILABLE when the file
 * has no finished chunked conversion.
 */
export async function listFigures(deps: FiguresDeps, fileId: string): Promise<{ jobId: string; figures: FigureSummary[] }> {
  const job = await loadFinishedJob(deps, fileId);
  const descriptions = await readDescriptions(deps.db, job.jobId);
  const figures: FigureSummary[] = [];
  for await (const page of readStoredPages(deps.store, job.chunkKeys)) figures.push(...summarisePage(deps, fileId, page, descriptions));
  return { jobId: job.jobId, figures };
}
