import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { z } from 'zod';
import { buildApp } from '../server/app.ts';
import { signSessionToken } from '../server/auth/tokens.ts';
import { loadConfig } from '../server/config.ts';
import { createConversionEngine } from '../server/conversion/create-conversion-engine.ts';
import type { CoreDeps } from '../server/deps.ts';
import { withProcessServices } from '../server/services.ts';
import { sql } from '../server/db/database.ts';
import { silentLog } from '../server/log.ts';
import { createMetrics } from '../server/metrics.ts';
import { startBoss } from '../server/queue/boss.ts';
import { readAll } from '../server/storage/storage.ts';
import { registerConversionJobs } from '../jobs/conversion/conversion.worker.ts';
import { openBenchDatabase } from './database.ts';
import { report } from './report.ts';

const execFileAsync = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const SOURCE = path.resolve(ROOT, '../shared/corpus/multicolumn-latex.pdf');
const PAGES = Number(process.env.BENCH_SERVICE_PAGES ?? 300);
const JWT = 'bench-jwt-secret-with-enough-length-12345';

async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The corpus's 3-page two-column paper repeated to PAGES pages (qpdf). */
async function buildPdf(dir: string): Promise<string> {
  const out = path.join(dir, `service-${PAGES}.pdf`);
  const copies = Math.ceil(PAGES / 3);
  await execFileAsync('qpdf', ['--empty', '--pages', ...Array.from({ length: copies }, () => SOURCE), '--', out]);
  if (copies * 3 !== PAGES) await execFileAsync('qpdf', [out, '--pages', out, `1-${PAGES}`, '--', '--replace-input']);
  return out;
}

/** One app with its own worker at the given chunk concurrency, over a fresh database. */
async function serviceRun(pdf: string, concurrency: number, mode: 'complete' | 'cancel') {
  const bench = await openBenchDatabase();
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-bench-service-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    FOLIO_DATA_DIR: dataDir,
    DATABASE_URL: bench.url,
    AUTH_JWT_SECRET: JWT,
    DOWNLOAD_TOKEN_SECRET: 'bench',
    WEBHOOK_SECRET_KEY: 'bench',
    CHUNK_PAGES: process.env.BENCH_CHUNK_PAGES ?? '10',
    CHUNK_CONCURRENCY: String(concurrency),
    CHUNK_HEARTBEAT_INTERVAL_MS: '1000',
    UPLOAD_MAX_PAGES: '5000',
  });
  const boss = await startBoss(bench.url, { supervise: true, schedule: false });
  const core: CoreDeps = { config, db: bench.db, boss, log: silentLog, clock: { now: () => new Date() }, databaseUrl: bench.url, metrics: createMetrics() };
  const services = withProcessServices(core);
  const built = buildApp(services.deps);
  const server = await new Promise<Server>((resolve) => {
    const listening = built.app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { engine } = services.deps;
  await registerConversionJobs(services.deps, { schedule: false });
  try {
    const email = 'bench@example.com';
    const token = await signSessionToken(JWT, { subject: `bench:${email}`, email });
    const auth = { authorization: `Bearer ${token}` };
    await fetch(`${base}/api/me`, { headers: auth });
    await bench.db.query(sql.unsafe`update customers set plan_type = 'paid', credits_remaining = 1000000`);
    await engine(); // start the worker threads outside the timing

    const started = performance.now();
    const form = new FormData();
    form.append('file', new Blob([await fs.readFile(pdf)], { type: 'application/pdf' }), path.basename(pdf));
    const uploaded = (await (await fetch(`${base}/api/files`, { method: 'POST', headers: auth, body: form })).json()) as { id: string };
    const convert = await fetch(`${base}/api/convert/${uploaded.id}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{}' });
    if (convert.status !== 200) throw new Error(`convert answered ${convert.status}: ${await convert.text()}`);
    const status = () => bench.db.oneFirst(sql.type(z.object({ status: z.string() }))`select status from large_conversion_jobs where file_id = ${uploaded.id}`);
    if (mode === 'complete') {
      await until(status, (value) => value === 'completed' || value === 'failed', 30 * 60_000);
      if ((await status()) !== 'completed') throw new Error('the bench job failed');
      const seconds = (performance.now() - started) / 1000;
      // A figure counts only when every page was converted once.
      const converted = await bench.db.oneFirst(sql.type(z.object({ n: z.number() }))`
        select coalesce(sum(c.pages_done), 0)::int as n from chunk_jobs c join large_conversion_jobs j on j.id = c.job_id where j.file_id = ${uploaded.id}`);
      if (converted !== PAGES) throw new Error(`the bench job converted ${converted} of ${PAGES} pages`);
      return { seconds };
    }
    const running = () =>
      bench.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from chunk_jobs c join large_conversion_jobs j on j.id = c.job_id where j.file_id = ${uploaded.id} and c.status = 'processing'`);
    await until(running, (n) => n > 0, 60_000);
    const processing = await bench.db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
      select c.id from chunk_jobs c join large_conversion_jobs j on j.id = c.job_id where j.file_id = ${uploaded.id} and c.status = 'processing'`);
    const inFlight = processing.length;
    const cancelAt = performance.now();
    const cancel = await fetch(`${base}/api/v1/files/${uploaded.id}/cancel`, { method: 'POST', headers: auth });
    if (cancel.status !== 200) throw new Error(`cancel answered ${cancel.status}`);
    // A run has stopped once it booked its spend (aborted, discarded, or completed just before the cancel).
    const stopped = () =>
      bench.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(distinct chunk_id)::int as n from cost_ledger where chunk_id = any(${sql.array(processing, 'uuid')})`);
    await until(stopped, (n) => n >= inFlight, 60_000);
    return { seconds: (performance.now() - cancelAt) / 1000, inFlight };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await boss.stop({ graceful: false, close: true }).catch(() => {});
    await services.close();
    await bench.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * The conversion service end to end on a PAGES-page corpus-derived PDF:
 * upload → chunks → assembly, at chunk concurrency 1 and 2, beside the engine
 * alone on the same file (convertPages + render + zip). The ratio is the
 * service's overhead (aim ≥ 0.8). Then the time from a cancel to the last
 * running chunk stopping (aim: about one heartbeat plus the pages in flight).
 */
export async function run() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-bench-service-pdf-'));
  try {
    const pdf = await buildPdf(dir);
    const config = loadConfig({ NODE_ENV: 'test', FOLIO_DATA_DIR: dir });
    const engine = createConversionEngine({ conversion: config.conversion, log: silentLog });
    let engineSeconds: number;
    try {
      const bytes = await fs.readFile(pdf);
      await engine.inspect(new Uint8Array(bytes));
      const started = performance.now();
      const meta = await engine.inspect(new Uint8Array(bytes));
      const pages = await engine.convertPages(new Uint8Array(bytes), { pages: Array.from({ length: PAGES }, (_, i) => i + 1), backend: 'local' });
      const outputs = await engine.render({ meta, pages });
      await readAll(engine.zip(outputs, 'bench'));
      engineSeconds = (performance.now() - started) / 1000;
    } finally {
      await engine.close();
    }
    report('service', 'engine_alone_pages_per_s', PAGES / engineSeconds, 'pages/s', { pages: PAGES, seconds: Number(engineSeconds.toFixed(2)) });
    for (const concurrency of [1, 2]) {
      const { seconds } = await serviceRun(pdf, concurrency, 'complete');
      report('service', `service_pages_per_s_${concurrency}_worker`, PAGES / seconds, 'pages/s', {
        pages: PAGES,
        seconds: Number(seconds.toFixed(2)),
        chunkConcurrency: concurrency,
      });
      report('service', `service_overhead_ratio_${concurrency}_worker`, engineSeconds / seconds, 'ratio', { aim: 0.8 });
    }
    const cancel = await serviceRun(pdf, 2, 'cancel');
    report('service', 'cancel_to_last_chunk_stopped_ms', cancel.seconds * 1000, 'ms', { chunksInFlight: cancel.inFlight, heartbeatMs: 1000 });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
