import { pipeline } from 'node:stream/promises';
import { openFlyerHtml } from '../flyers/request-flyer.ts';
import { acceptBodilessPost } from '../http/empty-post.ts';
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
      if (!html) {
        res.status(404).json({ code: 'NOT_FOUND', message: 'Not found' });
        return;
      }
      res.status(200).set({
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': "sandbox; default-src 'none'; style-src 'unsafe-inline'",
        'cache-control': 'private, no-store',
        'x-robots-tag': 'noindex',
      });
      await pipeline(html, res);
    } catch (error) {
      deps.log.warn({ err: error }, 'flyer html could not be served');
      if (!res.headersSent) res.status(500).json({ code: 'INTERNAL', message: 'Internal error' });
      else res.destroy();
    }
  });
};
