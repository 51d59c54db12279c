import pg from 'pg';
import { z } from 'zod';
import { deductCredits } from '../server/credits/credits.ts';
import { sql } from '../server/db/database.ts';
import { openBenchDatabase } from './database.ts';
import { report } from './report.ts';

const CLIENTS = 16;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);

/** Runs `step` on each of CLIENTS connections for SECONDS; returns calls per second. */
async function measure(url: string, customers: string[], step: (client: pg.Client, customerId: string) => Promise<unknown>) {
  const clients = await Promise.all(
    customers.map(async () => {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      return client;
    }),
  );
  let calls = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    clients.map(async (client, index) => {
      while (performance.now() < deadline) {
        await step(client, customers[index]!);
        calls++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  await Promise.all(clients.map((client) => client.end()));
  return calls / elapsed;
}

/**
 * deduct_credits at 16 concurrent clients beside a pgbench-style single-row
 * UPDATE on the same database: each client works its own customer row, so
 * the ratio is the function's own overhead, not lock contention.
 */
export async function run() {
  const bench = await openBenchDatabase({ poolSize: CLIENTS });
  try {
    const customers = await Promise.all(
      Array.from({ length: CLIENTS }, (_, i) =>
        bench.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
        insert into customers (email, plan_type, credits_remaining) values (${`bench-${i}@example.com`}, 'paid', 1000000000) returning id`),
      ),
    );
    // warm-up: plan caches and connections
    await measure(bench.url, customers, (client, id) => client.query('select deduct_credits($1, 1)', [id]));
    const baseline = await measure(bench.url, customers, (client, id) =>
      client.query('update customers set credits_remaining = credits_remaining - 1 where id = $1', [id]),
    );
    const deduct = await measure(bench.url, customers, (client, id) => client.query('select deduct_credits($1, 1)', [id]));
    report('credits', 'single_row_update_per_s', baseline, 'calls/s', { clients: CLIENTS, seconds: SECONDS });
    report('credits', 'deduct_credits_per_s', deduct, 'calls/s', { clients: CLIENTS, seconds: SECONDS });
    report('credits', 'deduct_credits_vs_update_ratio', deduct / baseline, 'ratio', { aim: 0.8 });

    // The same through the TypeScript module (slonik pool of 16), for the cost of our own layer.
    let calls = 0;
    const deadline = performance.now() + SECONDS * 1000;
    const started = performance.now();
    await Promise.all(
      customers.map(async (id) => {
        while (performance.now() < deadline) {
          await deductCredits(bench.db, id, 1);
          calls++;
        }
      }),
    );
    report('credits', 'deduct_credits_via_module_per_s', calls / ((performance.now() - started) / 1000), 'calls/s', { clients: CLIENTS });
  } finally {
    await bench.close();
  }
}
