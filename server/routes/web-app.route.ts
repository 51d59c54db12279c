import path from 'node:path';
import express, { type Express } from 'express';

const DIST = path.resolve(import.meta.dirname, '../../web/dist');

/** The app talks to this origin only; nothing inline, no framing. */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/**
 * The web app's static build (web/dist, built by `npm start` when missing) at
 * `/`. Asset names carry a content hash, so they are cached for a year; the
 * page itself is revalidated. Without a build, `/` stays a 404.
 */
export function mountWebApp(app: Express) {
  app.use('/assets', express.static(path.join(DIST, 'assets'), { immutable: true, maxAge: '365d', index: false, fallthrough: true }));
  app.get(['/', '/index.html'], (_req, res, next) => {
    res.set(PAGE_HEADERS).sendFile(path.join(DIST, 'index.html'), (error) => {
      if (error) next();
    });
  });
}
