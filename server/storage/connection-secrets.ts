import { decryptEndpointSecret, encryptEndpointSecret, type SecretKey } from '../webhooks/webhook-secrets.ts';

/**
 * A connection's secret access key at rest: AES-256-GCM (the webhook secrets'
 * scheme) under the storage purpose's key, bound to the connection id, so a
 * ciphertext copied onto another connection does not open.
 */
export function encryptConnectionSecret(key: SecretKey, connectionId: string, secret: string): string {
  return encryptEndpointSecret(key, connectionId, secret);
}

/** Throws when the ciphertext was not made for this connection under this key. */
export function decryptConnectionSecret(key: SecretKey, connectionId: string, stored: string): string {
  return decryptEndpointSecret(key, connectionId, stored);
}
