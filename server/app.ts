import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type Express, type Request, type Response } from 'express';
import * as trpcExpress from '@trpc/server/adapters/express';
import type { TRPCError } from '@trpc/server';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { createTokenVerifier } from './auth/tokens.ts';
import type { Deps } from './deps.ts';
import { DomainError, retryAfterSeconds } from './errors.ts';
import { refuseDeepJson, refuseDeepJsonInput } from './http/json-depth.ts';
import { reviveWithoutNuls } from './db/strip-nuls.ts';
import { errorHandler, notFound } from './http/errors.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { appRouter } from './routers/index.ts';
import { resolveSigningSecrets } from './secrets.ts';
import type { AppContext, AppDeps } from './trpc/context.ts';
import { createConversionEvents } from './conversion-jobs/events.ts';
import type { SmtpListener } from './intake/smtp-listener.ts';
import { rawRouteMounts } from './routes/index.ts';
import { describeTrpcError } from './trpc/trpc.ts';
import { sql } from './db/database.ts';
import { z } from 'zod';
import { recordApiError } from './alarms/alarms.queries.ts';

const swaggerUiDir = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Folio API</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css"></head>
<body><main id="swagger-ui"></main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script></body></html>`;
const DOCS_INIT = `window.ui = SwaggerUIBundle({ url: '/openapi.json', dom_id: '#swagger-ui', deepLinking: true });`;

export type BuiltApp = { app: Express; deps: AppDeps };

/**
 * Builds the express app without listening; tests and server/main.ts both
 * use it. `intakeListener` is the SMTP listener of this process, when it runs
 * one: GET /health reports it.
 */
export function buildApp(deps: Deps, options: { intakeListener?: SmtpListener } = {}): BuiltApp {
  const secrets = resolveSigningSecrets(deps.config);
  const appDeps: AppDeps = {
    ...deps,
    verifyToken: createTokenVerifier({
      secret: secrets.jwt,
      jwksUrl: deps.config.auth.jwksUrl,
      issuer: deps.config.auth.issuer,
      audience: deps.config.auth.audience,
      now: deps.clock.now,
    }),
    conversionEvents: createConversionEvents(deps.databaseUrl, deps.log),
  };
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');

  app.use((req, res, next) => {
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : randomUUID();
    req.headers['x-request-id'] = requestId;
    res.setHeader('x-request-id', requestId);
    const started = performance.now();
    res.on('finish', () => {
      const line = { requestId, method: req.method, path: req.path, status: res.statusCode, ms: Math.round(performance.now() - started) };
      deps.metrics.httpResponses.inc({ class: `${Math.floor(res.statusCode / 100)}xx` });
      if (res.statusCode >= 500) {
        // the cause, when a route answered through sendError; the body and the x-request-id header carry requestId
        deps.log.error({ ...line, ...(res.locals.error ? { err: res.locals.error } : {}) }, 'request failed');
        recordApiError(deps.db, deps.clock.now()).catch((error: unknown) => deps.log.warn({ err: error }, 'api 5xx not counted for the alarm'));
      } else deps.log.debug(line, 'request');
    });
    next();
  });

  // a NUL in the URL (a query filter, a path) has no meaning here and no place in PostgreSQL text
  app.use((req, _res, next) => {
    if (/%00/i.test(req.url)) next(new DomainError('BAD_REQUEST', 'The URL contains a NUL character'));
    else next();
  });

  app.get('/health', async (_req, res) => {
    const [database, queue] = await Promise.all([
      deps.db.oneFirst(sql.type(z.object({ ok: z.number() }))`select 1 as ok`).then(
        () => 'ok',
        () => 'down',
      ),
      deps.boss.getQueues().then(
        () => 'ok',
        () => 'down',
      ),
    ]);
    const healthy = database === 'ok' && queue === 'ok';
    // The intake worker's state is reported, not judged: a process without the listener or the mail key is still healthy.
    const listener = options.intakeListener;
    const intake = {
      smtp: listener ? 'listening' : 'off',
      smtpPort: listener?.port ?? null,
      mailApi: deps.mailer.client.configured ? 'configured' : 'unconfigured',
    };
    res.status(healthy ? 200 : 503).json({ status: healthy ? 'ok' : 'degraded', database, queue, intake });
  });

  const openApiDocument = buildOpenApiDocument();
  app.get('/openapi.json', (_req, res) => {
    res.json(openApiDocument);
  });
  app.get('/docs', (_req, res) => {
    res.type('html').send(DOCS_PAGE);
  });
  app.get('/docs/init.js', (_req, res) => {
    res.type('js').send(DOCS_INIT);
  });
  app.use('/docs/assets', express.static(swaggerUiDir, { index: false }));

  // Raw routes that must see the unparsed body (signatures, multipart, streams)
  // register here, before the JSON parser.
  for (const mount of rawRouteMounts) mount(app, appDeps);

  app.use(express.json({ limit: '1mb', type: ['application/json', 'application/*+json'], verify: refuseDeepJson, reviver: reviveWithoutNuls }));

  // Both adapters hand over the express req/res they were mounted with.
  const createContext = (options: { req: unknown; res: unknown }): AppContext => {
    const req = options.req as Request;
    const res = options.res as Response;
    const requestId = String(req.headers['x-request-id']);
    return { deps: appDeps, req, res, requestId, log: deps.log.child({ requestId }) };
  };
  const onError = ({ error, path: procedurePath, ctx }: { error: TRPCError; path?: string; ctx?: AppContext }) => {
    if (describeTrpcError(error).status >= 500)
      deps.log.error({ err: error.cause ?? error, procedure: procedurePath, requestId: ctx?.requestId }, 'procedure failed');
  };

  // A refusal by a rate limit carries Retry-After on /trpc and REST alike.
  const errorHeaders = (errors: TRPCError[]) => {
    const seconds = errors.map((error) => retryAfterSeconds(error.cause)).find((value) => value !== undefined);
    return seconds ? { 'retry-after': String(seconds) } : undefined;
  };

  app.use(
    '/trpc',
    refuseDeepJsonInput,
    trpcExpress.createExpressMiddleware({ router: appRouter, createContext, onError, responseMeta: ({ errors }) => ({ headers: errorHeaders(errors) }) }),
  );

  const openApiHandler = createOpenApiNodeHttpHandler({
    router: appRouter,
    createContext,
    onError,
    responseMeta: ({ errors }) => (errors[0] ? { status: describeTrpcError(errors[0]).status, headers: errorHeaders(errors) } : {}),
  });
  // trpc-to-openapi spreads the body into the input: an array's items would pass as fields of an object
  app.use((req, _res, next) => {
    if (Array.isArray(req.body)) next(new DomainError('BAD_REQUEST', 'The body must be a JSON object'));
    else next();
  });
  app.use((req, res, next) => {
    rewriteOpenApiErrorBodies(res);
    openApiHandler(req, res, next).catch(next);
  });

  app.use(notFound);
  app.use(errorHandler(deps.log));
  return { app, deps: appDeps };
}

/**
 * trpc-to-openapi writes errors as { ...shape, code: <tRPC code> }; clients of
 * our REST API get the same { code, message, issues? } as every other route,
 * with our stable code.
 */
function rewriteOpenApiErrorBodies(res: Response) {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    if (res.statusCode >= 400 && typeof chunk === 'string' && res.getHeader('content-type')?.toString().startsWith('application/json')) {
      try {
        const body = JSON.parse(chunk) as { message?: string; data?: { code?: string; issues?: unknown }; code?: string; issues?: unknown };
        const issues = body.data?.issues ?? body.issues;
        chunk = JSON.stringify({ code: body.data?.code ?? body.code, message: body.message, ...(issues ? { issues } : {}) });
      } catch {
        // not JSON after all: leave it
      }
    }
    return end(chunk, ...rest);
  }) as Response['end'];
}
