import type { Express } from 'express';

/**
 * Some POST routes take no body (cancel, process-now, the events poll, a
 * webhook's rotate-secret and test) and their callers send none, with no
 * content type; the OpenAPI bridge refuses such a POST with 415. On these
 * paths an empty body is read as empty JSON; a real body keeps its type.
 */
export function acceptBodilessPost(app: Express, path: string | RegExp): void {
  app.post(path, (req, _res, next) => {
    const length = req.headers['content-length'];
    const empty = (length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined;
    if (!req.headers['content-type'] && empty) req.headers['content-type'] = 'application/json';
    next();
  });
}
