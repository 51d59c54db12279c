import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sql } from '../../server/db/database.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { api, balance, makePaid, THREE_PAGES, uploadPdf } from '../service/harness.ts';

let app: TestApp;

beforeAll(async () => {
  // the edge deployment: no worker process anywhere
  app = await startTestApp({ env: { BENCHMARK_MODE: 'inline', CONVERSION_POOL_SIZE: '1' }, workers: false });
}, 60_000);

describe('POST /api/benchmark with BENCHMARK_MODE=inline', () => {
  it('blocks until every pipeline finished and answers with the full result', async () => {
    const token = await app.token('edge@example.com');
    await api(app, token, 'GET', '/api/me');
    await makePaid(app, 'edge@example.com', 50);
    const fileId = await uploadPdf(app, token, THREE_PAGES);
    const response = await api(app, token, 'POST', '/api/benchmark', { fileId, pipelines: [{ backend: 'local' }, { backend: 'local', uxOptimizer: true }] });
    const body = (await response.json()) as { sessionId: string; status: string; results: Array<Record<string, unknown>> };
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.status).toBe('complete');
    expect(body.results).toHaveLength(2);
    for (const result of body.results) {
      expect(result).toMatchObject({ status: 'complete', pages: 3, attempts: 1, downloads: expect.any(Object) });
      expect(result.wordRecall).toBeGreaterThan(0.9);
    }
    expect(await balance(app, 'edge@example.com')).toMatchObject({ credits: 44, held: 0 });
    // nothing went through the queue
    const queued = await app.deps.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from pgboss.job where name = 'benchmark'`);
    expect(queued).toBe(0);
    // GET shows the same finished session
    const again = (await (await api(app, token, 'GET', `/api/benchmark/${body.sessionId}`)).json()) as { status: string };
    expect(again.status).toBe('complete');
  }, 120_000);
});
