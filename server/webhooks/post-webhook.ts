import { readBodyPrefix, SafeFetchError, truncateUtf8 } from '../net/safe-fetch.ts';
import type { AttemptRecord } from './webhooks.queries.ts';
import type { WebhookDeps } from './webhook-runtime.ts';
import { decryptEndpointSecret, signatureHeader } from './webhook-secrets.ts';

export type PostOutcome = AttemptRecord & {
  /** success: a 2xx in time; gone: 410 (disable the endpoint); failure: anything else */
  result: 'success' | 'gone' | 'failure';
  /** From a 429's Retry-After, in seconds. */
  retryAfterSeconds?: number;
};

/** The secrets that sign a delivery now: the current one, and the previous one while its rotation window lasts. */
export function liveSecrets(
  deps: Pick<WebhookDeps, 'secretKey'>,
  endpoint: { endpointId: string; secretCiphertext: string; previousSecretCiphertext: string | null; rotatingUntil: Date | null },
  now: Date,
): string[] {
  const secrets = [decryptEndpointSecret(deps.secretKey, endpoint.endpointId, endpoint.secretCiphertext)];
  if (endpoint.previousSecretCiphertext && endpoint.rotatingUntil && endpoint.rotatingUntil > now) {
    secrets.push(decryptEndpointSecret(deps.secretKey, endpoint.endpointId, endpoint.previousSecretCiphertext));
  }
  return secrets;
}

/** Retry-After as seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
function parseRetryAfter(value: string | undefined, now: Date): number | undefined {
  if (!value) return undefined;
  if (/^\d{1,9}$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now.getTime()) / 1000));
}

/**
 * One signed POST of a stored body (specification: "Delivery to a customer
 * endpoint"): `X-Webhook-Signature` over "{timestamp}.{rawBody}" with every
 * live secret, `X-Webhook-Timestamp` (Unix seconds, fresh per attempt, so a
 * retry 5 minutes later is still inside the receiver's 300 s window),
 * `X-Webhook-ID` (the endpoint). The URL is vetted and resolved again now,
 * never followed through a redirect, and a receiver gets `timeoutMs` to
 * answer. Never throws: the outcome says what happened.
 */
export async function postWebhook(
  deps: Pick<WebhookDeps, 'http' | 'clock' | 'policy'>,
  request: { url: string; endpointId: string; deliveryId: string; event: string; body: string; secrets: string[]; attempt: number },
): Promise<PostOutcome> {
  const startedAt = deps.clock.now();
  const timestamp = Math.floor(startedAt.getTime() / 1000);
  const began = performance.now();
  const base = { attempt: request.attempt, startedAt };
  try {
    const response = await deps.http.request(request.url, {
      method: 'POST',
      timeoutMs: deps.policy.timeoutMs,
      maxRedirects: 0,
      body: request.body,
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(request.body)),
        'user-agent': 'Folio-Webhooks/1.0',
        'x-webhook-id': request.endpointId,
        'x-webhook-timestamp': String(timestamp),
        'x-webhook-signature': signatureHeader(request.secrets, timestamp, request.body),
        'x-webhook-event': request.event,
        'x-webhook-delivery': request.deliveryId,
      },
    });
    const left = deps.policy.timeoutMs - (performance.now() - began);
    // A few bytes over the kept kilobyte, so a character cut by the reader can be told from one cut by us.
    const { bytes } = await readBodyPrefix(response.body, { keepBytes: deps.policy.responseBodyBytes + 4, timeoutMs: Math.max(250, left) });
    const answered = { ...base, httpStatus: response.status, responseBody: truncateUtf8(bytes, deps.policy.responseBodyBytes), latencyMs: response.latencyMs };
    if (response.status >= 200 && response.status < 300) return { ...answered, error: null, result: 'success' };
    if (response.status === 410) return { ...answered, error: 'HTTP 410 Gone: the endpoint was disabled', result: 'gone' };
    if (response.status >= 300 && response.status < 400) {
      return { ...answered, error: `HTTP ${response.status}: redirects are not followed`, result: 'failure' };
    }
    const retryAfter = response.status === 429 ? parseRetryAfter(String(response.headers['retry-after'] ?? ''), startedAt) : undefined;
    return { ...answered, error: `HTTP ${response.status}`, result: 'failure', retryAfterSeconds: retryAfter };
  } catch (error) {
    const message = error instanceof SafeFetchError ? `${error.kind}: ${error.message}` : `error: ${(error as Error).message}`;
    return { ...base, httpStatus: null, responseBody: null, latencyMs: Math.round(performance.now() - began), error: message.slice(0, 500), result: 'failure' };
  }
}
