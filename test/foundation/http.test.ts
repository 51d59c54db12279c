import { describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { createFolioClient, errorCode } from '../../client-sdk/index.ts';
import { startTestApp, TEST_JWT_SECRET } from '../helpers/app.ts';

const app = await startTestApp();

async function get(path: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${app.baseUrl}${path}`, { headers });
  return { status: response.status, body: await response.json().catch(() => undefined) };
}

describe('HTTP surface', () => {
  it('reports database and queue health', async () => {
    expect(await get('/health')).toEqual({
      status: 200,
      body: { status: 'ok', database: 'ok', queue: 'ok', intake: { smtp: 'off', smtpPort: null, mailApi: 'unconfigured' } },
    });
  });

  it('serves the OpenAPI document and a docs page', async () => {
    const spec = await get('/openapi.json');
    expect(spec.status).toBe(200);
    expect(spec.body.openapi).toMatch(/^3\./);
    expect(spec.body.paths['/api/me']).toBeDefined();
    const docs = await fetch(`${app.baseUrl}/docs`);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger-ui-bundle.js');
    expect(await (await fetch(`${app.baseUrl}/docs/init.js`)).text()).toContain("url: '/openapi.json'");
    expect((await fetch(`${app.baseUrl}/docs/assets/swagger-ui-bundle.js`)).status).toBe(200);
  });

  it('answers an unknown route with a JSON 404', async () => {
    expect(await get('/api/nothing-here')).toEqual({ status: 404, body: { code: 'NOT_FOUND', message: expect.any(String) } });
  });

  it('answers a malformed JSON body with a 400, not a 500', async () => {
    const response = await fetch(`${app.baseUrl}/trpc/account.me`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"oops' });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('answers a wrongly typed tRPC input with a 400 and the issues', async () => {
    const input = encodeURIComponent(JSON.stringify({ 0: 42 }));
    const response = await fetch(`${app.baseUrl}/trpc/account.me?batch=1&input=${input}`, {
      headers: { authorization: `Bearer ${await app.token('typed@example.com')}` },
    });
    expect(response.status).toBe(400);
    const [body] = (await response.json()) as Array<{ error: { data: { code: string } } }>;
    expect(body!.error.data.code).toBe('VALIDATION_FAILED');
  });
});

describe('Bearer authentication', () => {
  it('answers 401 without a token, with an expired one, and with a wrongly signed one', async () => {
    expect(await get('/api/me')).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED' } });
    const expired = await app.token('late@example.com', { expiresIn: -60 });
    expect(await get('/api/me', { authorization: `Bearer ${expired}` })).toMatchObject({
      status: 401,
      body: { code: 'UNAUTHORIZED', message: 'Token expired' },
    });
    const forged = await new SignJWT({ email: 'forged@example.com' })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject('test:forged@example.com')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode(`${TEST_JWT_SECRET}-not`));
    expect(await get('/api/me', { authorization: `Bearer ${forged}` })).toMatchObject({ status: 401, body: { code: 'UNAUTHORIZED' } });
    const none = `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.`;
    expect(await get('/api/me', { authorization: `Bearer ${none}` })).toMatchObject({ status: 401 });
  });

  it('creates a free account on first sign-in and returns the same user afterwards', async () => {
    const token = await app.token('first@example.com');
    const first = await get('/api/me', { authorization: `Bearer ${token}` });
    expect(first).toMatchObject({ status: 200, body: { email: 'first@example.com', balance: { planType: 'free', freePagesLeft: 10 } } });
    const again = await get('/api/me', { authorization: `Bearer ${token}` });
    expect(again.body.id).toBe(first.body.id);
  });
});

describe('client SDK', () => {
  it('drives the live server with types from the router', async () => {
    const folio = createFolioClient({ baseUrl: app.baseUrl, token: () => app.token('sdk@example.com') });
    const me = await folio.account.me.query();
    expect(me.email).toBe('sdk@example.com');
    expect(me.balance.freePagesLeft).toBe(10);

    const anonymous = createFolioClient({ baseUrl: app.baseUrl });
    const failure = await anonymous.account.me.query().catch((error: unknown) => error);
    expect(errorCode(failure)).toBe('UNAUTHORIZED');
  });
});
