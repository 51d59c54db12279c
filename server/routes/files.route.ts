import type { Express } from 'express';
import { sendError } from '../http/errors.ts';
import { receiveUpload } from '../files/upload.ts';
import { authenticateUser } from '../http/guards.ts';
import type { AppDeps } from '../trpc/context.ts';

/** POST /api/files: multipart upload, streamed to the object store. */
export function mountFileUpload(app: Express, deps: AppDeps) {
  // Cancel and process-now take no body; the OpenAPI adapter refuses a POST
  // without a content type (415), so a bodiless call is read as empty JSON.
  app.post(/^\/api\/v1\/files\/[^/]+\/(cancel|process-now)$/, (req, _res, next) => {
    if (!req.headers['content-type']) req.headers['content-type'] = 'application/json';
    next();
  });
  app.post('/api/files', async (req, res) => {
    try {
      const user = await authenticateUser(deps, req.headers);
      const file = await receiveUpload(deps, user, req);
      res.status(201).json(file);
    } catch (error) {
      // An early answer (413, 415) while the client is still sending: close the connection so it stops.
      if (!req.complete) res.setHeader('connection', 'close');
      sendError(res, error);
    }
  });
}
