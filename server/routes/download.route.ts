import type { Express } from 'express';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { sql } from '../db/database.ts';
import { verifyDownloadToken } from '../conversion-jobs/download-token.ts';
import { inlineResultKey } from '../files/docx.ts';
import { DomainError } from '../errors.ts';
import { sendError } from '../http/errors.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import type { AppDeps } from '../trpc/context.ts';

const Target = z.object({ originalName: z.string(), resultKey: z.string().nullable(), status: z.string() });

/**
 * GET /api/download/:fileId/zip?token=: the token is the only credential.
 * Wrong, expired, tampered, or nothing to download all answer the same bare 403.
 */
export function mountDownload(app: Express, deps: AppDeps) {
  const secret = resolveSigningSecrets(deps.config).download;
  app.get('/api/download/:fileId/zip', async (req, res) => {
    const forbidden = () => sendError(res, new DomainError('FORBIDDEN', 'Forbidden'));
    const fileId = z.uuid().safeParse(req.params.fileId);
    if (!fileId.success || !verifyDownloadToken(secret, fileId.data, req.query.token, deps.clock.now())) return forbidden();
    try {
      const target = await deps.db.maybeOne(sql.type(Target)`
        select f.original_name as "originalName", f.status,
               (select j.result_key from large_conversion_jobs j where j.file_id = f.id and j.status = 'completed' order by j.created_at desc limit 1) as "resultKey"
          from files f where f.id = ${fileId.data}`);
      if (target?.status !== 'completed') return forbidden();
      const key = target.resultKey ?? inlineResultKey(fileId.data);
      const store = deps.store;
      if (!(await store.exists(key))) return forbidden();
      const body = await store.get(key);
      const base = (target.originalName.replace(/\.[^.]+$/, '') || 'document').replace(/[^\w.-]+/g, '_');
      res
        .status(200)
        .set({ 'content-type': 'application/zip', 'content-disposition': `attachment; filename="${base}.zip"`, 'cache-control': 'private, no-store' });
      await pipeline(body, res);
    } catch (error) {
      deps.log.warn({ err: error }, 'download failed');
      if (res.headersSent) res.destroy();
      else sendError(res, error);
    }
  });
}
