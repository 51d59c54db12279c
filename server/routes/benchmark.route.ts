import type { Express } from 'express';
import { pipeline as pipe } from 'node:stream/promises';
import { z } from 'zod';
import { selectResults } from '../benchmark/benchmark.queries.ts';
import { OUTPUT_KINDS, outputTokenSubject } from '../benchmark/read-benchmark.ts';
import { verifyDownloadToken } from '../conversion-jobs/download-token.ts';
import { DomainError } from '../errors.ts';
import { sendError } from '../http/errors.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import type { AppDeps } from '../trpc/context.ts';

const Params = z.object({ sessionId: z.uuid(), pipeline: z.coerce.number().int().min(0).max(5), kind: z.enum(OUTPUT_KINDS) });

const CONTENT_TYPES = { html: 'text/html; charset=utf-8', pdf: 'application/pdf', report: 'text/html; charset=utf-8' } as const;
const FILE_NAMES = { html: 'document.html', pdf: 'document.accessible.pdf', report: 'document.report.html' } as const;

/**
 * GET /api/benchmark/:sessionId/pipelines/:pipeline/:kind?token=: one output
 * (html, pdf, report) of a finished pipeline, as the links of GET
 * /api/benchmark/:sessionId give them out. The token is the only credential
 * (bound to session and pipeline, 24 hours); a wrong one, or nothing to
 * download, is the same bare 403.
 */
export function mountBenchmarkDownload(app: Express, deps: AppDeps) {
  const secret = resolveSigningSecrets(deps.config).download;
  app.get('/api/benchmark/:sessionId/pipelines/:pipeline/:kind', async (req, res) => {
    const forbidden = () => sendError(res, new DomainError('FORBIDDEN', 'Forbidden'));
    const params = Params.safeParse(req.params);
    if (!params.success) return forbidden();
    const { sessionId, pipeline, kind } = params.data;
    if (!verifyDownloadToken(secret, outputTokenSubject(sessionId, pipeline), req.query.token, deps.clock.now())) return forbidden();
    try {
      const result = (await selectResults(deps.db, sessionId)).find((row) => row.pipeline === pipeline);
      const key = result?.value.status === 'complete' ? result.value.outputs?.[kind] : undefined;
      if (!key || !(await deps.store.exists(key))) return forbidden();
      const body = await deps.store.get(key);
      res.status(200).set({
        'content-type': CONTENT_TYPES[kind],
        'content-disposition': `attachment; filename="${FILE_NAMES[kind]}"`,
        'cache-control': 'private, no-store',
        'x-content-type-options': 'nosniff',
      });
      await pipe(body, res);
    } catch (error) {
      deps.log.warn({ err: error }, 'benchmark download failed');
      if (res.headersSent) res.destroy();
      else sendError(res, error);
    }
  });
}
