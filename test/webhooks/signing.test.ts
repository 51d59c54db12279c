import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { verifyWebhook } from '../../client-sdk/index.ts';
import {
  decryptEndpointSecret,
  deriveSecretKey,
  encryptEndpointSecret,
  generateEndpointSecret,
  signatureHeader,
} from '../../server/webhooks/webhook-secrets.ts';

// ../shared/notes/email-providers-and-webhooks.md §5.2 (Hook0 client test vector, our header format).
const VECTOR = {
  secret: 'secret',
  timestamp: 1636936200,
  body: 'hello !',
  signature: 'sha256=1b3d69df55f1e52f05224ba94a5162abeb17ef52cd7f4948c390f810d6a87e98',
};
const AT_VECTOR = VECTOR.timestamp * 1000;

function headersFor(signature: string, timestamp: number | string = VECTOR.timestamp) {
  return { 'x-webhook-signature': signature, 'x-webhook-timestamp': String(timestamp), 'x-webhook-id': '6f1c2a9e-0000-4000-8000-000000000001' };
}

describe('the signature scheme', () => {
  it('signs the public vector to its published value', () => {
    expect(signatureHeader([VECTOR.secret], VECTOR.timestamp, VECTOR.body)).toBe(VECTOR.signature);
  });

  it('verifies the public vector with the SDK helper (string body, bytes, Fetch Headers, Node headers)', async () => {
    const node = await verifyWebhook(VECTOR.body, headersFor(VECTOR.signature), VECTOR.secret, { now: AT_VECTOR });
    expect(node).toMatchObject({ ok: true, timestamp: VECTOR.timestamp, endpointId: '6f1c2a9e-0000-4000-8000-000000000001' });
    const fetchHeaders = new Headers({ 'X-Webhook-Signature': VECTOR.signature, 'X-Webhook-Timestamp': String(VECTOR.timestamp) });
    expect((await verifyWebhook(Buffer.from(VECTOR.body), fetchHeaders, [VECTOR.secret], { now: new Date(AT_VECTOR) })).ok).toBe(true);
    const mixedCase = { 'X-Webhook-Signature': VECTOR.signature, 'X-Webhook-Timestamp': [String(VECTOR.timestamp)] };
    expect((await verifyWebhook(VECTOR.body, mixedCase, VECTOR.secret, { now: AT_VECTOR })).ok).toBe(true);
  });

  it.each([
    ['the body changed', 'hello!', VECTOR.signature, VECTOR.secret, 'invalid_signature'],
    ['another secret', VECTOR.body, VECTOR.signature, 'secret2', 'invalid_signature'],
    ['a truncated signature', VECTOR.body, VECTOR.signature.slice(0, -2), VECTOR.secret, 'invalid_signature'],
    ['upper-case scheme only', VECTOR.body, VECTOR.signature.replace('sha256=', 'sha1='), VECTOR.secret, 'invalid_signature'],
    ['no signature', VECTOR.body, '', VECTOR.secret, 'missing_signature'],
  ])('rejects %s', async (_what, body, signature, secret, error) => {
    const result = await verifyWebhook(body, headersFor(signature), secret, { now: AT_VECTOR });
    expect(result).toMatchObject({ ok: false, error });
  });

  it('rejects a timestamp more than 300 s off in either direction, accepts 300 s, and honours toleranceSeconds', async () => {
    const at = (seconds: number) => verifyWebhook(VECTOR.body, headersFor(VECTOR.signature), VECTOR.secret, { now: AT_VECTOR + seconds * 1000 });
    expect((await at(300)).ok).toBe(true);
    expect((await at(-300)).ok).toBe(true);
    expect(await at(301)).toMatchObject({ ok: false, error: 'timestamp_out_of_tolerance' });
    expect(await at(-301)).toMatchObject({ ok: false, error: 'timestamp_out_of_tolerance' });
    const strict = await verifyWebhook(VECTOR.body, headersFor(VECTOR.signature), VECTOR.secret, { now: AT_VECTOR + 31_000, toleranceSeconds: 30 });
    expect(strict).toMatchObject({ ok: false, error: 'timestamp_out_of_tolerance' });
    expect(await verifyWebhook(VECTOR.body, headersFor(VECTOR.signature, 'hello'), VECTOR.secret, { now: AT_VECTOR })).toMatchObject({
      ok: false,
      error: 'invalid_timestamp',
    });
    const noTimestamp = await verifyWebhook(VECTOR.body, { 'x-webhook-signature': VECTOR.signature }, VECTOR.secret, { now: AT_VECTOR });
    expect(noTimestamp).toMatchObject({ ok: false, error: 'missing_timestamp' });
  });

  it('accepts any of several signatures and any of several secrets (a rotation window)', async () => {
    const [oldSecret, newSecret] = [generateEndpointSecret(), generateEndpointSecret()];
    const body = JSON.stringify({ event: 'ping', fileId: null });
    const both = signatureHeader([newSecret, oldSecret], VECTOR.timestamp, body);
    expect(both.split(',')).toHaveLength(2);
    for (const held of [oldSecret, newSecret, [generateEndpointSecret(), newSecret]]) {
      const result = await verifyWebhook(body, headersFor(both), held, { now: AT_VECTOR });
      expect(result).toMatchObject({ ok: true, payload: { event: 'ping' } });
    }
    const onlyNew = signatureHeader([newSecret], VECTOR.timestamp, body);
    expect((await verifyWebhook(body, headersFor(onlyNew), oldSecret, { now: AT_VECTOR })).ok).toBe(false);
  });

  it('keys the HMAC with the secret string itself, not a decoding of it', () => {
    const secret = generateEndpointSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update('5.{}').digest('hex');
    expect(signatureHeader([secret], 5, '{}')).toBe(`sha256=${expected}`);
  });
});

describe('endpoint secrets at rest', () => {
  const key = deriveSecretKey('test-webhook-key');
  const endpointId = '11111111-2222-4333-8444-555555555555';

  it('round-trips, never contains the secret, and differs each time', () => {
    const secret = generateEndpointSecret();
    const first = encryptEndpointSecret(key, endpointId, secret);
    const second = encryptEndpointSecret(key, endpointId, secret);
    expect(first).not.toBe(second);
    expect(first).not.toContain(secret.slice(6, 20));
    expect(decryptEndpointSecret(key, endpointId, first)).toBe(secret);
  });

  it('does not open under another key, for another endpoint, or when tampered with', () => {
    const stored = encryptEndpointSecret(key, endpointId, 'whsec_abc');
    expect(() => decryptEndpointSecret(deriveSecretKey('another-key'), endpointId, stored)).toThrow();
    expect(() => decryptEndpointSecret(key, '11111111-2222-4333-8444-000000000000', stored)).toThrow();
    const parts = stored.split('.');
    parts[2] = Buffer.from('whsec_abd').toString('base64url');
    expect(() => decryptEndpointSecret(key, endpointId, parts.join('.'))).toThrow();
  });
});
