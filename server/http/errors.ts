import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { DomainError, isDomainError, retryAfterSeconds, toErrorResponse } from '../errors.ts';
import type { Log } from '../log.ts';

/** Writes an error in the one shape every route answers with: { code, message, details? }. */
export function sendError(res: Response, error: unknown) {
  const { status, body } = toErrorResponse(error);
  const retryAfter = retryAfterSeconds(error);
  // a 5xx's cause goes to the request's log line (app.ts), under the request id this answer carries
  if (status >= 500) {
    res.locals.error = error;
    const requestId = res.getHeader('x-request-id');
    if (typeof requestId === 'string') Object.assign(body, { requestId });
  }
  if (!res.headersSent) {
    if (retryAfter) res.setHeader('retry-after', String(retryAfter));
    res.status(status).json(body);
  } else res.end();
}

export const notFound: RequestHandler = (req, res) => {
  sendError(res, new DomainError('NOT_FOUND', `No route for ${req.method} ${req.path}`));
};

/** A body-parser refusal (it sets `type` and a 4xx status) as our error: the client's fault, never a 500. */
function bodyParserError(error: { status: number; type: string; message?: unknown }): DomainError {
  const code = error.status === 413 ? 'PAYLOAD_TOO_LARGE' : error.status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'BAD_REQUEST';
  const message = error.type === 'entity.parse.failed' ? 'Malformed JSON body' : String(error.message ?? 'Bad request');
  return new DomainError(code, message, { cause: error });
}

/** Body-parser failures are the client's fault (400/413/415); anything else unexpected is a 500 with no internals. */
export function errorHandler(log: Log): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const status = typeof error?.status === 'number' ? error.status : typeof error?.statusCode === 'number' ? error.statusCode : 500;
    if (status >= 400 && status < 500 && error?.type) {
      sendError(res, bodyParserError({ status, type: error.type, message: error.message }));
      return;
    }
    // express marks what it refused itself (a path parameter with bad percent-encoding is a 400 URIError)
    if (status >= 400 && status < 500 && !isDomainError(error)) {
      sendError(res, new DomainError(status === 404 ? 'NOT_FOUND' : 'BAD_REQUEST', status === 404 ? 'Not found' : 'Malformed request', { cause: error }));
      return;
    }
    if (toErrorResponse(error).status >= 500) log.error({ err: error, requestId: req.headers['x-request-id'] }, 'unhandled error');
    sendError(res, error);
  };
}
