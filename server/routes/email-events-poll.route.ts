import type { RawRouteMount } from './index.ts';

/**
 * The poller is called by cron jobs that POST with no body and no content
 * type; the OpenAPI bridge answers such a POST 415. For this one path an empty
 * body is declared JSON, so the procedure (emailEvents.poll) serves it.
 */
export const mountEmailEventsPollShim: RawRouteMount = (app) => {
  app.post('/internal/email-events/poll', (req, _res, next) => {
    const length = req.headers['content-length'];
    const empty = (length === undefined || length === '0') && req.headers['transfer-encoding'] === undefined;
    if (!req.headers['content-type'] && empty) req.headers['content-type'] = 'application/json';
    next();
  });
};
