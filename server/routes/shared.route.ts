import { pipeline } from 'node:stream/promises';
import { resolveSigningSecrets } from '../secrets.ts';
import { SANDBOXED_DOCUMENT_HEADERS } from '../sharing/html.ts';
import { openSharedHtml } from '../sharing/open-shared-html.ts';
import type { RawRouteMount } from './index.ts';

const GONE_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Link not available</title></head>
<body><main><h1>This link is not available</h1><p>The shared document was removed or the link has expired. Ask the sender to share it again.</p></main></body></html>`;

/**
 * GET /api/shared/:token: the accessible HTML a share mailed, for anyone with
 * the link. Served as a document of its own origin's sandbox (no scripts, no
 * outside requests), so shared content can never act on the API.
 */
export const mountSharedRoute: RawRouteMount = (app, deps) => {
  app.get('/api/shared/:token', async (req, res) => {
    try {
      const html = await openSharedHtml({ ...deps, store: deps.store, linkSecret: resolveSigningSecrets(deps.config).download }, req.params.token);
      if (!html) {
        res.status(404).type('html').send(GONE_PAGE);
        return;
      }
      res.status(200).set(SANDBOXED_DOCUMENT_HEADERS);
      await pipeline(html, res);
    } catch (error) {
      deps.log.warn({ err: error }, 'shared document could not be served');
      if (!res.headersSent) res.status(500).json({ code: 'INTERNAL', message: 'Internal error' });
      else res.destroy();
    }
  });
};
