import { generateKeyPairSync, randomBytes, verify, type KeyObject } from 'node:crypto';
import http from 'node:http';
import { until } from '../helpers/wait.ts';
import { answerScript, listen, readRequest } from './fake-server.ts';

/**
 * A local stand-in for the mail-provider API (the Gmail API wire format):
 *
 * - `POST /token`: the OAuth token endpoint of the JWT-bearer grant. It checks
 *   the form (`grant_type`, `assertion`), then the assertion as Google does:
 *   RS256, signature valid under the service account's public key, `iss` the
 *   service account, `aud` this endpoint, `scope` exactly the send-only scope,
 *   `sub` the delegated mailbox, `exp - iat` at most an hour, not expired.
 *   Errors are `{error, error_description}` with 400 (`invalid_grant`,
 *   `invalid_request`) or 401 (`unauthorized_client`).
 * - `POST /gmail/v1/users/me/messages/send`: `Authorization: Bearer` must be a
 *   token this fake issued and not yet expired, else 401 UNAUTHENTICATED; the
 *   JSON body's `raw` is base64url MIME. Answers `{id, threadId, labelIds}`.
 *   Errors carry Google's `{error: {code, message, status}}`.
 *
 * Tests script the next answers of the send endpoint; `sent` holds what would
 * have gone out, `exchanges` counts token grants.
 */
type MailApiAnswer = { kind: 'accept' } | { kind: 'error'; status: number } | { kind: 'delay'; ms: number } | { kind: 'drop' };

type SentMessage = { id: string; raw: Buffer; token: string };

export type MailApiFake = {
  url: string;
  tokenUrl: string;
  /** The service-account JSON for MAIL_SERVICE_ACCOUNT_KEY (its private key signs; the fake keeps the public half). */
  serviceAccountKey: string;
  clientEmail: string;
  sent: SentMessage[];
  exchanges: number;
  /** Assertions the token endpoint refused, with the reason. */
  refusedGrants: string[];
  next: (...answers: MailApiAnswer[]) => void;
  /** Answer every send with this until cleared. */
  always: (answer: MailApiAnswer | undefined) => void;
  /** Revokes every token issued so far (the next send with one gets 401). */
  revokeTokens: () => void;
  /** Waits until `count` messages were sent (bounded). */
  waitForSent: (count: number, timeoutMs?: number) => Promise<SentMessage[]>;
  reset: () => void;
  close: () => Promise<void>;
};

const SCOPE = 'https://www.googleapis.com/auth/gmail.send';
const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

function decodePart(part: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** Why Google would refuse this assertion, or undefined when it is good. */
function checkAssertion(assertion: string, key: KeyObject, expected: { iss: string; sub: string; aud: string }, nowSeconds: number): string | undefined {
  const parts = assertion.split('.');
  if (parts.length !== 3) return 'not a JWT';
  const [headerPart, claimsPart, signaturePart] = parts as [string, string, string];
  const header = decodePart(headerPart);
  const claims = decodePart(claimsPart);
  if (!header || !claims) return 'undecodable JWT';
  if (header.alg !== 'RS256') return `alg ${String(header.alg)}`;
  const valid = verify('RSA-SHA256', Buffer.from(`${headerPart}.${claimsPart}`), key, Buffer.from(signaturePart, 'base64url'));
  if (!valid) return 'Invalid JWT Signature.';
  if (claims.iss !== expected.iss) return `iss ${String(claims.iss)}`;
  if (claims.aud !== expected.aud) return `aud ${String(claims.aud)}`;
  if (claims.scope !== SCOPE) return `scope ${String(claims.scope)}`;
  if (claims.sub !== expected.sub) return `sub ${String(claims.sub)}`;
  const iat = Number(claims.iat);
  const exp = Number(claims.exp);
  if (!Number.isFinite(iat) || !Number.isFinite(exp) || exp - iat > 3600 || exp <= iat) return 'Invalid JWT: exp and iat must span at most an hour';
  if (exp < nowSeconds - 60 || iat > nowSeconds + 300) return 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.';
  return undefined;
}

export async function startMailApiFake(options: { subject: string; tokenLifetimeSeconds?: number; now?: () => number }): Promise<MailApiFake> {
  const now = options.now ?? Date.now;
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const clientEmail = 'folio-intake@folio-test.iam.gserviceaccount.com';
  const tokens = new Map<string, number>();
  const script = answerScript<MailApiAnswer>();
  const fake: MailApiFake = {
    url: '',
    tokenUrl: '',
    serviceAccountKey: '',
    clientEmail,
    sent: [],
    exchanges: 0,
    refusedGrants: [],
    next: script.next,
    always: script.always,
    revokeTokens: () => tokens.clear(),
    waitForSent: (count, timeoutMs = 30_000) =>
      until(
        () => fake.sent,
        (sent) => sent.length >= count,
        timeoutMs,
        `${count} messages at the mail API fake`,
      ),
    reset: () => {
      fake.sent.length = 0;
      fake.exchanges = 0;
      fake.refusedGrants.length = 0;
      script.clear();
    },
    close: () => listening.close(),
  };

  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(body));
  };
  const googleError = (res: http.ServerResponse, status: number, message: string) =>
    json(res, status, {
      error: { code: status, message, status: STATUS_NAMES[status] ?? 'UNKNOWN', errors: [{ message, domain: 'global', reason: 'backendError' }] },
    });

  function token(res: http.ServerResponse, body: string, contentType: string | undefined) {
    if (!contentType?.startsWith('application/x-www-form-urlencoded')) return json(res, 400, { error: 'invalid_request', error_description: 'Bad Request' });
    const form = new URLSearchParams(body);
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      return json(res, 400, { error: 'unsupported_grant_type', error_description: 'Invalid grant_type' });
    }
    const problem = checkAssertion(
      form.get('assertion') ?? '',
      publicKey,
      { iss: clientEmail, sub: options.subject, aud: fake.tokenUrl },
      Math.floor(now() / 1000),
    );
    if (problem) {
      fake.refusedGrants.push(problem);
      return json(res, problem.startsWith('sub') ? 401 : 400, {
        error: problem.startsWith('sub') ? 'unauthorized_client' : 'invalid_grant',
        error_description: problem,
      });
    }
    fake.exchanges++;
    const lifetime = options.tokenLifetimeSeconds ?? 3599;
    const value = `ya29.${randomBytes(24).toString('base64url')}`;
    tokens.set(value, now() + lifetime * 1000);
    json(res, 200, { access_token: value, expires_in: lifetime, token_type: 'Bearer' });
  }

  async function send(req: http.IncomingMessage, res: http.ServerResponse, body: string) {
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
    const expiresAt = bearer ? tokens.get(bearer) : undefined;
    if (!bearer || expiresAt === undefined || expiresAt <= now()) {
      return googleError(
        res,
        401,
        'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      );
    }
    const answer = script.take();
    if (answer?.kind === 'drop') return req.socket.destroy();
    if (answer?.kind === 'error') return googleError(res, answer.status, answer.status >= 500 ? 'Backend Error' : 'Request refused');
    if (answer?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, answer.ms));
    let raw: unknown;
    try {
      raw = (JSON.parse(body) as { raw?: unknown }).raw;
    } catch {
      return googleError(res, 400, 'Invalid JSON payload received.');
    }
    if (typeof raw !== 'string' || !/^[A-Za-z0-9_-]+$/.test(raw)) return googleError(res, 400, "Invalid value for ByteString: 'raw'");
    const id = randomBytes(8).toString('hex');
    fake.sent.push({ id, raw: Buffer.from(raw, 'base64url'), token: bearer });
    if (!res.destroyed) json(res, 200, { id, threadId: id, labelIds: ['SENT'] });
  }

  const server = http.createServer(async (req, res) => {
    const { body } = await readRequest(req);
    if (req.method === 'POST' && req.url === '/token') return token(res, body, req.headers['content-type']);
    if (req.method === 'POST' && req.url === '/gmail/v1/users/me/messages/send') return void send(req, res, body);
    googleError(res, 404, 'Not Found');
  });
  const listening = await listen(server);
  fake.url = listening.url;
  fake.tokenUrl = `${fake.url}/token`;
  fake.serviceAccountKey = JSON.stringify({
    type: 'service_account',
    client_email: clientEmail,
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    token_uri: fake.tokenUrl,
  });
  return fake;
}
