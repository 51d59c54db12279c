import { createHmac, timingSafeEqual } from 'node:crypto';

/** Svix / Standard Webhooks: the official libraries hard-code five minutes either way. */
export const SVIX_TOLERANCE_SECONDS = 5 * 60;

export type SvixHeaders = { id?: string; timestamp?: string; signature?: string };
export type SvixVerdict = { ok: true } | { ok: false; reason: 'missing_header' | 'bad_timestamp' | 'timestamp_out_of_range' | 'bad_signature' | 'no_secret' };

/**
 * Verifies a Svix-signed body (Resend's webhooks): HMAC-SHA256 keyed with the
 * base64-decoded part of `whsec_...` over `${id}.${timestamp}.${rawBody}`,
 * base64; the header lists `v1,<sig>` entries separated by spaces (several
 * during a secret rotation) and any one matching suffices. The raw bytes are
 * signed, so this must see the body before any JSON parsing.
 */
export function verifySvixSignature(secret: string | undefined, headers: SvixHeaders, rawBody: Buffer, now: Date): SvixVerdict {
  if (!secret) return { ok: false, reason: 'no_secret' };
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) return { ok: false, reason: 'missing_header' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'bad_timestamp' };
  if (Math.abs(Math.floor(now.getTime() / 1000) - Number(timestamp)) > SVIX_TOLERANCE_SECONDS) return { ok: false, reason: 'timestamp_out_of_range' };
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest();
  for (const entry of signature.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const given = Buffer.from(value, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true };
  }
  return { ok: false, reason: 'bad_signature' };
}
