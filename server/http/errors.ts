import type { ErrorRequestHandler, RequestHandler, Response } from 'express';
import { retryAfterSeconds, toErrorResponse } from '../errors.ts';
import type { Log } from '../log.ts';

/** Writes an error in the one shape every route answers with: { code, message, details? }. */
export function sendError(res: Response, error: unknown) {
  const { status, body } = toErrorResponse(error);
  const retryAfter = retryAfterSeconds(error);
  if (!res.headersSent) {
    if (retryAfter) res.setHeader('retry-after', String(retryAfter));
    res.status(status).json(body);
  } else res.end();
}

export const notFound: RequestHandler = (req, res) => {
  res.status(404).json({ code: 'NOT_FOUND', message: `No route for ${req.method} ${req.path}` });
};

/** Body-parser failures are the client's fault (400/413/415); anything else unexpected is a 500 with no internals. */
export function errorHandler(log: Log): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const status = typeof error?.status === 'number' ? error.status : typeof error?.statusCode === 'number' ? error.statusCode : 500;
    if (status >= 400 && status < 500 && error?.type) {
      const code = status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : 'BAD_REQUEST';
      const message = error.type === 'entity.parse.failed' ? 'Malformed JSON body' : String(error.message ?? 'Bad request');
      res.status(status).json({ code, message });
      return;
    }
    if (toErrorResponse(error).status >= 500) log.error({ err: error, requestId: req.headers['x-request-id'] }, 'unhandled error');
    sendError(res, error);
  };
}
