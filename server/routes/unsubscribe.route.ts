import express from 'express';
import { unsubscribeAddress, unsubscribeTokenValid } from '../outreach/unsubscribe-address.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import { escapeHtml } from '../sharing/html.ts';
import type { RawRouteMount } from './index.ts';

const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;

const INVALID = page('This link is not valid', '<p>The unsubscribe link is damaged. Reply to the email and we will remove you by hand.</p>');

/**
 * GET /api/unsubscribe?token=: a page with one button (a GET never
 * unsubscribes: mail scanners open every link). POST /api/unsubscribe?token=:
 * the one-click unsubscribe of the List-Unsubscribe-Post header (body
 * `List-Unsubscribe=One-Click`) and of that button; it works every time.
 */
export const mountUnsubscribeRoute: RawRouteMount = (app, deps) => {
  const linkDeps = () => ({ ...deps, linkSecret: resolveSigningSecrets(deps.config).download });
  const headers = { 'cache-control': 'no-store', 'x-robots-tag': 'noindex', 'referrer-policy': 'no-referrer' };
  app.get('/api/unsubscribe', (req, res) => {
    const token = req.query.token;
    if (!unsubscribeTokenValid(linkDeps(), token)) {
      res.status(404).set(headers).type('html').send(INVALID);
      return;
    }
    const action = `/api/unsubscribe?token=${encodeURIComponent(String(token))}`;
    res
      .status(200)
      .set(headers)
      .type('html')
      .send(
        page(
          'Unsubscribe',
          `<p>Stop getting our outreach emails at this address?</p><form method="post" action="${escapeHtml(action)}"><button type="submit">Unsubscribe</button></form>`,
        ),
      );
  });
  app.post('/api/unsubscribe', express.urlencoded({ extended: false, limit: '1kb' }), async (req, res) => {
    try {
      const oneClick = (req.body as Record<string, unknown> | undefined)?.['List-Unsubscribe'] === 'One-Click';
      const outcome = await unsubscribeAddress(linkDeps(), req.query.token, oneClick ? 'one-click' : 'page');
      if (!outcome) {
        res.status(404).set(headers).type('html').send(INVALID);
        return;
      }
      res.status(200).set(headers).type('html').send(page('You are unsubscribed', '<p>We will not send outreach email to this address again.</p>'));
    } catch (error) {
      deps.log.error({ err: error }, 'unsubscribe failed');
      res.status(500).set(headers).type('html').send(page('Please try again', '<p>We could not record your request just now.</p>'));
    }
  });
};
