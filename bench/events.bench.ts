import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import pg from 'pg';
import { buildApp } from '../server/app.ts';
import { loadConfig } from '../server/config.ts';
import { systemClock, type CoreDeps } from '../server/deps.ts';
import { withProcessServices } from '../server/services.ts';
import { silentLog } from '../server/log.ts';
import { createMetrics } from '../server/metrics.ts';
import { startBoss } from '../server/queue/boss.ts';
import { openBenchDatabase } from './database.ts';
import { report } from './report.ts';

const POSTERS = 32;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const SECRET = 'bench-bus-secret';

/** A provider-B delivery event for message n, as the event bus posts it. */
function sesDelivery(messageId: string) {
  return {
    version: '0',
    id: messageId,
    'detail-type': 'Email Delivered',
    source: 'aws.ses',
    time: new Date().toISOString(),
    detail: {
      eventType: 'Delivery',
      mail: {
        timestamp: new Date().toISOString(),
        messageId,
        source: 'Folio <no-reply@folio.example>',
        destination: ['reader@example.com'],
        commonHeaders: { subject: 'Bench' },
        tags: { 'ses:configuration-set': ['transactional'] },
      },
      delivery: { timestamp: new Date().toISOString(), recipients: ['reader@example.com'], smtpResponse: '250 ok' },
    },
  };
}

async function forSeconds(workers: number, step: (worker: number, n: number) => Promise<unknown>) {
  let calls = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      let n = 0;
      while (performance.now() < deadline) {
        await step(worker, n++);
        calls++;
      }
    }),
  );
  return calls / ((performance.now() - started) / 1000);
}

/**
 * Delivery events recorded per second: through POST /api/webhooks/ses-events
 * (HTTP + recording function) at 32 concurrent posters, through
 * record_email_event alone on 32 connections, and a single-row upsert into
 * email_log on the same database as the floor's baseline. Every event is a new
 * message (the common case: one Delivery per send).
 */
export async function run() {
  const bench = await openBenchDatabase({ poolSize: POSTERS });
  const boss = await startBoss(bench.url, { supervise: false, schedule: false });
  let server: Server | undefined;
  try {
    const config = loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: bench.url,
      CLOUD_WEBHOOK_SECRET: SECRET,
      AUTH_JWT_SECRET: 'bench-jwt-secret-with-enough-length-123',
      DOWNLOAD_TOKEN_SECRET: 'bench',
      WEBHOOK_SECRET_KEY: 'bench',
    });
    const deps: CoreDeps = { config, db: bench.db, boss, log: silentLog, clock: systemClock, databaseUrl: bench.url, metrics: createMetrics() };
    const { app } = buildApp(withProcessServices(deps).deps);
    server = await new Promise<Server>((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/webhooks/ses-events`;
    const run = `${process.pid}-${Date.now()}`;
    const post = async (worker: number, n: number, phase: string) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-webhook-secret': SECRET },
        body: JSON.stringify(sesDelivery(`${phase}-${run}-${worker}-${n}`)),
      });
      if (response.status !== 200) throw new Error(`ses-events answered ${response.status}`);
      await response.arrayBuffer();
    };
    await forSeconds(POSTERS, (worker, n) => post(worker, n, 'warm'));
    const viaRoute = await forSeconds(POSTERS, (worker, n) => post(worker, n, 'route'));

    const clients = await Promise.all(
      Array.from({ length: POSTERS }, async () => {
        const client = new pg.Client({ connectionString: bench.url });
        await client.connect();
        return client;
      }),
    );
    try {
      const viaFunction = await forSeconds(POSTERS, (worker, n) =>
        clients[worker]!.query(
          `select * from record_email_event(p_provider => 'provider_b', p_provider_message_id => $1, p_event => 'delivered', p_to => '["reader@example.com"]'::jsonb)`,
          [`fn-${run}-${worker}-${n}`],
        ),
      );
      const baseline = await forSeconds(POSTERS, (worker, n) =>
        clients[worker]!.query(
          `insert into email_log (status, provider, provider_message_id, to_addresses, last_event, last_event_at)
                                values ('delivered', 'provider_b', $1, '{reader@example.com}', 'delivered', now())
                                on conflict (provider, provider_message_id) do update set status = excluded.status, last_event = excluded.last_event, last_event_at = excluded.last_event_at`,
          [`up-${run}-${worker}-${n}`],
        ),
      );
      report('events', 'ses_route_events_per_s', viaRoute, 'events/s', { posters: POSTERS, seconds: SECONDS });
      report('events', 'record_email_event_per_s', viaFunction, 'calls/s', { clients: POSTERS, seconds: SECONDS });
      report('events', 'single_row_upsert_per_s', baseline, 'calls/s', { clients: POSTERS, seconds: SECONDS });
      report('events', 'record_email_event_vs_upsert_ratio', viaFunction / baseline, 'ratio');
    } finally {
      await Promise.all(clients.map((client) => client.end()));
    }
  } finally {
    server?.closeAllConnections();
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    await boss.stop({ graceful: false, close: true }).catch(() => {});
    await bench.close();
  }
}
