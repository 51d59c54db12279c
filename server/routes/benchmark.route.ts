import type { Express } from 'express';
import { pipeline as pipe } from 'node:stream/promises';
import { z } from 'zod';
import { selectResults } from '../benchmark/benchmark.queries.ts';
import { OUTPUT_KINDS, outputTokenSubject, startAnswer } from '../benchmark/read-benchmark.ts';
import { startBenchmark, StartBenchmarkInput } from '../benchmark/start-benchmark.ts';
import { receiveUpload } from '../files/upload.ts';
import { authenticateUser } from '../http/guards.ts';
import { verifyDownloadToken } from '../conversion-jobs/download-token.ts';
import { DomainError } from '../errors.ts';
import { sendError } from '../http/errors.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import type { AppDeps } from '../trpc/context.ts';

const Params = z.object({ sessionId: z.uuid(), pipeline: z.coerce.number().int().min(0).max(5), kind: z.enum(OUTPUT_KINDS) });

const CONTENT_TYPES = { html: 'text/html; charset=utf-8', pdf: 'application/pdf', report: 'text/html; charset=utf-8' } as const;
const FILE_NAMES = { html: 'document.html', pdf: 'document.accessible.pdf', report: 'document.report.html' } as const;

/** The benchmark's raw routes: the multipart start and the output downloads. */
export function mountBenchmarkRoutes(app: Express, deps: AppDeps) {
  const secret = resolveSigningSecrets(deps.config).download;

  /**
   * POST /api/benchmark as a multipart upload: the `file` field is uploaded
   * as POST /api/files does, `pipelines` (JSON text) says what to run. The
   * file is kept whatever happens next: bad pipelines answer 400 with its id,
   * so the session can be started from JSON without sending it again. JSON
   * bodies go on to the REST procedure.
   */
  app.post('/api/benchmark', async (req, res, next) => {
    if (!/^multipart\/form-data/i.test(req.headers['content-type'] ?? '')) return next();
    try {
      const user = await authenticateUser(deps, req.headers);
      let pipelines: string | undefined;
      const file = await receiveUpload(deps, user, req, { onField: (name, value) => void (name === 'pipelines' && (pipelines = value)) });
      let parsedPipelines: unknown;
      try {
        parsedPipelines = JSON.parse(pipelines ?? 'null');
      } catch {
        parsedPipelines = null;
      }
      const input = StartBenchmarkInput.safeParse({ fileId: file.id, pipelines: parsedPipelines });
      if (!input.success) {
        throw new DomainError('VALIDATION_FAILED', 'Give `pipelines` as a JSON array of {backend, uxOptimizer?} (1 to 6); the file was uploaded', {
          context: { fileId: file.id, issues: input.error.issues },
        });
      }
      const { sessionId } = await startBenchmark(deps, input.data);
      res.status(200).json(await startAnswer(deps, { sessionId, user, downloadSecret: secret }));
    } catch (error) {
      if (!req.complete) res.setHeader('connection', 'close');
      sendError(res, error);
    }
  });

  /**
   * GET /api/benchmark/:sessionId/pipelines/:pipeline/:kind?token=: one output
   * (html, pdf, report) of a finished pipeline, as the links of GET
   * /api/benchmark/:sessionId give them out. The token is the only credential
   * (bound to session and pipeline, 24 hours); a wrong one, or nothing to
   * download, is the same bare 403.
   */
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
