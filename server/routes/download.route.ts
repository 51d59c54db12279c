import type { Express, Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { z } from 'zod';
import { sql } from '../db/database.ts';
import { verifyDownloadToken } from '../conversion-jobs/download-token.ts';
import { inlineResultKey } from '../files/docx.ts';
import { DomainError } from '../errors.ts';
import { sendError } from '../http/errors.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import { SANDBOXED_DOCUMENT_HEADERS } from '../sharing/html.ts';
import { isDocumentHtml, openZipEntry } from '../storage/zip-entry.ts';
import type { AppDeps } from '../trpc/context.ts';

const Target = z.object({ originalName: z.string(), resultKey: z.string().nullable(), status: z.string() });

/**
 * GET /api/download/:fileId/zip?token=: the token is the only credential.
 * GET /api/download/:fileId/html?token=: the accessible HTML out of the same
 * zip, to open in a browser tab, with the same token (the links are issued
 * together). Wrong, expired, tampered, or nothing to download all answer the
 * same bare 403.
 */
export function mountDownload(app: Express, deps: AppDeps) {
  const secret = resolveSigningSecrets(deps.config).download;
  const forbidden = (res: Response) => sendError(res, new DomainError('FORBIDDEN', 'Forbidden'));

  /** The finished file's zip key and name, or undefined for anything that must answer 403. */
  async function resultOf(req: Request): Promise<{ key: string; base: string } | undefined> {
    const fileId = z.uuid().safeParse(req.params.fileId);
    if (!fileId.success || !verifyDownloadToken(secret, fileId.data, req.query.token, deps.clock.now())) return undefined;
    const target = await deps.db.maybeOne(sql.type(Target)`
      select f.original_name as "originalName", f.status,
             (select j.result_key from large_conversion_jobs j where j.file_id = f.id and j.status = 'completed' order by j.created_at desc limit 1) as "resultKey"
        from files f where f.id = ${fileId.data}`);
    if (target?.status !== 'completed') return undefined;
    const key = target.resultKey ?? inlineResultKey(fileId.data);
    if (!(await deps.store.exists(key))) return undefined;
    return { key, base: (target.originalName.replace(/\.[^.]+$/, '') || 'document').replace(/[^\w.-]+/g, '_') };
  }

  const failed = (res: Response, error: unknown) => {
    deps.log.warn({ err: error }, 'download failed');
    if (res.headersSent) res.destroy();
    else sendError(res, error);
  };

  app.get('/api/download/:fileId/zip', async (req, res) => {
    try {
      const result = await resultOf(req);
      if (!result) return forbidden(res);
      const body = await deps.store.get(result.key);
      res
        .status(200)
        .set({ 'content-type': 'application/zip', 'content-disposition': `attachment; filename="${result.base}.zip"`, 'cache-control': 'private, no-store' });
      await pipeline(body, res);
    } catch (error) {
      failed(res, error);
    }
  });

  app.get('/api/download/:fileId/html', async (req, res) => {
    try {
      const result = await resultOf(req);
      // read from the zip each time: describing a figure replaces the zip, and the tab shows the latest rendering
      const html = result && (await openZipEntry(deps.store, result.key, isDocumentHtml));
      if (!html) return forbidden(res);
      res.status(200).set({ ...SANDBOXED_DOCUMENT_HEADERS, 'content-disposition': `inline; filename="${result.base}.html"` });
      await pipeline(html, res);
    } catch (error) {
      failed(res, error);
    }
  });
}
