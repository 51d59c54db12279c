import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sql } from '../../server/db/database.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { api, makePaid, uploadPdf } from '../service/harness.ts';

/** Input a careless or hostile client sends: each is a 4xx with our error shape, never a 500. */

let app: TestApp;
let token: string;
beforeAll(async () => {
  app = await startTestApp();
  token = await app.token('edge@example.com');
  await api(app, token, 'GET', '/api/me');
  await makePaid(app, 'edge@example.com', 100);
}, 60_000);

const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

function post(route: string, body: string) {
  return fetch(`${app.baseUrl}${route}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body });
}

describe('JSON nested 5,000 deep', () => {
  it('is a 400 on a REST route and on /trpc, refused before it is parsed', async () => {
    const rest = await post('/api/convert/00000000-0000-4000-8000-000000000000', `{"highFidelity":${deep(5000)}}`);
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/nested/) });
    const trpc = await post('/trpc/conversion.start', `{"fileId":${deep(5000)}}`);
    expect(trpc.status).toBe(400);
  });

  it('is a 400 in a tRPC GET ?input= too (a query and a batch), refused before it is parsed', async () => {
    const get = (query: string) => fetch(`${app.baseUrl}/trpc/${query}`, { headers: { authorization: `Bearer ${token}` } });
    // brackets and braces go in the URL as they are (percent-encoded, 5,000 levels would not pass Node's 16 KB header limit)
    const routes = [
      `conversion.downloadLink?input={"fileId":${deep(5000)}}`,
      `conversion.downloadLink?input=${deep(5000)}`,
      `account.me,conversion.downloadLink?batch=1&input={"1":{"fileId":${deep(5000)}}}`,
    ];
    for (const route of routes) {
      const response = await get(route);
      expect(response.status, route.slice(0, 60)).toBe(400);
      expect(await response.json(), route.slice(0, 60)).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringMatching(/nested/) });
    }
    // shallow input still reaches the procedure (a 4xx of its own, not the depth refusal)
    const shallow = await get(`conversion.downloadLink?input=${encodeURIComponent(`{"fileId":${deep(10)}}`)}`);
    expect(shallow.status).toBe(400);
    expect(JSON.stringify(await shallow.json())).not.toMatch(/nested/);
  });

  it('still takes JSON nested a little, as real bodies are', async () => {
    const response = await post('/api/convert/00000000-0000-4000-8000-000000000000', `{"highFidelity":false,"x":${deep(10)}}`);
    expect(response.status).not.toBe(500);
  });
});

describe('30 concurrent POST /api/convert/:id of one file', () => {
  it('start one conversion; the others are 409, none is a 500', async () => {
    const fileId = await uploadPdf(app, token);
    const responses = await Promise.all(Array.from({ length: 30 }, () => api(app, token, 'POST', `/api/convert/${fileId}`, {})));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(29);
    const jobs = await app.deps.db.oneFirst(
      sql.type(z.object({ n: z.number() }))`select count(*)::int as n from large_conversion_jobs where file_id = ${fileId}`,
    );
    expect(jobs).toBe(1);
  }, 60_000);
});

describe('bad percent-encoding in raw routes', () => {
  it.each(['/api/convert/%C0%AE%C0%AE%2F/stream', '/api/download/%C0%AE%C0%AE%2F/zip', '/api/convert/%E0%A4%A/stream'])('%s is a 400', async (route) => {
    const response = await fetch(`${app.baseUrl}${route}`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: 'BAD_REQUEST' });
  });
});

describe('conversion options are validated, not coerced', () => {
  it.each([
    ['"false" for a boolean', '{"highFidelity":"false"}'],
    ['"yes" for a boolean', '{"highFidelity":"yes"}'],
    ['1 for a boolean', '{"highFidelity":1}'],
    ['an array for the body', '[1,2,3]'],
  ])(
    '%s is a 400 and starts nothing',
    async (_what, body) => {
      const fileId = await uploadPdf(app, token);
      const rest = await post(`/api/convert/${fileId}`, body);
      expect(rest.status).toBe(400);
      const trpcBody = body.startsWith('{') ? `{"fileId":"${fileId}",${body.slice(1)}` : body;
      const trpc = await post('/trpc/conversion.start', trpcBody);
      expect(trpc.status).toBe(400);
      const jobs = await app.deps.db.oneFirst(
        sql.type(z.object({ n: z.number() }))`select count(*)::int as n from large_conversion_jobs where file_id = ${fileId}`,
      );
      expect(jobs).toBe(0);
    },
    60_000,
  );
});
