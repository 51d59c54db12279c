import { DomainError } from '../errors.ts';
import { findStoredFigure, loadFinishedJob, type FiguresDeps } from './figures.ts';

/** One figure's picture as stored with the conversion: its bytes and type. Throws NOT_FOUND when it has none. */
export async function readFigurePicture(deps: Pick<FiguresDeps, 'db' | 'store'>, fileId: string, figureId: string): Promise<{ mime: string; bytes: Buffer }> {
  const job = await loadFinishedJob(deps, fileId);
  const { figure } = await findStoredFigure(deps, job, figureId);
  const image = figure.figure.image;
  if (!image) throw new DomainError('NOT_FOUND', 'This figure has no picture');
  return { mime: image.mime, bytes: Buffer.from(image.base64, 'base64') };
}
