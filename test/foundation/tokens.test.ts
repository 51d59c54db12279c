import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { createTokenVerifier } from '../../server/auth/tokens.ts';

describe('JWKS token verification', async () => {
  const { publicKey, privateKey } = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  let fetches = 0;
  const server = http.createServer((_req, res) => {
    fetches++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  const verify = createTokenVerifier({
    jwksUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`,
    issuer: 'https://idp.example.com',
  });

  const sign = (key: CryptoKey, claims: { iss?: string; kid?: string } = {}) =>
    new SignJWT({ email: 'jwks@example.com' })
      .setProtectedHeader({ alg: 'RS256', kid: claims.kid ?? 'k1' })
      .setSubject('idp|123')
      .setIssuer(claims.iss ?? 'https://idp.example.com')
      .setExpirationTime('5m')
      .sign(key);

  it('accepts a token signed by a key of the set', async () => {
    expect(await verify(await sign(privateKey))).toEqual({ subject: 'idp|123', email: 'jwks@example.com', emailVerified: false, name: undefined });
    expect(fetches).toBeGreaterThan(0);
  });

  it('refuses another key, and the wrong issuer', async () => {
    await expect(verify(await sign(other.privateKey))).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(verify(await sign(privateKey, { iss: 'https://evil.example.com' }))).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
