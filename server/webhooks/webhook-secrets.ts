import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Endpoint secrets: generated here, shown to the customer once (at creation
 * and at rotation), stored only as AES-256-GCM ciphertext under a key derived
 * from WEBHOOK_SECRET_KEY, and bound to their endpoint (the endpoint id is the
 * additional data, so a ciphertext copied onto another row does not open).
 */

const CIPHER_VERSION = 'v1';

export type SecretKey = { readonly key: Buffer };

/**
 * The AES key, derived once per process from WEBHOOK_SECRET_KEY (any length of text).
 * Each use of the master key gets its own `purpose`, so a ciphertext of one kind never opens as another.
 */
export function deriveSecretKey(webhookSecretKey: string, purpose = 'endpoint-secret-encryption'): SecretKey {
  return { key: Buffer.from(hkdfSync('sha256', Buffer.from(webhookSecretKey, 'utf8'), 'folio-webhooks', purpose, 32)) };
}

/** `whsec_` and 32 random bytes in base64url: the receiver uses the whole string's UTF-8 bytes as its HMAC key. */
export function generateEndpointSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

export function encryptEndpointSecret(key: SecretKey, endpointId: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  cipher.setAAD(Buffer.from(endpointId));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [CIPHER_VERSION, iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

/** Throws when the ciphertext was not made for this endpoint under this key. */
export function decryptEndpointSecret(key: SecretKey, endpointId: string, stored: string): string {
  const [version, iv, body, tag] = stored.split('.');
  if (version !== CIPHER_VERSION || !iv || !body || !tag) throw new Error('unreadable webhook secret ciphertext');
  const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(endpointId));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}

/**
 * `X-Webhook-Signature`: `sha256=<lowercase hex HMAC-SHA256 of "{timestamp}.{rawBody}">`
 * keyed with the secret's UTF-8 bytes, one per live secret (newest first,
 * comma-separated) so a receiver holding either secret during a rotation
 * accepts the delivery.
 */
export function signatureHeader(secrets: string[], timestampSeconds: number, rawBody: string): string {
  return secrets.map((secret) => `sha256=${createHmac('sha256', secret).update(`${timestampSeconds}.${rawBody}`).digest('hex')}`).join(',');
}
