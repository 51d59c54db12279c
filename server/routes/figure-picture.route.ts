import type { Express } from 'express';
import { z } from 'zod';
import { verifyDownloadToken } from '../conversion-jobs/download-token.ts';
import { FigureIdSchema } from '../conversion/figures.ts';
import { readFigurePicture } from '../figures/read-figure-picture.ts';
import { isDomainError } from '../errors.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import type { AppDeps } from '../trpc/context.ts';

/**
 * GET /api/files/:fileId/figures/:figureId/picture?token=: a figure's picture,
 * for whoever describes it. The token is the file's download token (the
 * figures list hands it out), so an <img> can show it without credentials;
 * a wrong token and a missing figure both answer a bare 403 or 404.
 */
export function mountFigurePicture(app: Express, deps: AppDeps) {
  const downloadSecret = resolveSigningSecrets(deps.config).download;
  app.get('/api/files/:fileId/figures/:figureId/picture', async (req, res) => {
    const fileId = z.uuid().safeParse(req.params.fileId);
    const figureId = FigureIdSchema.safeParse(req.params.figureId);
    if (!fileId.success || !figureId.success || !verifyDownloadToken(downloadSecret, fileId.data, req.query.token, deps.clock.now())) {
      res.status(403).json({ code: 'FORBIDDEN', message: 'Forbidden' });
      return;
    }
    try {
      const picture = await readFigurePicture(deps, fileId.data, figureId.data);
      res.status(200).set({ 'content-type': picture.mime, 'cache-control': 'private, max-age=3600', 'x-content-type-options': 'nosniff' }).end(picture.bytes);
    } catch (error) {
      if (isDomainError(error) && (error.code === 'NOT_FOUND' || error.code === 'FIGURES_UNAVAILABLE')) {
        res.status(404).json({ code: 'NOT_FOUND', message: 'No such picture' });
        return;
      }
      deps.log.warn({ err: error }, 'figure picture failed');
      if (!res.headersSent) res.status(500).json({ code: 'INTERNAL', message: 'Internal error' });
    }
  });
}
