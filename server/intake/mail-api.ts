import { createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { FailureKind } from '../email/types.ts';

/**
 * The mail-provider API the intake replies go out through (the Gmail API wire
 * format): a service account with domain-wide delegation signs an RS256 JWT
 * with node:crypto, trades it at the token endpoint for an access token
 * (JWT-bearer grant, subject = the public intake address, the one send-only
 * scope), and posts a base64url MIME message to the send endpoint.
 *
 * This module owns that wire format and nothing else. `send` never throws:
 * every outcome is a result, classified like the email library's providers.
 */

const SEND_SCOPE = 'https://www.googleapis.com/auth/gmail.send';
const DEFAULT_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** Google issues tokens for an hour; we never keep one longer, whatever expires_in says. */
const MAX_TOKEN_LIFETIME_MS = 60 * 60 * 1000;
/** A token this close to its expiry is replaced first, so a send never starts with one about to lapse. */
const TOKEN_EXPIRY_MARGIN_MS = 60 * 1000;
/** Error bodies are kept for the log, cut to this many characters. */
const ERROR_BODY_CHARS = 300;

const ServiceAccountKey = z.object({
  client_email: z.string().min(3),
  private_key: z.string().min(1),
  token_uri: z.url().optional(),
});

const TokenAnswer = z.object({ access_token: z.string().min(1), expires_in: z.coerce.number().positive().optional() });
const SendAnswer = z.object({ id: z.string().min(1), threadId: z.string().optional() });

type MailApiOutcome = { ok: true; messageId: string; threadId?: string } | { ok: false; kind: FailureKind; error: string };

export type MailApiClient = {
  /** Whether a service-account key is configured at all (the health check reports it). */
  readonly configured: boolean;
  /** Sends one RFC 5322 message as the public address. Never throws. */
  send(mime: string | Buffer): Promise<MailApiOutcome>;
};

type Credentials = { clientEmail: string; key: KeyObject; tokenUrl: string };
type CachedToken = { value: string; expiresAt: number };

class MailApiError extends Error {
  override name = 'MailApiError';
  readonly kind: FailureKind;
  constructor(kind: FailureKind, message: string) {
    super(message);
    this.kind = kind;
  }
}

/** Reads the service-account JSON once; a bad key is a configuration fault the first send reports as `unavailable`. */
function readCredentials(settings: Config['intake']['mail']): Credentials | { error: string } {
  if (!settings.serviceAccountKey) return { error: 'MAIL_SERVICE_ACCOUNT_KEY is not set' };
  let json: unknown;
  try {
    json = JSON.parse(settings.serviceAccountKey);
  } catch {
    return { error: 'MAIL_SERVICE_ACCOUNT_KEY is not JSON' };
  }
  const parsed = ServiceAccountKey.safeParse(json);
  if (!parsed.success) return { error: 'MAIL_SERVICE_ACCOUNT_KEY lacks client_email or private_key' };
  try {
    const key = createPrivateKey(parsed.data.private_key);
    if (key.asymmetricKeyType !== 'rsa') return { error: 'MAIL_SERVICE_ACCOUNT_KEY private_key is not an RSA key' };
    return { clientEmail: parsed.data.client_email, key, tokenUrl: settings.tokenUrl ?? parsed.data.token_uri ?? DEFAULT_TOKEN_URL };
  } catch {
    return { error: 'MAIL_SERVICE_ACCOUNT_KEY private_key is not a PEM private key' };
  }
}

/** The signed assertion of the JWT-bearer grant (RFC 7523): header.claims.signature, each base64url. */
function signAssertion(credentials: Credentials, subject: string, now: Date): string {
  const iat = Math.floor(now.getTime() / 1000);
  const header = { alg: 'RS256', typ: 'JWT' };
  const claims = { iss: credentials.clientEmail, sub: subject, scope: SEND_SCOPE, aud: credentials.tokenUrl, iat, exp: iat + 3600 };
  const signingInput = `${Buffer.from(JSON.stringify(header)).toString('base64url')}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const signature = sign('RSA-SHA256', Buffer.from(signingInput), credentials.key).toString('base64url');
  return `${signingInput}.${signature}`;
}

/** A 4xx/5xx answer → kind, as the library classifies its providers. */
function classifyStatus(status: number): FailureKind {
  // Our own credentials refused, throttled, or the service says it is down: nothing was sent.
  if (status === 401 || status === 403 || status === 429 || status === 503) return 'unavailable';
  if (status >= 500) return 'ambiguous';
  return 'rejected';
}

async function errorText(response: Response): Promise<string> {
  const body = await response.text().catch(() => '');
  return body.replace(/\s+/g, ' ').slice(0, ERROR_BODY_CHARS);
}

export type MailApiOptions = {
  settings: Config['intake']['mail'];
  /** The delegated mailbox: the public intake address. */
  subject: string;
  now?: () => Date;
};

export function createMailApiClient(options: MailApiOptions): MailApiClient {
  const { settings, subject } = options;
  const now = options.now ?? (() => new Date());
  const credentials = readCredentials(settings);
  const sendUrl = `${settings.apiBaseUrl.replace(/\/+$/, '')}/gmail/v1/users/me/messages/send`;
  let cached: CachedToken | undefined;
  // Concurrent sends with no token share one exchange instead of racing for several.
  let exchanging: Promise<CachedToken> | undefined;

  /** POST with the per-request timeout; a timeout or a network error may have reached the server, so ambiguous. */
  async function post(url: string, init: RequestInit): Promise<Response> {
    try {
      return await fetch(url, { ...init, method: 'POST', signal: AbortSignal.timeout(settings.timeoutMs) });
    } catch (error) {
      const timedOut = (error as Error).name === 'TimeoutError';
      throw new MailApiError('ambiguous', timedOut ? `no answer within ${settings.timeoutMs} ms` : `network error: ${(error as Error).message}`);
    }
  }

  async function exchange(creds: Credentials): Promise<CachedToken> {
    const issuedAt = now();
    const body = new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion: signAssertion(creds, subject, issuedAt) });
    const response = await post(creds.tokenUrl, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
    if (!response.ok) {
      // Whatever the token endpoint says, no mail was sent: a refused grant or a down endpoint is `unavailable`.
      throw new MailApiError('unavailable', `token endpoint ${response.status}: ${await errorText(response)}`);
    }
    const parsed = TokenAnswer.safeParse(await response.json().catch(() => undefined));
    if (!parsed.success) throw new MailApiError('unavailable', 'token endpoint answered without an access_token');
    const lifetimeMs = Math.min((parsed.data.expires_in ?? 3600) * 1000, MAX_TOKEN_LIFETIME_MS);
    return { value: parsed.data.access_token, expiresAt: issuedAt.getTime() + lifetimeMs };
  }

  async function accessToken(creds: Credentials): Promise<string> {
    if (cached && cached.expiresAt - TOKEN_EXPIRY_MARGIN_MS > now().getTime()) return cached.value;
    exchanging ??= exchange(creds).finally(() => (exchanging = undefined));
    cached = await exchanging;
    return cached.value;
  }

  async function sendOnce(creds: Credentials, raw: string): Promise<Response> {
    const token = await accessToken(creds);
    return post(sendUrl, { headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ raw }) });
  }

  return {
    configured: !('error' in credentials),
    async send(mime) {
      if ('error' in credentials) return { ok: false, kind: 'unavailable', error: `mail_api: ${credentials.error}` };
      const raw = Buffer.from(mime).toString('base64url');
      try {
        let response = await sendOnce(credentials, raw);
        if (response.status === 401) {
          // A revoked or early-expired token: forget it and try once with a fresh one.
          await response.body?.cancel();
          cached = undefined;
          response = await sendOnce(credentials, raw);
        }
        if (!response.ok) {
          return { ok: false, kind: classifyStatus(response.status), error: `mail_api ${response.status}: ${await errorText(response)}` };
        }
        const answer = SendAnswer.safeParse(await response.json().catch(() => undefined));
        if (!answer.success) return { ok: false, kind: 'ambiguous', error: 'mail_api: answer without a message id' };
        return { ok: true, messageId: answer.data.id, threadId: answer.data.threadId };
      } catch (error) {
        if (error instanceof MailApiError) return { ok: false, kind: error.kind, error: `mail_api: ${error.message}` };
        return { ok: false, kind: 'ambiguous', error: `mail_api: ${(error as Error).message}` };
      }
    },
  };
}
