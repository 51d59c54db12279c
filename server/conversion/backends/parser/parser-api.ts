import { DomainError } from '../../../errors.ts';
import type { Log } from '../../../log.ts';
import { backoffDelay, sleep, type RetryPolicy } from '../vision/backoff.ts';

/**
 * The external document-parser API, shaped after Mathpix's v3 PDF API:
 *
 *   POST {url}/v3/pdf                 multipart: file (the PDF), options_json
 *                                     -> {"pdf_id": "..."}
 *   GET  {url}/v3/pdf/{pdf_id}        -> {"status": "received" | "loaded" | "split" |
 *                                         "processing" | "completed" | "error",
 *                                         "percent_done", "num_pages", "error",
 *                                         "conversion_status": {"html": {"status"}}}
 *   GET  {url}/v3/pdf/{pdf_id}.html   -> the document as HTML
 *   DELETE {url}/v3/pdf/{pdf_id}      -> forget the document and its outputs
 *
 * Every request carries the key in an `app_key` header. This module owns that
 * wire format and its failure rules: 401/403 is a bad key, permanent and never
 * retried; 5xx, 429 and network failures are transient and retried with
 * backoff, then surface as a retryable ERR_PARSER_SUBMIT_FAILED; other 4xx and
 * a job that ends in `error` are permanent ERR_PARSER_SUBMIT_FAILED.
 */

/** Four attempts with waits of about 1, 2 and 4 s: enough to ride out a deploy or a brief overload, short enough to hand the chunk back to the queue, which retries later. */
const PARSER_RETRY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 1000, maxDelayMs: 8000 };
/** A page takes the service a few seconds; polling each second keeps latency low at a trivial request count. */
const PARSER_POLL_INTERVAL_MS = 1000;
/** A one-page job still unfinished after five minutes is stuck; the chunk is retried rather than held. */
const PARSER_JOB_DEADLINE_MS = 5 * 60_000;
/** Any one HTTP exchange; uploads of a single page are small. */
const PARSER_REQUEST_TIMEOUT_MS = 60_000;

const PENDING_STATUSES = new Set(['received', 'loaded', 'split', 'processing']);

export type ParserClientOptions = {
  url: string | undefined;
  apiKey: string | undefined;
  log: Log;
  retry?: RetryPolicy;
  pollIntervalMs?: number;
  deadlineMs?: number;
  requestTimeoutMs?: number;
};

function authenticationFailed(status: number): DomainError {
  return new DomainError('ERR_PARSER_API_KEY_INVALID', 'Document processing service authentication failed (ERR_PARSER_API_KEY_INVALID).', {
    retryable: false,
    context: { status },
  });
}

function unavailable(context: Record<string, unknown>, cause?: unknown): DomainError {
  return new DomainError(
    'ERR_PARSER_SUBMIT_FAILED',
    'The document processing service is unavailable (ERR_PARSER_SUBMIT_FAILED); the conversion will be retried.',
    {
      retryable: true,
      context,
      cause,
    },
  );
}

function rejected(context: Record<string, unknown>): DomainError {
  return new DomainError('ERR_PARSER_SUBMIT_FAILED', 'The document processing service could not process the document (ERR_PARSER_SUBMIT_FAILED).', {
    retryable: false,
    context,
  });
}

function isTransientStatus(status: number): boolean {
  return status === 429 || status >= 500;
}

/** Seconds or an HTTP date, as Retry-After allows; undefined when absent or unreadable. */
function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

export type ParserClient = {
  /** Sends one PDF, waits for the job and returns its HTML. Throws DomainError ERR_PARSER_* (or the abort reason). */
  convertToHtml(pdf: Uint8Array, fileName: string, signal?: AbortSignal): Promise<string>;
};

export function createParserClient(options: ParserClientOptions): ParserClient {
  const { log } = options;
  const retry = options.retry ?? PARSER_RETRY;
  const pollIntervalMs = options.pollIntervalMs ?? PARSER_POLL_INTERVAL_MS;
  const deadlineMs = options.deadlineMs ?? PARSER_JOB_DEADLINE_MS;
  const requestTimeoutMs = options.requestTimeoutMs ?? PARSER_REQUEST_TIMEOUT_MS;

  /** One exchange with retries. Returns only 2xx responses. */
  async function call(
    method: string,
    path: string,
    signal: AbortSignal | undefined,
    body?: () => FormData,
    maxAttempts = retry.maxAttempts,
  ): Promise<Response> {
    if (!options.url) throw rejected({ reason: 'PARSER_API_URL is not set' });
    if (!options.apiKey) throw authenticationFailed(401);
    const url = new URL(path, options.url.endsWith('/') ? options.url : `${options.url}/`);
    for (let attempt = 1; ; attempt++) {
      let response: Response;
      try {
        const timeout = AbortSignal.timeout(requestTimeoutMs);
        response = await fetch(url, {
          method,
          headers: { app_key: options.apiKey, accept: 'application/json, text/html' },
          body: body?.(),
          signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        });
      } catch (error) {
        if (signal?.aborted) throw signal.reason ?? error;
        if (attempt >= maxAttempts) throw unavailable({ method, path, reason: (error as Error).name }, error);
        await wait(attempt, undefined, method, path, (error as Error).name, signal);
        continue;
      }
      if (response.ok) return response;
      const text = await response.text().catch(() => '');
      if (response.status === 401 || response.status === 403) throw authenticationFailed(response.status);
      if (!isTransientStatus(response.status)) throw rejected({ method, path, status: response.status, body: text.slice(0, 500) });
      if (attempt >= maxAttempts) throw unavailable({ method, path, status: response.status });
      await wait(attempt, retryAfterMs(response.headers.get('retry-after')), method, path, response.status, signal);
    }
  }

  async function wait(attempt: number, hinted: number | undefined, method: string, path: string, failure: unknown, signal?: AbortSignal) {
    const delay = Math.min(retry.maxDelayMs, Math.max(backoffDelay(retry, attempt), hinted ?? 0));
    log.warn({ method, path, attempt, failure, waitMs: delay }, 'document parser request failed; retrying');
    await sleep(delay, signal);
  }

  async function json(response: Response): Promise<Record<string, unknown>> {
    try {
      return (await response.json()) as Record<string, unknown>;
    } catch (error) {
      throw unavailable({ reason: 'the parser answered with something other than JSON' }, error);
    }
  }

  return {
    async convertToHtml(pdf, fileName, signal) {
      const submitted = await json(
        await call('POST', 'v3/pdf', signal, () => {
          const form = new FormData();
          form.append('file', new Blob([pdf as Uint8Array<ArrayBuffer>], { type: 'application/pdf' }), fileName);
          form.append('options_json', JSON.stringify({ conversion_formats: { html: true } }));
          return form;
        }),
      );
      const pdfId = submitted.pdf_id;
      if (typeof pdfId !== 'string' || pdfId === '') {
        // Mathpix reports some failures as 200 with an error body.
        const info = submitted.error_info as { id?: string } | undefined;
        if (info?.id === 'http_unauthorized' || info?.id === 'http_forbidden') throw authenticationFailed(401);
        throw rejected({ reason: 'no pdf_id in the submit answer', error: submitted.error });
      }
      const id = encodeURIComponent(pdfId);
      try {
        const deadline = Date.now() + deadlineMs;
        for (;;) {
          const status = await json(await call('GET', `v3/pdf/${id}`, signal));
          const html = (status.conversion_status as { html?: { status?: string; error_info?: unknown } } | undefined)?.html;
          if (status.status === 'error' || html?.status === 'error') throw rejected({ pdfId, error: status.error ?? html?.error_info });
          if (status.status === 'completed' && (!html || html.status === 'completed')) break;
          if (typeof status.status !== 'string' || (!PENDING_STATUSES.has(status.status) && status.status !== 'completed')) {
            throw rejected({ pdfId, reason: 'unknown job status', status: status.status });
          }
          if (Date.now() + pollIntervalMs > deadline) throw unavailable({ pdfId, reason: 'the job did not finish in time' });
          await sleep(pollIntervalMs, signal);
        }
        return await (await call('GET', `v3/pdf/${id}.html`, signal)).text();
      } finally {
        // The customer's page should not outlive the conversion on someone else's servers. One
        // attempt: the outcome is already decided and the service expires jobs on its own. After an
        // abort nobody waits for it.
        const deleted = call('DELETE', `v3/pdf/${id}`, undefined, undefined, 1).catch((error: unknown) =>
          log.warn({ pdfId, error: (error as Error).message }, 'document parser: deleting the job failed'),
        );
        if (!signal?.aborted) await deleted;
      }
    },
  };
}
