import type { Express } from 'express';
import { acceptBodilessPost } from '../http/empty-post.ts';
import { sendError } from '../http/errors.ts';
import { receiveUpload } from '../files/upload.ts';
import { authenticateUser } from '../http/guards.ts';
import type { AppDeps } from '../trpc/context.ts';

/** POST /api/files: multipart upload, streamed to the object store. */
export function mountFileUpload(app: Express, deps: AppDeps) {
  acceptBodilessPost(app, /^\/api\/v1\/files\/[^/]+\/(cancel|process-now)$/);
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
