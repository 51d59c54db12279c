import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { registerWebhookJobs } from '../jobs/webhooks/webhooks.worker.ts';
import { loadConfig } from '../server/config.ts';
import { AnyRow, sql } from '../server/db/database.ts';
import type { CoreDeps } from '../server/deps.ts';
import { systemClock } from '../server/deps.ts';
import { silentLog } from '../server/log.ts';
import { createMetrics } from '../server/metrics.ts';
import { startBoss } from '../server/queue/boss.ts';
import { withProcessServices } from '../server/services.ts';
import { encryptEndpointSecret, generateEndpointSecret } from '../server/webhooks/webhook-secrets.ts';
import { openBenchDatabase } from './database.ts';
import { report } from './report.ts';

const USERS = 50;
const BURST = Number(process.env.BENCH_WEBHOOK_BURST ?? 3000);
const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const LIFTED = { endpointPerHour: Infinity, userPerHour: Infinity, tenantPerHour: Infinity };

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/**
 * Webhook delivery from the outbox to a local HTTPS receiver (its own
 * thread), rate limits lifted, the real path throughout: conversion events
 * committed to outbox_events, the LISTEN/NOTIFY dispatcher, pg-boss attempt
 * jobs, signed POSTs through the SSRF-guarded client.
 *  - burst: BURST events committed at once; deliveries per second until the
 *    receiver has answered every one.
 *  - latency: RATE events per second for SECONDS, each committed on its own;
 *    p50/p99 from just before the commit to the receiver's arrival.
 */
export async function run() {
  const bench = await openBenchDatabase({ poolSize: 20 });
  const boss = await startBoss(bench.url, { supervise: true, schedule: false });
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-bench-webhooks-'));
  const receiver = new Worker(new URL('./webhook-receiver.worker.ts', import.meta.url));
  const arrivals = new Map<string, number>();
  let waiting: (() => void) | undefined;
  const port = await new Promise<number>((resolve) => {
    receiver.on('message', (message: { port?: number; arrivals?: Array<[string, number]> }) => {
      if (message.port) resolve(message.port);
      for (const [fileId, at] of message.arrivals ?? []) if (!arrivals.has(fileId)) arrivals.set(fileId, at);
      waiting?.();
    });
  });
  let workers: Awaited<ReturnType<typeof registerWebhookJobs>> | undefined;
  try {
    const config = loadConfig({
      NODE_ENV: 'test',
      FOLIO_DATA_DIR: dataDir,
      DATABASE_URL: bench.url,
      AUTH_JWT_SECRET: 'bench-jwt-secret-with-enough-length-123',
      DOWNLOAD_TOKEN_SECRET: 'bench',
      WEBHOOK_SECRET_KEY: 'bench',
      // the receiver is on loopback with a self-signed certificate
      WEBHOOK_TEST_ALLOW_LOOPBACK: 'true',
      LOG_LEVEL: 'silent',
    });
    const core: CoreDeps = { config, db: bench.db, boss, log: silentLog, clock: systemClock, databaseUrl: bench.url, metrics: createMetrics() };
    const { deps, close } = withProcessServices(core);
    workers = await registerWebhookJobs(deps, { schedule: false, overrides: { policy: { limits: LIFTED } } });

    // USERS users, each with one endpoint on the receiver, and files to convert
    const users = await bench.db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
      with c as (insert into customers (email) select 'bench' || n || '@example.com' from generate_series(1, ${USERS}) n returning id, email)
      insert into users (email, customer_id) select email, id from c returning id`);
    for (const [index, userId] of users.entries()) {
      const id = crypto.randomUUID();
      await bench.db.query(sql.type(AnyRow)`
        insert into webhook_endpoints (id, owner_id, url, events, secret_ciphertext)
        values (${id}, ${userId}, ${`https://127.0.0.1:${port}/hook/${index}`}, array['conversion.completed', 'conversion.failed'],
                ${encryptEndpointSecret(deps.webhooks.secretKey, id, generateEndpointSecret())})`);
    }
    const files = async (count: number) =>
      bench.db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
        insert into files (owner_id, original_name, content_type, page_count, status)
        select (${sql.array(users, 'uuid')})[1 + n % ${USERS}], 'report-' || n || '.pdf', 'application/pdf', 3, 'completed'
          from generate_series(1, ${count}) n returning id`);
    const emit = (fileIds: readonly string[]) =>
      bench.db.query(sql.type(AnyRow)`
        insert into outbox_events (type, aggregate_id, payload)
        select 'conversion.completed', f, jsonb_build_object('fileId', f, 'pages', 3, 'wcagStatus', 'passed', 'backend', 'local')
          from unnest(${sql.array(fileIds, 'uuid')}::uuid[]) f`);
    const until = async (ids: readonly string[], timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (!ids.every((id) => arrivals.has(id))) {
        if (Date.now() > deadline) throw new Error(`receiver got ${ids.filter((id) => arrivals.has(id)).length} of ${ids.length}`);
        await new Promise<void>((resolve) => {
          waiting = resolve;
          setTimeout(resolve, 50);
        });
      }
    };

    // warm up: connections, TLS sessions, JIT
    const warm = await files(200);
    await emit(warm);
    await until(warm, 60_000);

    const burst = await files(BURST);
    const started = performance.timeOrigin + performance.now();
    await emit(burst);
    await until(burst, 120_000);
    const lastArrival = Math.max(...burst.map((id) => arrivals.get(id)!));
    const perSecond = BURST / ((lastArrival - started) / 1000);
    if (process.env.BENCH_WEBHOOK_DEBUG) {
      const spread = await bench.db.one(sql.type(AnyRow)`
        select extract(epoch from max(o.dispatched_at) - min(o.created_at)) * 1000 as dispatched_all_ms,
               extract(epoch from max(a.started_at) - min(o.created_at)) * 1000 as last_attempt_ms
          from outbox_events o join webhook_deliveries d on d.event_id = o.id join webhook_delivery_attempts a on a.delivery_id = d.id
         where o.aggregate_id = any(${sql.array(burst, 'uuid')})`);
      console.log(JSON.stringify({ ...spread, arrivalsMs: lastArrival - started }));
    }
    report('webhooks', 'burst_deliveries_per_s', perSecond, 'deliveries/s', { events: BURST, endpoints: USERS, aim: '>= 300' });

    const steady = await files(RATE * SECONDS);
    const sentAt = new Map<string, number>();
    const tick = 1000 / RATE;
    const begin = performance.now();
    for (const [index, fileId] of steady.entries()) {
      const due = begin + index * tick;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      sentAt.set(fileId, performance.timeOrigin + performance.now());
      await emit([fileId]);
    }
    await until(steady, 60_000);
    const latencies = steady.map((id) => arrivals.get(id)! - sentAt.get(id)!).sort((a, b) => a - b);
    const context = { events: steady.length, ratePerSecond: RATE, aim: 'p99 < 1000' };
    report('webhooks', 'event_to_2xx_p50_ms', percentile(latencies, 50), 'ms', context);
    report('webhooks', 'event_to_2xx_p99_ms', percentile(latencies, 99), 'ms', context);
    report('webhooks', 'event_to_2xx_max_ms', latencies.at(-1)!, 'ms', context);

    if (process.env.BENCH_WEBHOOK_DEBUG) {
      const steps = await bench.db.any(sql.type(AnyRow)`
        select percentile_cont(array[0.5, 0.99]) within group (order by extract(epoch from o.dispatched_at - o.created_at) * 1000) as dispatch_ms,
               percentile_cont(array[0.5, 0.99]) within group (order by extract(epoch from a.started_at - o.dispatched_at) * 1000) as queue_ms,
               percentile_cont(array[0.5, 0.99]) within group (order by a.latency_ms) as post_ms
          from outbox_events o join webhook_deliveries d on d.event_id = o.id join webhook_delivery_attempts a on a.delivery_id = d.id
         where o.aggregate_id = any(${sql.array(steady, 'uuid')})`);
      console.log(JSON.stringify(steps));
    }
    // every delivery is recorded delivered shortly after its receiver answered
    const deadline = Date.now() + 30_000;
    for (;;) {
      const statuses = await bench.db.any(sql.type(z.object({ status: z.string(), n: z.number() }))`
        select status, count(*)::int as n from webhook_deliveries group by status`);
      if (statuses.every((row) => row.status === 'delivered')) break;
      if (Date.now() > deadline) throw new Error(`not every delivery ended delivered: ${JSON.stringify(statuses)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await close();
  } finally {
    await workers?.dispatcher?.stop();
    receiver.postMessage({ stop: true });
    await boss.stop({ graceful: false, close: true }).catch(() => {});
    await bench.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}
