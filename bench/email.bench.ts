import { randomUUID } from 'node:crypto';
import { Resend } from 'resend';
import { z } from 'zod';
import { loadConfig } from '../server/config.ts';
import { sql } from '../server/db/database.ts';
import { systemClock, type CoreDeps } from '../server/deps.ts';
import { createEmailService } from '../server/email/email-service.ts';
import { silentLog } from '../server/log.ts';
import { createMetrics } from '../server/metrics.ts';
import { startBoss } from '../server/queue/boss.ts';
import { startResendFake } from '../test/fakes/resend.ts';
import { openBenchDatabase } from './database.ts';
import { report } from './report.ts';

const BENCH = 'email';
const CONCURRENCY = 32;
const THROUGHPUT_SENDS = 3_000;
const LATENCY_SENDS = 600;
const ROUNDS = 3;
const API_KEY = 're_bench';

/**
 * The library (suppression lookup + Resend send + send-log row) against bare
 * `resend` SDK calls, both on the same local Resend fake in the same run:
 * sends per second at 32 concurrent (aim: library ≥ 0.7 × bare) and the
 * latency the library adds per send, measured one send at a time (aims: p50 ≤ 3 ms, p99 ≤ 5 ms).
 */
export async function run() {
  const database = await openBenchDatabase({ poolSize: 20 });
  const resend = await startResendFake({ apiKey: API_KEY });
  const boss = await startBoss(database.url, { supervise: false, schedule: false });
  try {
    // A realistic suppression list, so the lookup goes through the index of a non-trivial table.
    await database.db.query(sql.type(z.object({}))`
      insert into email_suppressions (email, reason) select 'gone' || i || '@example.com', 'hard_bounce' from generate_series(1, 10000) i`);
    const config = loadConfig({
      NODE_ENV: 'production',
      DATABASE_URL: database.url,
      PROVIDER_A_API_KEY: API_KEY,
      PROVIDER_A_BASE_URL: resend.url,
      EMAIL_SENDER_DOMAIN: 'folio.example',
    });
    const deps: CoreDeps = { config, db: database.db, boss, log: silentLog, clock: systemClock, databaseUrl: database.url, metrics: createMetrics() };
    const library = createEmailService(deps);
    const bare = new Resend(API_KEY, { baseUrl: resend.url });

    const content = { subject: 'Your conversion is ready', html: '<p>Your file <b>report.pdf</b> is ready.</p>', text: 'Your file report.pdf is ready.' };
    const librarySend = async (n: number) => {
      const result = await library.send({ category: 'transactional', source: 'bench', to: `reader${n}@example.com`, ...content });
      if (result.status !== 'sent') throw new Error(`library send ${result.status}`);
    };
    const bareSend = async (n: number) => {
      const id = randomUUID();
      const { error } = await bare.emails.send(
        {
          from: 'Folio <no-reply@folio.example>',
          to: [`reader${n}@example.com`],
          ...content,
          headers: { 'X-Folio-Log-Id': id },
          tags: [{ name: 'folio_log_id', value: id }],
        },
        { idempotencyKey: id, signal: AbortSignal.timeout(15_000) },
      );
      if (error) throw new Error(`bare send ${error.name}`);
    };

    // Warm both paths (connections, JIT, the settings read).
    await concurrently(200, CONCURRENCY, bareSend);
    await concurrently(200, CONCURRENCY, librarySend);

    const rates = { bare: [] as number[], library: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, send] of [
        ['bare', bareSend],
        ['library', librarySend],
      ] as const) {
        resend.reset();
        const started = performance.now();
        await concurrently(THROUGHPUT_SENDS, CONCURRENCY, send);
        rates[name].push(THROUGHPUT_SENDS / ((performance.now() - started) / 1000));
      }
    }
    const bareRate = median(rates.bare);
    const libraryRate = median(rates.library);
    report(BENCH, 'bare_sdk_sends_per_second', bareRate, 'sends/s', { concurrency: CONCURRENCY, sends: THROUGHPUT_SENDS, rounds: ROUNDS });
    report(BENCH, 'library_sends_per_second', libraryRate, 'sends/s', { concurrency: CONCURRENCY, sends: THROUGHPUT_SENDS, rounds: ROUNDS });
    report(BENCH, 'library_to_bare_ratio', libraryRate / bareRate, 'ratio', { aim: '>= 0.7' });

    const latencies = { bare: [] as number[], library: [] as number[] };
    resend.reset();
    for (let n = 0; n < LATENCY_SENDS; n++) {
      for (const [name, send] of [
        ['bare', bareSend],
        ['library', librarySend],
      ] as const) {
        const started = performance.now();
        await send(n);
        latencies[name].push(performance.now() - started);
      }
    }
    for (const p of [50, 99]) {
      const bareP = percentile(latencies.bare, p);
      const libraryP = percentile(latencies.library, p);
      report(BENCH, `bare_sdk_latency_p${p}`, bareP, 'ms', { sends: LATENCY_SENDS });
      report(BENCH, `library_latency_p${p}`, libraryP, 'ms', { sends: LATENCY_SENDS });
      report(BENCH, `library_added_latency_p${p}`, libraryP - bareP, 'ms', { sends: LATENCY_SENDS, aim: p === 50 ? '<= 3' : '<= 5' });
    }
  } finally {
    await boss.stop({ graceful: false, close: true }).catch(() => {});
    await resend.close();
    await database.close();
  }
}

async function concurrently(total: number, width: number, send: (n: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < total) await send(next++);
    }),
  );
}

function median(values: number[]) {
  return percentile(values, 50);
}

function percentile(values: number[], p: number) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
