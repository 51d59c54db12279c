import { beforeAll, describe, expect, it } from 'vitest';
import { createFolioClient, devTokensAvailable, FolioError, mintDevToken } from '../../client-sdk/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

let local: TestApp;
let configured: TestApp;

beforeAll(async () => {
  // The zero-configuration run: development, no AUTH_JWT_SECRET (local signing secrets).
  local = await startTestApp({ env: { NODE_ENV: 'development', AUTH_JWT_SECRET: undefined } });
  configured = await startTestApp();
}, 60_000);

describe('development tokens from the sign-in page', () => {
  it('a local development server mints a token the API accepts', async () => {
    expect(await devTokensAvailable({ baseUrl: local.baseUrl })).toBe(true);
    const token = await mintDevToken({ baseUrl: local.baseUrl }, 'Dev@Example.com');
    const me = await createFolioClient({ baseUrl: local.baseUrl, token }).account.me.query();
    expect(me.email).toBe('dev@example.com');
    await expect(mintDevToken({ baseUrl: local.baseUrl }, 'not an address')).rejects.toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
  });

  it('refuses behind a proxy, and does not exist where real secrets are configured', async () => {
    const proxied = await fetch(`${local.baseUrl}/api/dev/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9' },
      body: JSON.stringify({ email: 'dev@example.com' }),
    });
    expect(proxied.status).toBe(404);
    expect(await devTokensAvailable({ baseUrl: configured.baseUrl })).toBe(false);
    const refused = await mintDevToken({ baseUrl: configured.baseUrl }, 'dev@example.com').catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(FolioError);
    expect(refused).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });
});
