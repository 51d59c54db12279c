import type { WebhookPayload } from '../server/webhooks/webhook-payload.ts';

export type { WebhookPayload };

/** Fetch `Headers`, or Node's `req.headers` (any letter case; arrays allowed). */
export type WebhookHeaders = Headers | Record<string, string | string[] | undefined>;

export type VerifyWebhookOptions = {
  /** Largest allowed difference between `now` and X-Webhook-Timestamp, in seconds. Default 300. */
  toleranceSeconds?: number;
  /** The receiver's clock (a Date or epoch milliseconds); default the current time. */
  now?: Date | number;
};

export type VerifyWebhookError = 'missing_signature' | 'missing_timestamp' | 'invalid_timestamp' | 'timestamp_out_of_tolerance' | 'invalid_signature';

export type VerifyWebhookResult =
  /** `payload` is the parsed body (undefined only for a signed body that is not JSON, which Folio never sends). */
  | { ok: true; payload: WebhookPayload | undefined; timestamp: number; endpointId: string | undefined }
  | { ok: false; error: VerifyWebhookError; message: string };

const DEFAULT_TOLERANCE_SECONDS = 300;
const SIGNATURE = /^sha256=([0-9a-f]{64})$/;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((candidate) => candidate.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value.join(',') : value;
}

function hexBytes(hex: string): Uint8Array<ArrayBuffer> {
  const bytes = new Uint8Array(hex.length / 2);
  for (let index = 0; index < bytes.length; index++) bytes[index] = parseInt(hex.slice(index * 2, index * 2 + 2), 16);
  return bytes;
}

/**
 * Checks a Folio webhook delivery before trusting it: X-Webhook-Timestamp
 * within `toleranceSeconds` of `now` (both directions), and an
 * X-Webhook-Signature entry equal to `sha256=<hex HMAC-SHA256 of
 * "{timestamp}.{rawBody}">` under one of the secrets. Pass the raw body bytes
 * exactly as received (never re-serialised JSON). Give several secrets (or
 * rely on Folio sending several signatures) to ride through a rotation.
 * HMAC comparison is constant-time (Web Crypto `verify`); works in Node 20+,
 * browsers and edge runtimes. Never throws.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: WebhookHeaders,
  secret: string | string[],
  options: VerifyWebhookOptions = {},
): Promise<VerifyWebhookResult> {
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const nowMs = options.now === undefined ? Date.now() : typeof options.now === 'number' ? options.now : options.now.getTime();
  const signatureHeader = header(headers, 'x-webhook-signature');
  if (!signatureHeader) return { ok: false, error: 'missing_signature', message: 'X-Webhook-Signature is missing' };
  const timestampHeader = header(headers, 'x-webhook-timestamp');
  if (!timestampHeader) return { ok: false, error: 'missing_timestamp', message: 'X-Webhook-Timestamp is missing' };
  if (!/^\d{1,12}$/.test(timestampHeader.trim())) return { ok: false, error: 'invalid_timestamp', message: 'X-Webhook-Timestamp is not Unix seconds' };
  const timestamp = Number(timestampHeader.trim());
  if (Math.abs(nowMs / 1000 - timestamp) > tolerance) {
    return { ok: false, error: 'timestamp_out_of_tolerance', message: `X-Webhook-Timestamp is more than ${tolerance} s from now` };
  }

  const body = typeof rawBody === 'string' ? new TextEncoder().encode(rawBody) : rawBody;
  const prefix = new TextEncoder().encode(`${timestamp}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix);
  signed.set(body, prefix.length);
  const given = signatureHeader
    .split(',')
    .map((part) => SIGNATURE.exec(part.trim().toLowerCase())?.[1])
    .filter((hex): hex is string => hex !== undefined)
    .slice(0, 10);
  const secrets = (Array.isArray(secret) ? secret : [secret]).filter((value) => typeof value === 'string' && value.length > 0);
  let matched = false;
  for (const key of secrets) {
    const hmacKey = await crypto.subtle.importKey('raw', new TextEncoder().encode(key), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    for (const hex of given) {
      // Every pair is checked (no early exit), so timing does not say which secret matched.
      if (await crypto.subtle.verify('HMAC', hmacKey, hexBytes(hex), signed)) matched = true;
    }
  }
  if (!matched) return { ok: false, error: 'invalid_signature', message: 'no X-Webhook-Signature entry matches a secret' };

  let payload: WebhookPayload | undefined;
  try {
    payload = JSON.parse(new TextDecoder().decode(body)) as WebhookPayload;
  } catch {
    payload = undefined;
  }
  return { ok: true, payload, timestamp, endpointId: header(headers, 'x-webhook-id') };
}
