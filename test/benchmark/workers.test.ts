import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { PipelineValue } from '../../server/benchmark/benchmark.queries.ts';
import { sql } from '../../server/db/database.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { api, balance, makePaid, THREE_PAGES, uploadPdf } from '../service/harness.ts';
import { until } from '../helpers/wait.ts';

/**
 * The scale-out deployment for real: the API in this process, and pipeline
 * workers as separate `node jobs/main.ts --queues benchmark` processes
 * against the same database and object store, started, SIGTERMed (the spot
 * interruption warning) and SIGKILLed (a lost instance) by the test.
 */

const root = path.resolve(import.meta.dirname, '..', '..');
// The SIGKILL test's deployment has a short visibility timeout, so a killed worker's job comes back within the
// test, yet longer than a run takes on a loaded machine. API and workers share the queue settings, as processes of
// one deployment do: the sender's policy goes with each job.
const VISIBILITY_TIMEOUT_SECONDS = 25;
const SHORT_TIMEOUT_ENV = {
  BENCHMARK_VISIBILITY_TIMEOUT_SECONDS: String(VISIBILITY_TIMEOUT_SECONDS),
  BENCHMARK_RETRY_LIMIT: '3',
  QUEUE_SUPERVISE_SECONDS: '1',
};

type Worker = { child: ChildProcess; pid: number; output: () => string; exited: Promise<number | null> };

let app: TestApp;
const workers: Worker[] = [];

function startWorker(env: Record<string, string> = {}): Worker {
  const deployment = app;
  const child = spawn(process.execPath, ['jobs/main.ts', '--queues', 'benchmark'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'test',
      DATABASE_URL: deployment.database.url,
      FOLIO_DATA_DIR: deployment.config.dataDir,
      DOWNLOAD_TOKEN_SECRET: 'test-download-secret',
      WEBHOOK_SECRET_KEY: 'test-webhook-key',
      AUTH_JWT_SECRET: 'unused-by-workers-but-required-00000000',
      LOG_LEVEL: 'info',
      CONVERSION_POOL_SIZE: '1',
      DATABASE_POOL_SIZE: '3',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const worker = { child, pid: child.pid!, output: () => output, exited };
  workers.push(worker);
  return worker;
}

async function ready(worker: Worker) {
  await until(
    async () => worker.output(),
    (output) => output.includes('workers started') || worker.child.exitCode !== null,
    120_000,
    'a worker to start',
  );
  expect(worker.child.exitCode, worker.output()).toBeNull();
}

const Row = z.object({ pipeline: z.number(), value: PipelineValue });
function results(sessionId: string) {
  return app.deps.db.any(sql.type(Row)`select pipeline, value from benchmark_results where session_id = ${sessionId} order by pipeline`);
}
function sessionStatus(sessionId: string) {
  return app.deps.db.oneFirst(sql.type(z.object({ status: z.string() }))`select status from benchmark_sessions where id = ${sessionId}`);
}
const pidOf = (value: PipelineValue) => Number(value.worker?.split(':').pop());

let token: string;
let fileId: string;

/** A deployment's API, in this process (it sends only: no worker runs here), with a paying user and an uploaded file. */
async function startDeployment(env: Record<string, string> = {}) {
  app = await startTestApp({ env: { CONVERSION_POOL_SIZE: '1', ...env }, workers: false });
  token = await app.token('fleet@example.com');
  await api(app, token, 'GET', '/api/me');
  await makePaid(app, 'fleet@example.com', 1000);
  fileId = await uploadPdf(app, token, THREE_PAGES);
}

afterAll(async () => {
  for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
  await Promise.all(workers.map((worker) => worker.exited));
});

async function start(pipelines: Array<{ backend: string; uxOptimizer?: boolean }>) {
  const response = await api(app, token, 'POST', '/api/benchmark', { fileId, pipelines });
  const body = (await response.json()) as { sessionId: string; status: string };
  expect(response.status, JSON.stringify(body)).toBe(200);
  expect(body.status).toBe('running');
  return body.sessionId;
}

describe('benchmark workers in separate processes', () => {
  beforeAll(() => startDeployment(), 60_000);

  it('two workers run three pipelines between them; the session completes once with three results', async () => {
    const [first, second] = [startWorker(), startWorker()];
    await Promise.all([ready(first), ready(second)]);
    const before = await balance(app, 'fleet@example.com');
    const sessionId = await start([{ backend: 'local' }, { backend: 'local', uxOptimizer: true }, { backend: 'local' }]);
    await until(
      () => sessionStatus(sessionId),
      (status) => status === 'complete',
      300_000,
      'the session to complete',
    );
    const rows = await results(sessionId);
    expect(rows.map((row) => row.value.status)).toEqual(['complete', 'complete', 'complete']);
    expect(rows.every((row) => row.value.attempts === 1)).toBe(true);
    // both processes took work
    expect(new Set(rows.map((row) => pidOf(row.value)))).toEqual(new Set([first.pid, second.pid]));
    expect(await balance(app, 'fleet@example.com')).toMatchObject({ credits: before.credits - 9, held: 0 });
  }, 420_000);

  it('a worker that gets SIGTERM mid-run takes no new job, exits within 2 minutes, and nothing is lost', async () => {
    const sessionId = await start([{ backend: 'local' }, { backend: 'local' }, { backend: 'local', uxOptimizer: true }]);
    const running = await until(
      () => results(sessionId),
      (rows) => rows.some((row) => row.value.status === 'running'),
      120_000,
      'a pipeline to start',
    );
    const victim = workers.find((worker) => worker.pid === pidOf(running.find((row) => row.value.status === 'running')!.value))!;
    const signalledAt = new Date();
    victim.child.kill('SIGTERM');
    const code = await Promise.race([victim.exited, new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), 120_000))]);
    expect(code, victim.output()).toBe(0);
    expect(victim.output()).toMatch(/shutting down/);

    await until(
      () => sessionStatus(sessionId),
      (status) => status === 'complete',
      300_000,
      'the session to complete',
    );
    const rows = await results(sessionId);
    expect(rows.map((row) => row.value.status)).toEqual(['complete', 'complete', 'complete']);
    // every attempt that started after the signal ran elsewhere
    for (const row of rows) {
      if (new Date(row.value.startedAt!) > signalledAt) expect(pidOf(row.value)).not.toBe(victim.pid);
    }
  }, 420_000);
});

describe('a lost worker (short visibility timeout)', () => {
  beforeAll(async () => {
    // the first deployment's workers would only compete for the cores
    for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    await startDeployment(SHORT_TIMEOUT_ENV);
  }, 60_000);

  it('the job of a SIGKILLed worker is retried after the visibility timeout and the session completes', async () => {
    // two workers of this deployment: one to kill, one to take the job back
    await Promise.all([ready(startWorker(SHORT_TIMEOUT_ENV)), ready(startWorker(SHORT_TIMEOUT_ENV))]);
    const sessionId = await start([{ backend: 'local' }]);
    const [row] = await until(
      () => results(sessionId),
      (rows) => rows[0]?.value.status === 'running',
      120_000,
      'the pipeline to start',
    );
    const victim = workers.find((worker) => worker.pid === pidOf(row!.value))!;
    victim.child.kill('SIGKILL');
    const killedAt = Date.now();
    await victim.exited;

    await until(
      () => sessionStatus(sessionId),
      (status) => status === 'complete',
      300_000,
      'the session to complete after the retry',
    );
    const [done] = await results(sessionId);
    expect(done!.value.status).toBe('complete');
    // 2 at least: on a loaded machine the retry itself may outlive the short timeout of this test and go a third time
    expect(done!.value.attempts).toBeGreaterThanOrEqual(2);
    expect(pidOf(done!.value)).not.toBe(victim.pid);
    // it came back only once the visibility timeout had passed, not at once
    expect(new Date(done!.value.startedAt!).getTime() - killedAt).toBeGreaterThanOrEqual((VISIBILITY_TIMEOUT_SECONDS - 2) * 1000);
  }, 420_000);
});
