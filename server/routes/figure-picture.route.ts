import type { Express } from 'express';
import { z } from 'zod';
import { verifyDownloadToken } from '../conversion-jobs/download-token.ts';
import { FigureIdSchema } from '../conversion/figures.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { readFigurePicture } from '../figures/read-figure-picture.ts';
import { sendError } from '../http/errors.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import type { AppDeps } from '../trpc/context.ts';

/**
 * GET /api/files/:fileId/figures/:figureId/picture?token=: a figure's picture,
 * for whoever describes it. The token is the file's download token (the
 * figures list hands it out), so an <img> can show it without credentials; a
 * wrong or expired token is a bare 403, a figure without a picture a 404.
 */
export function mountFigurePicture(app: Express, deps: AppDeps) {
  const secret = resolveSigningSecrets(deps.config).download;
  app.get('/api/files/:fileId/figures/:figureId/picture', async (req, res) => {
    const fileId = z.uuid().safeParse(req.params.fileId);
    const figureId = FigureIdSchema.safeParse(req.params.figureId);
    if (!fileId.success || !figureId.success || !verifyDownloadToken(secret, fileId.data, req.query.token, deps.clock.now())) {
      return sendError(res, new DomainError('FORBIDDEN', 'Forbidden'));
    }
    try {
      const picture = await readFigurePicture(deps, fileId.data, figureId.data);
      res.status(200).set({ 'content-type': picture.mime, 'cache-control': 'private, max-age=3600', 'x-content-type-options': 'nosniff' }).end(picture.bytes);
    } catch (error) {
      if (isDomainError(error) && error.code === 'FIGURES_UNAVAILABLE') return sendError(res, new DomainError('NOT_FOUND', 'No such picture'));
      if (!isDomainError(error)) deps.log.warn({ err: error }, 'figure picture failed');
      sendError(res, error);
    }
  });
}
