import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerBenchmarkJobs } from '../../jobs/benchmark/benchmark.worker.ts';
import { failAfterRetries } from '../../server/benchmark/fail-after-retries.ts';
import { finishPipeline } from '../../server/benchmark/finish-pipeline.ts';
import { runPipeline } from '../../server/benchmark/run-pipeline.ts';
import { sql } from '../../server/db/database.ts';
import { startParserFake } from '../fakes/parser-api.ts';
import { createCloudAlarmProbe } from '../../server/benchmark/cloud-alarms.ts';
import { createMetrics } from '../../server/metrics.ts';
import { createTestClock, startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';
import { api, balance, makePaid, THREE_PAGES, uploadPdf } from '../service/harness.ts';

const parser = await startParserFake();
afterAll(() => parser.close());

const ADMIN = 'admin@example.com';
const ENV = {
  PARSER_API_URL: parser.url,
  PARSER_API_KEY: parser.apiKey,
  ADMIN_EMAILS: ADMIN,
  // a failing pipeline goes to the dead-letter queue after its first attempt
  BENCHMARK_RETRY_LIMIT: '0',
  CONVERSION_POOL_SIZE: '1',
  BENCHMARK_CONCURRENCY: '2',
};

type Result = {
  pipeline: number;
  backend: string;
  uxOptimizer: boolean;
  status: string;
  attempts: number;
  timeMs?: number;
  pages?: number;
  pageClasses?: { standard: number; complex: number };
  wcagStatus?: string;
  violations?: { count: number; rules: number };
  wordRecall?: number | null;
  costUsd?: number;
  credits?: number;
  downloads?: { html: string; pdf: string; report: string };
  error?: { code: string; message: string };
};
type Session = { sessionId: string; status: string; results: Result[]; completedAt: string | null };

let app: TestApp;

beforeAll(async () => {
  parser.behave({ pendingPolls: 0 });
  app = await startTestApp({ env: ENV, workers: true });
  await registerBenchmarkJobs(app.deps);
}, 60_000);

async function paidUser(email: string, credits = 100) {
  const token = await app.token(email);
  await api(app, token, 'GET', '/api/me');
  await makePaid(app, email, credits);
  return token;
}

async function session(token: string, sessionId: string): Promise<Session> {
  const response = await api(app, token, 'GET', `/api/benchmark/${sessionId}`);
  expect(response.status).toBe(200);
  return (await response.json()) as Session;
}

function waitComplete(token: string, sessionId: string) {
  return until(
    () => session(token, sessionId),
    (value) => value.status === 'complete',
    120_000,
    'the session to complete',
  );
}

const sessionCount = () => app.deps.db.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from benchmark_sessions`);

describe('POST /api/benchmark (queue mode)', () => {
  it('answers at once with running, runs three pipelines on workers, and completes once with three results', async () => {
    const token = await paidUser('three@example.com');
    const fileId = await uploadPdf(app, token, THREE_PAGES);
    const response = await api(app, token, 'POST', '/api/benchmark', {
      fileId,
      pipelines: [{ backend: 'local' }, { backend: 'local', uxOptimizer: true }, { backend: 'parser' }],
    });
    const started = (await response.json()) as { sessionId: string; status: string };
    expect(response.status, JSON.stringify(started)).toBe(200);
    expect(started).toEqual({ sessionId: expect.any(String), status: 'running' });
    // credits for 3 pages x 3 pipelines are held before any work
    expect(await balance(app, 'three@example.com')).toMatchObject({ credits: 100, held: 9 });

    const done = await waitComplete(token, started.sessionId);
    expect(done.completedAt).not.toBeNull();
    expect(done.results.map((result) => [result.pipeline, result.backend, result.uxOptimizer, result.status])).toEqual([
      [0, 'local', false, 'complete'],
      [1, 'local', true, 'complete'],
      [2, 'parser', false, 'complete'],
    ]);
    for (const result of done.results) {
      expect(result.attempts).toBe(1);
      expect(result.timeMs).toBeGreaterThan(0);
      expect(result.pages).toBe(3);
      expect(result.pageClasses!.standard + result.pageClasses!.complex).toBe(3);
      expect(['passed', 'failed']).toContain(result.wcagStatus);
      expect(result.violations!.count).toBeGreaterThanOrEqual(result.violations!.rules);
      expect(result.costUsd).toBeGreaterThanOrEqual(0);
      expect(result.credits).toBe(3);
      expect(result.downloads).toBeDefined();
    }
    // the local engine reads the text layer itself: nearly every word comes through
    expect(done.results[0]!.wordRecall).toBeGreaterThan(0.9);
    expect(done.results[2]!.wordRecall).toBeGreaterThan(0.5);
    // completed once: charged 9 credits, nothing left held
    expect(await balance(app, 'three@example.com')).toMatchObject({ credits: 91, held: 0 });

    const html = await fetch(`${app.baseUrl}${done.results[1]!.downloads!.html}`);
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await html.text()).toMatch(/<html[^>]*lang=/);
    const pdf = await fetch(`${app.baseUrl}${done.results[0]!.downloads!.pdf}`);
    expect(pdf.status).toBe(200);
    expect(
      Buffer.from(await pdf.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    // the handler run again on a finished pipeline (a duplicate delivery) changes nothing, nor does a late dead letter
    const stored = () => app.deps.db.one(sql.unsafe`select value from benchmark_results where session_id = ${started.sessionId} and pipeline = 0`);
    const before = await stored();
    const message = { sessionId: started.sessionId, pipeline: 0, file: fileId, backend: 'local' as const, uxOptimizer: false };
    expect(await runPipeline(app.deps, message)).toBe('skipped');
    expect(await failAfterRetries(app.deps, message, { deadLettered: true })).toEqual({ written: false, sessionCompleted: false });
    expect(await stored()).toEqual(before);
    expect(await balance(app, 'three@example.com')).toMatchObject({ credits: 91, held: 0 });

    // a link of one pipeline opens nothing of another
    const forged = done.results[0]!.downloads!.report.replace('/pipelines/0/', '/pipelines/1/');
    expect((await fetch(`${app.baseUrl}${forged}`)).status).toBe(403);
  }, 180_000);

  it('shows a session only to its owner', async () => {
    const owner = await paidUser('owner@example.com');
    const fileId = await uploadPdf(app, owner, THREE_PAGES);
    const response = await api(app, owner, 'POST', '/api/benchmark', { fileId, pipelines: [{ backend: 'local' }] });
    const { sessionId } = (await response.json()) as { sessionId: string };
    const stranger = await paidUser('stranger@example.com');
    expect((await api(app, stranger, 'GET', `/api/benchmark/${sessionId}`)).status).toBe(404);
    expect((await fetch(`${app.baseUrl}/api/benchmark/${sessionId}`)).status).toBe(401);
    // nor can a stranger benchmark the owner's file
    expect((await api(app, stranger, 'POST', '/api/benchmark', { fileId, pipelines: [{ backend: 'local' }] })).status).toBe(404);
    await waitComplete(owner, sessionId);
  }, 120_000);

  it.each([
    ['no pipelines', []],
    ['seven pipelines', Array.from({ length: 7 }, () => ({ backend: 'local' }))],
    ['an unknown backend', [{ backend: 'magic' }]],
    ['a non-boolean uxOptimizer', [{ backend: 'local', uxOptimizer: 3 }]],
  ])('refuses %s with 400 and starts nothing', async (_name, pipelines) => {
    const token = await paidUser('bounds@example.com');
    const fileId = await uploadPdf(app, token, THREE_PAGES);
    const before = await sessionCount();
    const response = await api(app, token, 'POST', '/api/benchmark', { fileId, pipelines });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: string }).code).toBe('VALIDATION_FAILED');
    expect(await sessionCount()).toBe(before);
  });

  it('refuses a session the credits do not cover with 402 and starts nothing', async () => {
    const token = await paidUser('poor@example.com', 5);
    const fileId = await uploadPdf(app, token, THREE_PAGES);
    const before = await sessionCount();
    const response = await api(app, token, 'POST', '/api/benchmark', { fileId, pipelines: [{ backend: 'local' }, { backend: 'parser' }] });
    expect(response.status).toBe(402);
    expect(((await response.json()) as { code: string }).code).toBe('INSUFFICIENT_CREDITS');
    expect(await sessionCount()).toBe(before);
    expect(await balance(app, 'poor@example.com')).toMatchObject({ credits: 5, held: 0 });
  });
});

describe('POST /api/benchmark as a multipart upload', () => {
  async function postMultipart(token: string, pipelines: string | undefined) {
    const form = new FormData();
    if (pipelines !== undefined) form.append('pipelines', pipelines);
    form.append('file', new Blob([await readFile(THREE_PAGES)], { type: 'application/pdf' }), 'paper.pdf');
    return fetch(`${app.baseUrl}/api/benchmark`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
  }

  it('uploads the file and starts the session in one request', async () => {
    const token = await paidUser('multipart@example.com');
    const response = await postMultipart(token, JSON.stringify([{ backend: 'local', uxOptimizer: true }]));
    const body = (await response.json()) as { sessionId: string; status: string };
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.status).toBe('running');
    const done = await waitComplete(token, body.sessionId);
    expect(done.results).toEqual([expect.objectContaining({ backend: 'local', uxOptimizer: true, status: 'complete', pages: 3 })]);
  }, 120_000);

  it('keeps the uploaded file when the pipelines are bad, and says which file it is', async () => {
    const token = await paidUser('multipart-bad@example.com');
    const before = await sessionCount();
    const response = await postMultipart(token, '[{"backend": "magic"}]');
    const body = (await response.json()) as { code: string; details: { fileId: string } };
    expect(response.status).toBe(400);
    expect(body.code).toBe('VALIDATION_FAILED');
    expect(await sessionCount()).toBe(before);
    // the file is there to benchmark with a JSON body
    const again = await api(app, token, 'POST', '/api/benchmark', { fileId: body.details.fileId, pipelines: [{ backend: 'local' }] });
    expect(again.status).toBe(200);
    await waitComplete(token, ((await again.json()) as { sessionId: string }).sessionId);
    expect((await postMultipart(token, undefined)).status).toBe(400);
  }, 120_000);
});

describe('failed pipelines', () => {
  it('fails a pipeline at once when retrying cannot help, charges only the completed one', async () => {
    const token = await paidUser('badkey@example.com');
    const fileId = await uploadPdf(app, token, THREE_PAGES);
    parser.next({ kind: 'error', status: 401, route: 'submit' });
    const response = await api(app, token, 'POST', '/api/benchmark', { fileId, pipelines: [{ backend: 'parser' }, { backend: 'local' }] });
    const { sessionId } = (await response.json()) as { sessionId: string };
    const done = await waitComplete(token, sessionId);
    const [failed, completed] = done.results;
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'ERR_PARSER_API_KEY_INVALID' } });
    expect(failed!.downloads).toBeUndefined();
    expect(completed!.status).toBe('complete');
    expect(await balance(app, 'badkey@example.com')).toMatchObject({ credits: 97, held: 0 });
  }, 120_000);

  it('dead-letters a pipeline that fails every attempt, shows it failed, raises the dead-letter alarm', async () => {
    const token = await paidUser('gone@example.com');
    const fileId = await uploadPdf(app, token, THREE_PAGES);
    // the source vanishes from the store: a fault that looks transient, so the queue retries, then dead-letters
    const storageKey = await app.deps.db.oneFirst(sql.type(z.object({ key: z.string() }))`select storage_key as key from files where id = ${fileId}`);
    await app.deps.store.delete(storageKey);
    const response = await api(app, token, 'POST', '/api/benchmark', { fileId, pipelines: [{ backend: 'local' }] });
    const { sessionId } = (await response.json()) as { sessionId: string };
    const done = await waitComplete(token, sessionId);
    expect(done.results[0]).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'PIPELINE_FAILED' } });
    // nothing converted, nothing charged
    expect(await balance(app, 'gone@example.com')).toMatchObject({ credits: 100, held: 0 });
    const metrics = await (await fetch(`${app.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/folio_cloud_alarm\{alarm="pipeline_dead_letter"\} 1/);
    expect(metrics).toMatch(/folio_cloud_alarm\{alarm="queue_backlog"\} 0/);
    expect(metrics).toMatch(/folio_benchmark_dead_letters_total 1/);
  }, 120_000);
});

describe('the last writer', () => {
  it('marks the session complete exactly once when two pipelines finish together', async () => {
    const token = await paidUser('race@example.com', 1000);
    const fileId = await uploadPdf(app, token, THREE_PAGES);
    for (let round = 0; round < 5; round++) {
      // two queued values written straight into the table, so no worker races the test
      const sessionId = await app.deps.db.transaction(async (tx) => {
        const id = await tx.oneFirst(sql.type(z.object({ id: z.uuid() }))`
          insert into benchmark_sessions (owner_id, customer_id, file_id, pipeline_count, pages, hold_id)
          select u.id, u.customer_id, ${fileId}, 2, 3, create_credit_hold(u.customer_id, 6, interval '1 hour', 'race')
            from users u where u.email = 'race@example.com' returning id`);
        for (const pipeline of [0, 1]) {
          await tx.query(sql.unsafe`insert into benchmark_results (session_id, pipeline, value)
            values (${id}, ${pipeline}, ${sql.jsonb({ status: 'running', backend: 'local', uxOptimizer: false, attempts: 1 })})`);
        }
        return id;
      });
      const value = { status: 'complete' as const, backend: 'local' as const, uxOptimizer: false, attempts: 1, pages: 3 };
      const outcomes = await Promise.all([0, 1].map((pipeline) => finishPipeline(app.deps, { sessionId, pipeline, value })));
      expect(outcomes.filter((outcome) => outcome.sessionCompleted)).toHaveLength(1);
      expect(outcomes.every((outcome) => outcome.written)).toBe(true);
      // a duplicate delivery of a finished pipeline changes nothing
      expect(await finishPipeline(app.deps, { sessionId, pipeline: 0, value: { ...value, status: 'failed' } })).toEqual({
        written: false,
        sessionCompleted: false,
      });
      expect((await session(token, sessionId)).status).toBe('complete');
    }
    expect(await balance(app, 'race@example.com')).toMatchObject({ credits: 1000 - 5 * 6, held: 0 });
  }, 60_000);
});

describe('GET /api/benchmark/fleet', () => {
  it('is for admins only', async () => {
    const token = await paidUser('not-admin@example.com');
    expect((await api(app, token, 'GET', '/api/benchmark/fleet')).status).toBe(403);
  });

  it('reports the depth and the count the rule asks for, under the cooldown the autoscaler passes', async () => {
    const admin = await app.token(ADMIN);
    await api(app, admin, 'GET', '/api/me');
    const user = await paidUser('fleet@example.com', 1000);
    const fileId = await uploadPdf(app, user, THREE_PAGES);
    // twelve pipelines waiting, written straight into the table so no worker takes them
    await app.deps.db.transaction(async (tx) => {
      for (let index = 0; index < 2; index++) {
        const id = await tx.oneFirst(sql.type(z.object({ id: z.uuid() }))`
          insert into benchmark_sessions (owner_id, customer_id, file_id, pipeline_count, pages)
          select u.id, u.customer_id, ${fileId}, 6, 3 from users u where u.email = 'fleet@example.com' returning id`);
        for (let pipeline = 0; pipeline < 6; pipeline++) {
          await tx.query(sql.unsafe`insert into benchmark_results (session_id, pipeline, value)
            values (${id}, ${pipeline}, ${sql.jsonb({ status: 'queued', backend: 'local', uxOptimizer: false, attempts: 0 })})`);
        }
      }
    });
    const read = async (query: string) => {
      const response = await api(app, admin, 'GET', `/api/benchmark/fleet${query}`);
      expect(response.status).toBe(200);
      return (await response.json()) as Record<string, unknown>;
    };
    expect(await read('')).toMatchObject({ depth: 12, queued: 12, running: 0, target: 2, desired: 2, maxInstances: 4, backlogAlarm: false });
    const justScaled = new Date(Date.now() - 60_000).toISOString();
    expect(await read(`?current=1&lastScaledAt=${encodeURIComponent(justScaled)}`)).toMatchObject({ target: 2, desired: 1 });
    const longAgo = new Date(Date.now() - 10 * 60_000).toISOString();
    expect(await read(`?current=1&lastScaledAt=${encodeURIComponent(longAgo)}`)).toMatchObject({ target: 2, desired: 2, cooldownRemainingSeconds: 0 });
    expect((await api(app, admin, 'GET', '/api/benchmark/fleet?current=9')).status).toBe(400);
    await app.deps.db.query(sql.unsafe`delete from benchmark_sessions where file_id = ${fileId}`);
  });
});

describe('cloud alarms on /metrics', () => {
  it('raises api_5xx when the API answered a 5xx, for five minutes after the last one', async () => {
    const probe = createCloudAlarmProbe();
    const clock = createTestClock();
    const deps = { ...app.deps, metrics: createMetrics(), clock };
    const alarm = async () => (await deps.metrics.cloudAlarms.get()).values.find((value) => value.labels.alarm === 'api_5xx')?.value;
    await probe(deps);
    expect(await alarm()).toBe(0);
    deps.metrics.httpResponses.inc({ class: '5xx' });
    await probe(deps);
    expect(await alarm()).toBe(1);
    clock.advance(5 * 60_000 - 1);
    await probe(deps);
    expect(await alarm()).toBe(1);
    clock.advance(1);
    await probe(deps);
    expect(await alarm()).toBe(0);
  });
});
