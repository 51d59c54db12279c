import { z } from 'zod';
import { signDownloadToken } from '../conversion-jobs/download-token.ts';
import { altFromCaption, describePage, pageFigures, type FigureBlock, type FigureDescriptions, type PageFigure } from '../conversion/figures.ts';
import type { Deps } from '../deps.ts';
import { inlineText } from '../conversion/render/text.ts';
import { DomainError } from '../errors.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import { findFinishedJob, type FinishedJob } from './figures.queries.ts';
import { readStoredPages } from './stored-pages.ts';

/** What every figures operation needs: the database, the store holding the stored pages, the engine to render again. */
export type FiguresDeps = Pick<Deps, 'db' | 'clock' | 'log' | 'config' | 'store' | 'engine'>;

export const FigureSummary = z.object({
  id: z.string(),
  page: z.number(),
  /** the picture, as a link that needs no credentials for 24 hours (like the download link); null when none was extracted */
  pictureUrl: z.string().nullable(),
  caption: z.string().nullable(),
  /** text just before and after the figure on its page */
  nearbyText: z.string(),
  /** words drawn inside the figure (a chart's labels) */
  figureText: z.string().nullable(),
  alt: z.string().nullable(),
  decorative: z.boolean(),
  needsAlt: z.boolean(),
  /** who described it: the document's own tags or the vision model, its caption, or a person through this API */
  altSource: z.enum(['document', 'caption', 'person']).nullable(),
});
export type FigureSummary = z.infer<typeof FigureSummary>;

export async function loadFinishedJob(deps: Pick<FiguresDeps, 'db'>, fileId: string): Promise<FinishedJob> {
  const job = await findFinishedJob(deps.db, fileId);
  if (!job) throw new DomainError('FIGURES_UNAVAILABLE', 'This file has no finished conversion whose figures can be described');
  return job;
}

/** The figures of one stored page as the API shows them, with the descriptions applied. */
export function summarisePage(
  deps: Pick<FiguresDeps, 'clock' | 'config'>,
  fileId: string,
  page: Parameters<typeof pageFigures>[0],
  descriptions: FigureDescriptions,
): FigureSummary[] {
  const original = pageFigures(page);
  const described = pageFigures(describePage(page, descriptions));
  const token = encodeURIComponent(signDownloadToken(resolveSigningSecrets(deps.config).download, fileId, deps.clock.now()));
  return described.map((entry: PageFigure, index) => {
    const before: FigureBlock = original[index]!.figure;
    const { figure } = entry;
    const caption = inlineCaption(figure);
    const altSource = descriptions.has(entry.id)
      ? 'person'
      : before.alt?.trim()
        ? 'document'
        : figure.alt && figure.alt === altFromCaption(figure.caption)
          ? 'caption'
          : null;
    return {
      id: entry.id,
      page: entry.page,
      pictureUrl: figure.image ? `/api/files/${fileId}/figures/${entry.id}/picture?token=${token}` : null,
      caption: caption || null,
      nearbyText: entry.nearbyText,
      figureText: figure.text?.trim() || null,
      alt: figure.alt?.trim() || null,
      decorative: figure.decorative,
      needsAlt: !figure.decorative && !figure.alt?.trim(),
      altSource,
    };
  });
}

function inlineCaption(figure: FigureBlock): string {
  return inlineText(figure.caption).replace(/\s+/g, ' ').trim();
}

/** Finds one figure's page in the stored pages, or throws NOT_FOUND. */
export async function findStoredFigure(deps: Pick<FiguresDeps, 'store'>, job: FinishedJob, figureId: string) {
  const pageNumber = Number(/^p(\d+)-/.exec(figureId)?.[1] ?? Number.NaN);
  for await (const page of readStoredPages(deps.store, job.chunkKeys)) {
    if (page.page !== pageNumber) continue;
    const found = pageFigures(page).find((entry) => entry.id === figureId);
    if (found) return { page, figure: found };
    break;
  }
  throw new DomainError('NOT_FOUND', 'No figure with this id in the conversion');
}
