import { pipeline } from 'node:stream/promises';
import { openFlyerHtml } from '../flyers/request-flyer.ts';
import { DomainError } from '../errors.ts';
import { acceptBodilessPost } from '../http/empty-post.ts';
import { sendError } from '../http/errors.ts';
import { SANDBOXED_DOCUMENT_HEADERS } from '../sharing/html.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import type { RawRouteMount } from './index.ts';

/** A flyer job's request, cancel and comped reflow take no body. */
export const mountFlyerBodilessPosts: RawRouteMount = (app) =>
  acceptBodilessPost(app, /^\/api\/(flyers\/[^/]+\/(cancel|comped-reflow)|files\/[^/]+\/preserve-formatting)$/);

/**
 * GET /api/flyers/:flyerJobId/html?token=: the positioned HTML of a completed
 * flyer job for the link its status handed out (24 hours), sandboxed like a
 * shared document.
 */
export const mountFlyerHtml: RawRouteMount = (app, deps) => {
  app.get('/api/flyers/:flyerJobId/html', async (req, res) => {
    try {
      const html = await openFlyerHtml({ ...deps, linkSecret: resolveSigningSecrets(deps.config).download }, req.params.flyerJobId, req.query.token);
      if (!html) return sendError(res, new DomainError('NOT_FOUND', 'Not found'));
      res.status(200).set(SANDBOXED_DOCUMENT_HEADERS);
      await pipeline(html, res);
    } catch (error) {
      deps.log.warn({ err: error }, 'flyer html could not be served');
      if (res.headersSent) res.destroy();
      else sendError(res, error);
    }
  });
};
