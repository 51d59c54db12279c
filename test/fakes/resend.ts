import { createHash, randomUUID } from 'node:crypto';
import http from 'node:http';
import { answerLater, answerScript, listen, type RecordedRequest, readRequest, type ScriptedFake } from './fake-server.ts';

/**
 * A local Resend API (`POST /emails`) that speaks the real wire format: JSON
 * error bodies carrying `statusCode`, `name` and `message` (the SDK returns the
 * body verbatim, it does not add the HTTP status), `Idempotency-Key` replay for
 * 24 hours (same key + same body gives the same id without a second delivery;
 * another body gives 409 `invalid_idempotent_request`; a request while the first
 * is in flight gives 409 `concurrent_idempotent_requests`).
 *
 * Tests script the next answers; once the script is used up every request is
 * accepted. `delivered` holds the messages Resend would actually have sent.
 */
export type ResendAnswer =
  /** A JSON error body; `name` and `message` default to what Resend sends for that status. */
  | { kind: 'error'; status: number; name?: string; message?: string; headers?: Record<string, string> }
  /** A gateway-style HTML body (the SDK turns it into `application_error` with the real status). */
  | { kind: 'non-json'; status: number }
  /** Accepts the message, then answers only after `ms` (a client with a shorter timeout gives up first). */
  | { kind: 'delay'; ms: number }
  /** Destroys the connection without answering; `accepted: true` delivers the message first. */
  | { kind: 'drop'; accepted?: boolean };

/** One entry of the `GET /emails` list, as Resend returns it (`created_at` in its "2026-04-03 22:13:42.674981+00" form). */
export type ListedEmail = {
  id: string;
  message_id?: string;
  to: string[];
  from: string;
  created_at: string;
  subject: string;
  bcc: string[] | null;
  cc: string[] | null;
  reply_to: string[] | null;
  last_event: string;
  scheduled_at: string | null;
};
type DeliveredMessage = { id: string; idempotencyKey?: string; body: Record<string, unknown> };

const DEFAULT_ERRORS: Record<number, { name: string; message: string }> = {
  400: {
    name: 'validation_error',
    message: 'Invalid `to` field. The email address needs to follow the `email@example.com` or `Name <email@example.com>` format.',
  },
  401: { name: 'missing_api_key', message: 'Missing API key in the authorization header.' },
  403: { name: 'invalid_api_key', message: 'API key is invalid' },
  404: { name: 'not_found', message: 'The requested endpoint does not exist.' },
  409: { name: 'concurrent_idempotent_requests', message: 'Same idempotency key used while original request is still in progress.' },
  422: { name: 'validation_error', message: 'The `from` field must be a valid email address.' },
  429: { name: 'rate_limit_exceeded', message: 'Too many requests. You can only make 10 requests per second.' },
  500: { name: 'application_error', message: 'An unexpected error occurred.' },
  502: { name: 'application_error', message: 'Bad gateway.' },
  503: { name: 'service_unavailable', message: 'We are temporarily unavailable. Please try again later.' },
  504: { name: 'application_error', message: 'Gateway timeout.' },
};

const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

export type ResendFake = ScriptedFake<ResendAnswer> & {
  delivered: DeliveredMessage[];
  /** The sent-email list `GET /emails` pages through, newest first (tests fill it; reset keeps it). */
  listed: ListedEmail[];
};

export async function startResendFake(options: { apiKey?: string; now?: () => number } = {}): Promise<ResendFake> {
  const now = options.now ?? Date.now;
  const requests: RecordedRequest[] = [];
  const delivered: DeliveredMessage[] = [];
  const script = answerScript<ResendAnswer>();
  const keys = new Map<string, { bodyHash: string; at: number; id?: string }>();
  const listed: ListedEmail[] = [];

  const sendJson = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const sendError = (res: http.ServerResponse, status: number, name?: string, message?: string, headers?: Record<string, string>) => {
    const fallback = DEFAULT_ERRORS[status] ?? { name: 'application_error', message: 'Error' };
    sendJson(res, status, { statusCode: status, name: name ?? fallback.name, message: message ?? fallback.message }, headers);
  };

  const server = http.createServer(async (req, res) => {
    const request = await readRequest(req);
    requests.push(request);
    handle(req, res, request.body, request.json);
  });

  // GET /emails: limit 1-100 (default 20), `after` or `before` an email id
  // (excluded; not both), newest first, `has_more` — as the list API documents.
  function list(req: http.IncomingMessage, res: http.ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://fake');
    const limitText = url.searchParams.get('limit');
    const limit = limitText === null ? 20 : Number(limitText);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      return sendError(res, 422, 'validation_error', 'The `limit` parameter must be an integer between 1 and 100.');
    const after = url.searchParams.get('after');
    const before = url.searchParams.get('before');
    if (after && before) return sendError(res, 422, 'validation_error', 'You can only use `after` or `before`, not both.');
    let start = 0;
    let end = listed.length;
    if (after) {
      const at = listed.findIndex((e) => e.id === after);
      if (at < 0) return sendError(res, 404, 'not_found', 'Email not found');
      start = at + 1;
    }
    if (before) {
      const at = listed.findIndex((e) => e.id === before);
      if (at < 0) return sendError(res, 404, 'not_found', 'Email not found');
      end = at;
      start = Math.max(0, end - limit);
    }
    const data = listed.slice(start, Math.min(end, start + limit));
    const hasMore = before ? start > 0 : start + data.length < listed.length;
    return sendJson(res, 200, { object: 'list', has_more: hasMore, data });
  }

  function handle(req: http.IncomingMessage, res: http.ServerResponse, rawBody: string, json: unknown) {
    if (req.method === 'GET' && (req.url ?? '').split('?')[0] === '/emails') {
      const auth = req.headers.authorization;
      if (!auth?.startsWith('Bearer ')) return sendError(res, 401);
      if (options.apiKey && auth !== `Bearer ${options.apiKey}`) return sendError(res, 403);
      return list(req, res);
    }
    if (req.method !== 'POST' || req.url !== '/emails') return sendError(res, 404);
    const auth = req.headers.authorization;
    if (!auth?.startsWith('Bearer ')) return sendError(res, 401);
    if (options.apiKey && auth !== `Bearer ${options.apiKey}`) return sendError(res, 403);

    const answer = script.take();
    if (answer?.kind === 'error') return sendError(res, answer.status, answer.name, answer.message, answer.headers);
    if (answer?.kind === 'non-json') {
      res.writeHead(answer.status, { 'content-type': 'text/html' });
      res.end(`<html><body><h1>${answer.status}</h1></body></html>`);
      return;
    }
    if (answer?.kind === 'drop' && !answer.accepted) {
      req.socket.destroy();
      return;
    }

    const message = json as Record<string, unknown> | undefined;
    if (!message || typeof message !== 'object') return sendError(res, 422, 'validation_error', 'Invalid JSON body.');
    for (const field of ['from', 'to', 'subject']) {
      if (!message[field]) return sendError(res, 422, 'missing_required_field', `Missing \`${field}\` field.`);
    }
    const to = Array.isArray(message.to) ? message.to : [message.to];
    if (to.length > 50) return sendError(res, 422, 'validation_error', 'Too many recipients: at most 50.');

    const key = req.headers['idempotency-key'];
    const idempotencyKey = typeof key === 'string' ? key : undefined;
    let id: string;
    if (idempotencyKey !== undefined) {
      if (idempotencyKey.length < 1 || idempotencyKey.length > 256)
        return sendError(res, 400, 'invalid_idempotency_key', 'Idempotency key must be between 1-256 characters.');
      const bodyHash = createHash('sha256').update(rawBody).digest('hex');
      const seen = keys.get(idempotencyKey);
      if (seen && now() - seen.at < IDEMPOTENCY_WINDOW_MS) {
        if (seen.bodyHash !== bodyHash) return sendError(res, 409, 'invalid_idempotent_request', 'Same idempotency key used with a different request payload.');
        if (!seen.id) return sendError(res, 409, 'concurrent_idempotent_requests');
        return sendJson(res, 200, { id: seen.id });
      }
      id = randomUUID();
      const entry: { bodyHash: string; at: number; id?: string } = { bodyHash, at: now() };
      keys.set(idempotencyKey, entry);
      // The key is "in progress" until the answer is written (or the client hangs up).
      const finish = () => {
        entry.id = id;
      };
      if (answer?.kind === 'delay') res.on('close', finish);
      else finish();
    } else {
      id = randomUUID();
    }
    delivered.push({ id, idempotencyKey, body: message });

    if (answer?.kind === 'drop') {
      req.socket.destroy();
      return;
    }
    if (answer?.kind === 'delay') return answerLater(res, answer.ms, () => sendJson(res, 200, { id }));
    sendJson(res, 200, { id }, { 'ratelimit-limit': '10', 'ratelimit-remaining': '9', 'ratelimit-reset': '1' });
  }

  const { url, close } = await listen(server);
  return {
    url,
    requests,
    delivered,
    listed,
    next: script.next,
    always: script.always,
    reset: () => {
      requests.length = 0;
      delivered.length = 0;
      script.clear();
      keys.clear();
    },
    close,
  };
}
