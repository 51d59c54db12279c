import { TRPCClientError } from '@trpc/client';
import type { ErrorCode } from '../server/errors.ts';

/** One field a VALIDATION_FAILED call got wrong: where (`path`, e.g. ["emailTo"]) and why, in words. */
export type FolioErrorIssue = { path: Array<string | number>; message: string };

/** Every stable code Folio answers with; a code from a newer server still arrives as a string. */
export type FolioErrorCode = ErrorCode | 'NETWORK_ERROR' | 'ABORTED';

/**
 * A failed call, whichever door it went through (tRPC, REST, upload, stream):
 * `code` is stable and safe to branch on, `message` is readable by a person.
 */
export class FolioError extends Error {
  override name = 'FolioError';
  readonly code: FolioErrorCode | (string & {});
  /** HTTP status; 0 when no answer came back */
  readonly status: number;
  /** seconds, from Retry-After on a 429 */
  readonly retryAfter: number | undefined;
  readonly details: Record<string, unknown> | undefined;
  /** the fields a VALIDATION_FAILED call got wrong; empty otherwise */
  readonly issues: FolioErrorIssue[];

  constructor(
    code: FolioErrorCode | (string & {}),
    message: string,
    options: { status?: number; retryAfter?: number; details?: Record<string, unknown>; issues?: FolioErrorIssue[]; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.code = code;
    this.status = options.status ?? 0;
    this.retryAfter = options.retryAfter;
    this.details = options.details;
    this.issues = options.issues ?? [];
  }
}

type ErrorBody = { code?: unknown; message?: unknown; details?: unknown; issues?: unknown };

/** The validation issues of an answer, kept only in the shape we promise (a server's issue carries more). */
function issuesOf(value: unknown): FolioErrorIssue[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((issue: unknown) => {
    const { path, message } = (issue ?? {}) as { path?: unknown; message?: unknown };
    if (typeof message !== 'string') return [];
    const where = Array.isArray(path) ? path.filter((part): part is string | number => typeof part === 'string' || typeof part === 'number') : [];
    return [{ path: where, message }];
  });
}

/** Reads Folio's `{ code, message }` error body from a failed response; a body that is not ours still gives a readable error. */
async function errorFromResponse(response: Response): Promise<FolioError> {
  const text = await response.text().catch(() => '');
  return errorFromBody(response.status, text, response.headers.get('retry-after'));
}

export function errorFromBody(status: number, text: string, retryAfterHeader?: string | null): FolioError {
  let body: ErrorBody = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object') body = parsed as ErrorBody;
  } catch {
    // not JSON: a proxy's page, an empty body
  }
  const retryAfter = retryAfterHeader ? Number(retryAfterHeader) : undefined;
  const code = typeof body.code === 'string' ? body.code : codeForStatus(status);
  const message = typeof body.message === 'string' && body.message ? body.message : `Folio answered ${status}`;
  const details = body.details && typeof body.details === 'object' ? (body.details as Record<string, unknown>) : undefined;
  return new FolioError(code, message, {
    status,
    retryAfter: Number.isFinite(retryAfter) ? retryAfter : undefined,
    details,
    issues: issuesOf(body.issues),
  });
}

function codeForStatus(status: number): FolioErrorCode {
  if (status === 401) return 'UNAUTHORIZED';
  if (status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 413) return 'PAYLOAD_TOO_LARGE';
  if (status === 429) return 'TOO_MANY_REQUESTS';
  if (status >= 500) return 'INTERNAL';
  return 'BAD_REQUEST';
}

/**
 * Any error a Folio call can throw, as a FolioError: tRPC client errors keep
 * their stable code, aborts and network failures get their own codes.
 */
export function toFolioError(error: unknown): FolioError {
  if (error instanceof FolioError) return error;
  if (error instanceof TRPCClientError) {
    const data = error.data as { code?: unknown; httpStatus?: unknown; details?: unknown; issues?: unknown } | undefined;
    const status = typeof data?.httpStatus === 'number' ? data.httpStatus : 0;
    const code = typeof data?.code === 'string' ? data.code : status ? codeForStatus(status) : 'NETWORK_ERROR';
    const details = data?.details && typeof data.details === 'object' ? (data.details as Record<string, unknown>) : undefined;
    return new FolioError(code, error.message, { status, details, issues: issuesOf(data?.issues), cause: error });
  }
  if (error instanceof Error && error.name === 'AbortError') return new FolioError('ABORTED', 'The request was cancelled', { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new FolioError('NETWORK_ERROR', `Folio could not be reached (${message})`, { cause: error });
}

/** A raw (non-tRPC) call: a network failure or abort, or an answer `expected` refuses, comes out as a FolioError. */
export async function fetchOrThrow(doFetch: typeof fetch, url: string, init: RequestInit, expected: (response: Response) => boolean): Promise<Response> {
  let response: Response;
  try {
    response = await doFetch(url, init);
  } catch (error) {
    throw toFolioError(error);
  }
  if (!expected(response)) throw await errorFromResponse(response);
  return response;
}

/** The stable error code (e.g. CONVERSION_FINISHING) of a failed call, if it is one of ours. */
export function errorCode(error: unknown): string | undefined {
  if (error instanceof FolioError) return error.code;
  if (error instanceof TRPCClientError) {
    const data = error.data as { code?: unknown } | undefined;
    return typeof data?.code === 'string' ? data.code : undefined;
  }
  return undefined;
}
