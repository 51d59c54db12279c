import { createHmac, hkdfSync, timingSafeEqual } from 'node:crypto';

/**
 * Tokens for links we mail (share views, team invites, one-click
 * unsubscribe): `<payload>.<expiry seconds or 0>.<HMAC-SHA256>`, base64url.
 * Each purpose signs with its own key derived from one secret (HKDF), so a
 * token minted for one purpose is worthless for another. Expiry 0 means the
 * link never expires (an unsubscribe link must work forever).
 */
export type LinkPurpose = 'share' | 'team-invite' | 'unsubscribe';

const PAYLOAD = /^[A-Za-z0-9_-]{1,400}$/;

function purposeKey(secret: string, purpose: LinkPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'folio-signed-link', purpose, 32));
}

function mac(key: Buffer, payload: string, expiresAt: number): Buffer {
  return createHmac('sha256', key).update(`${payload}.${expiresAt}`).digest();
}

/** Signs `subject` (an id or an address) for `purpose`; `expiresAt` undefined means never. */
export function signLinkToken(secret: string, purpose: LinkPurpose, subject: string, expiresAt?: Date): string {
  const payload = Buffer.from(subject, 'utf8').toString('base64url');
  const expiry = expiresAt ? Math.floor(expiresAt.getTime() / 1000) : 0;
  return `${payload}.${expiry}.${mac(purposeKey(secret, purpose), payload, expiry).toString('base64url')}`;
}

/** The subject of an untampered, unexpired token of this purpose; undefined otherwise, never saying why. */
export function verifyLinkToken(secret: string, purpose: LinkPurpose, token: unknown, now: Date): string | undefined {
  if (typeof token !== 'string' || token.length > 600) return undefined;
  const [payload, expiryText, signature, extra] = token.split('.');
  if (extra !== undefined || !payload || !PAYLOAD.test(payload) || !expiryText || !/^\d{1,12}$/.test(expiryText) || !signature) return undefined;
  const expiry = Number(expiryText);
  const given = Buffer.from(signature, 'base64url');
  const expected = mac(purposeKey(secret, purpose), payload, expiry);
  // Compare first, then check expiry, so timing does not depend on which check fails.
  const valid = given.length === expected.length && timingSafeEqual(given, expected);
  if (!valid || (expiry !== 0 && expiry * 1000 <= now.getTime())) return undefined;
  return Buffer.from(payload, 'base64url').toString('utf8');
}
