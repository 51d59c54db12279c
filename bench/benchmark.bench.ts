import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { buildApp } from '../server/app.ts';
import { signSessionToken } from '../server/auth/tokens.ts';
import { loadConfig } from '../server/config.ts';
import type { CoreDeps } from '../server/deps.ts';
import { sql } from '../server/db/database.ts';
import { silentLog } from '../server/log.ts';
import { createMetrics } from '../server/metrics.ts';
import { startBoss } from '../server/queue/boss.ts';
import { withProcessServices } from '../server/services.ts';
import { openBenchDatabase } from './database.ts';
import { report } from './report.ts';

/**
 * Scale-out of the benchmark service: sessions per minute with 1 and with 2
 * worker processes (`node jobs/main.ts --queues benchmark`) on the local
 * pipeline, and the enqueue-to-start latency. Each worker stands for one
 * spot instance with one core (CONVERSION_POOL_SIZE=1), so two of them on
 * this 2-core machine are the two-instance fleet. The API runs here and
 * sends only.
 */

const ROOT = path.resolve(import.meta.dirname, '..');
const SOURCE = path.resolve(ROOT, '../shared/corpus/multicolumn-latex.pdf');
const SESSIONS = Number(process.env.BENCH_BENCHMARK_SESSIONS ?? 12);
const LATENCY_SAMPLES = Number(process.env.BENCH_BENCHMARK_LATENCY_SAMPLES ?? 15);
const ROUNDS = Number(process.env.BENCH_BENCHMARK_ROUNDS ?? 2);
const JWT = 'bench-jwt-secret-with-enough-length-12345';

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

export async function run(): Promise<void> {
  const bench = await openBenchDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-bench-benchmark-'));
  const env = {
    NODE_ENV: 'test',
    FOLIO_DATA_DIR: dataDir,
    DATABASE_URL: bench.url,
    AUTH_JWT_SECRET: JWT,
    DOWNLOAD_TOKEN_SECRET: 'bench',
    WEBHOOK_SECRET_KEY: 'bench',
    CONVERSION_POOL_SIZE: '1',
    BENCHMARK_MAX_PAGES: '100',
  };
  const config = loadConfig(env);
  const boss = await startBoss(bench.url, { supervise: false, schedule: false });
  const core: CoreDeps = { config, db: bench.db, boss, log: silentLog, clock: { now: () => new Date() }, databaseUrl: bench.url, metrics: createMetrics() };
  const services = withProcessServices(core);
  const server = await new Promise<Server>((resolve) => {
    const listening = buildApp(services.deps).app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const workers: ChildProcess[] = [];

  const startWorkers = async (count: number) => {
    const started = Array.from({ length: count }, () => {
      const child = spawn(process.execPath, ['jobs/main.ts', '--queues', 'benchmark'], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      workers.push(child);
      let output = '';
      child.stdout!.on('data', (chunk) => (output += chunk));
      child.stderr!.on('data', (chunk) => (output += chunk));
      return () => output;
    });
    await until(async () => started.every((output) => output().includes('workers started')), Boolean, 60_000, 'the workers to start');
  };
  const stopWorkers = async () => {
    const stopping = workers.splice(0);
    const exits = stopping.map((child) => new Promise((resolve) => (child.exitCode === null ? child.on('exit', resolve) : resolve(null))));
    for (const child of stopping) child.kill('SIGTERM');
    await Promise.all(exits);
  };

  try {
    const email = 'bench@example.com';
    const token = await signSessionToken(JWT, { subject: `bench:${email}`, email });
    const headers = { authorization: `Bearer ${token}` };
    await fetch(`${base}/api/me`, { headers });
    await bench.db.query(sql.unsafe`update customers set plan_type = 'paid', credits_remaining = 1000000`);
    const form = new FormData();
    form.append('file', new Blob([await fs.readFile(SOURCE)], { type: 'application/pdf' }), 'paper.pdf');
    const fileId = ((await (await fetch(`${base}/api/files`, { method: 'POST', headers, body: form })).json()) as { id: string }).id;

    const startSession = async () => {
      const response = await fetch(`${base}/api/benchmark`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ fileId, pipelines: [{ backend: 'local' }] }),
      });
      if (response.status !== 200) throw new Error(`POST /api/benchmark answered ${response.status}: ${await response.text()}`);
      return ((await response.json()) as { sessionId: string }).sessionId;
    };
    const Timing = z.object({ createdAt: z.date(), completedAt: z.date().nullable(), startedAt: z.string().nullable() });
    const timings = (ids: string[]) =>
      bench.db.any(sql.type(Timing)`
        select s.created_at as "createdAt", s.completed_at as "completedAt", r.value->>'startedAt' as "startedAt"
          from benchmark_sessions s join benchmark_results r on r.session_id = s.id where s.id = any(${sql.array(ids, 'uuid')})`);
    const allComplete = async (ids: string[]) =>
      until(
        () => timings(ids),
        (rows) => rows.length === ids.length && rows.every((row) => row.completedAt),
        30 * 60_000,
        'the sessions',
      );

    // 1 and 2 workers alternate for ROUNDS rounds and each keeps its best rate: on a machine shared with
    // other work, the load moves between runs, and the best run is the one least disturbed by it
    const best: Record<number, number> = { 1: 0, 2: 0 };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const count of [1, 2]) {
        await startWorkers(count);
        // every worker's engine warm (pool thread, pdf.js, the audit) before the clock starts
        await allComplete(await Promise.all(Array.from({ length: count * 2 }, startSession)));
        const startedAt = Date.now();
        const ids = await Promise.all(Array.from({ length: SESSIONS }, startSession));
        const rows = await allComplete(ids);
        const elapsedMs = Math.max(...rows.map((row) => row.completedAt!.getTime())) - startedAt;
        const rate = SESSIONS / (elapsedMs / 60_000);
        best[count] = Math.max(best[count]!, rate);
        report('benchmark', `sessions per minute, ${count} worker process${count > 1 ? 'es' : ''}`, rate, 'sessions/min', {
          round,
          sessions: SESSIONS,
          pipeline: 'local, 3 pages',
          elapsedMs,
          load: os.loadavg()[0],
        });
        if (count === 2 && round === ROUNDS) {
          // enqueue-to-start: one session at a time into an idle fleet, creation of the queue job to the worker's claim
          const latencies: number[] = [];
          for (let sample = 0; sample < LATENCY_SAMPLES; sample++) {
            const [row] = await allComplete([await startSession()]);
            latencies.push(new Date(row!.startedAt!).getTime() - row!.createdAt.getTime());
          }
          report('benchmark', 'enqueue-to-start latency p50', percentile(latencies, 50), 'ms', { samples: LATENCY_SAMPLES, workers: 2 });
          report('benchmark', 'enqueue-to-start latency p99', percentile(latencies, 99), 'ms', { samples: LATENCY_SAMPLES, workers: 2 });
        }
        await stopWorkers();
      }
    }
    report('benchmark', 'scale-out ratio, 2 workers / 1 worker (best runs)', best[2]! / best[1]!, 'x', {
      aim: 1.7,
      cores: os.availableParallelism(),
      load: os.loadavg()[0],
    });
  } finally {
    for (const child of workers) child.kill('SIGKILL');
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await boss.stop({ graceful: false, close: true }).catch(() => {});
    await services.close();
    await bench.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
