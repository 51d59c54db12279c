import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import nodemailer from 'nodemailer';
import { z } from 'zod';
import { registerConversionJobs } from '../jobs/conversion/conversion.worker.ts';
import { registerIntakeJobs } from '../jobs/intake/intake.worker.ts';
import { loadConfig } from '../server/config.ts';
import { sql } from '../server/db/database.ts';
import type { CoreDeps } from '../server/deps.ts';
import { startSmtpListener } from '../server/intake/smtp-listener.ts';
import { silentLog } from '../server/log.ts';
import { createMetrics } from '../server/metrics.ts';
import { startBoss } from '../server/queue/boss.ts';
import { withProcessServices } from '../server/services.ts';
import { startMailApiFake } from '../test/fakes/mail-api.ts';
import { openBenchDatabase } from './database.ts';
import { report } from './report.ts';

const execFileAsync = promisify(execFile);
const CORPUS = path.resolve(import.meta.dirname, '../../shared/corpus');
const CLIENTS = 20;
const MESSAGES_PER_CLIENT = Number(process.env.BENCH_INTAKE_MESSAGES_PER_CLIENT ?? 10);
const LATENCY_RUNS = Number(process.env.BENCH_INTAKE_RUNS ?? 12);
const DOMAIN = 'in.folio.bench';
const PUBLIC = 'convert@folio.bench';

/** A PDF of about 1 MB (the first 90 pages of the corpus book) and one of exactly 10 pages (the 3-page paper repeated). */
async function buildPdfs(dir: string) {
  const megabyte = path.join(dir, 'one-megabyte.pdf');
  await execFileAsync('qpdf', ['--empty', '--pages', path.join(CORPUS, 'geotopo-117-pages.pdf'), '1-90', '--', megabyte]);
  const paper = path.join(CORPUS, 'multicolumn-latex.pdf');
  const tenPages = path.join(dir, 'ten-pages.pdf');
  await execFileAsync('qpdf', ['--empty', '--pages', paper, paper, paper, paper, '1', '--', tenPages]);
  return { megabyte: await fs.readFile(megabyte), tenPages: await fs.readFile(tenPages) };
}

async function openIntake(dataDir: string, env: Record<string, string>) {
  const bench = await openBenchDatabase({ poolSize: 30 });
  const mail = await startMailApiFake({ subject: PUBLIC });
  const config = loadConfig({
    NODE_ENV: 'test',
    FOLIO_DATA_DIR: dataDir,
    DATABASE_URL: bench.url,
    DOWNLOAD_TOKEN_SECRET: 'bench',
    WEBHOOK_SECRET_KEY: 'bench',
    AUTH_JWT_SECRET: 'bench-jwt-secret-with-enough-length-12345',
    INTAKE_DOMAIN: DOMAIN,
    INTAKE_PUBLIC_ADDRESS: PUBLIC,
    INTAKE_SENDER_LIMIT: '100000',
    MAIL_SERVICE_ACCOUNT_KEY: mail.serviceAccountKey,
    MAIL_API_BASE_URL: mail.url,
    ...env,
  });
  const boss = await startBoss(bench.url, { supervise: true, schedule: false });
  const core: CoreDeps = { config, db: bench.db, boss, log: silentLog, clock: { now: () => new Date() }, databaseUrl: bench.url, metrics: createMetrics() };
  const services = withProcessServices(core);
  const smtp = await startSmtpListener(services.deps, { port: 0, host: '127.0.0.1' });
  return {
    deps: services.deps,
    bench,
    mail,
    smtp,
    close: async () => {
      await smtp.close();
      await boss.stop({ graceful: false, close: true }).catch(() => {});
      await services.close();
      await mail.close();
      await bench.close();
    },
  };
}

function percentile(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Messages per second the SMTP listener accepts and queues (20 concurrent
 * clients on a worker thread, each sending its messages one after another
 * with a 1 MB PDF attached): each "250" means stored in the object store and
 * committed with its pg-boss job. No intake worker runs, so the figure is the
 * listener's.
 */
async function listenerThroughput(pdf: Buffer) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-bench-intake-'));
  const intake = await openIntake(dataDir, {});
  try {
    // The clients run on their own thread: their MIME encoding must not eat the listener's event loop.
    // The listener's own CPU (this thread: SMTP parsing, hashing, store writes, the queue insert), which
    // does not depend on how busy the machine is, beside the rate, which does.
    let cpuAtStart = process.threadCpuUsage();
    const seconds = await new Promise<number>((resolve, reject) => {
      const worker = new Worker(new URL(import.meta.url), { workerData: { role: 'smtp-clients', port: intake.smtp.port, pdf } });
      worker.on('message', (event: { phase: 'start' } | { phase: 'done'; seconds: number }) => {
        if (event.phase === 'start') cpuAtStart = process.threadCpuUsage();
        else resolve(event.seconds);
      });
      worker.once('error', reject);
    });
    const cpu = process.threadCpuUsage(cpuAtStart);
    const total = CLIENTS * MESSAGES_PER_CLIENT;
    const queued = await intake.deps.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from pgboss.job where name = 'intake.message' and state = 'created'`);
    if (queued !== total + CLIENTS) throw new Error(`expected ${total + CLIENTS} queued messages, found ${queued}`);
    report('intake', 'smtp_accepted_and_queued_per_s', total / seconds, 'messages/s', {
      clients: CLIENTS,
      messages: total,
      attachmentBytes: pdf.length,
      seconds: Number(seconds.toFixed(2)),
      megabytesPerSecond: Number(((total * pdf.length * (4 / 3)) / (1024 * 1024) / seconds).toFixed(1)),
    });
    report('intake', 'smtp_listener_cpu_ms_per_message', (cpu.user + cpu.system) / 1000 / total, 'ms', { thread: 'listener', messages: total });
  } finally {
    await intake.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * End to end for a 10-page PDF: from the start of the SMTP transaction to the
 * result reply reaching the fake send endpoint — store, queue, parse, ack,
 * inspect, the chunked conversion (local engine, CHUNK_PAGES 10), assembly,
 * the charge, the reply. One message at a time, after one warm-up.
 */
async function endToEnd(pdf: Buffer) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-bench-intake-'));
  const intake = await openIntake(dataDir, { CHUNK_PAGES: '10', CHUNK_CONCURRENCY: '2' });
  try {
    await registerConversionJobs(intake.deps, { schedule: false });
    const workers = await registerIntakeJobs(intake.deps, { schedule: false });
    await intake.deps.db.query(sql.unsafe`insert into customers (email, plan_type, credits_remaining) values ('reader@example.com', 'paid', 1000000)`);
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: intake.smtp.port, ignoreTLS: true });
    const resultReplies = async () => {
      let count = 0;
      for (const sent of intake.mail.sent) if (sent.raw.includes('multipart/mixed')) count++;
      return count;
    };
    const once = async (n: number) => {
      const started = performance.now();
      await transport.sendMail({
        from: 'reader@example.com',
        to: `convert@${DOMAIN}`,
        subject: `ten pages ${n}`,
        text: 'x',
        attachments: [{ filename: 'ten.pdf', content: pdf }],
      });
      const deadline = Date.now() + 5 * 60_000;
      while ((await resultReplies()) < n + 1) {
        if (Date.now() > deadline) throw new Error('no result reply within 5 minutes');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      return performance.now() - started;
    };
    await once(0);
    const times: number[] = [];
    for (let n = 1; n <= LATENCY_RUNS; n++) times.push(await once(n));
    transport.close();
    workers.close();
    times.sort((a, b) => a - b);
    report('intake', 'smtp_data_to_reply_p50_ms', percentile(times, 50), 'ms', { pages: 10, runs: LATENCY_RUNS });
    report('intake', 'smtp_data_to_reply_p99_ms', percentile(times, 99), 'ms', { pages: 10, runs: LATENCY_RUNS, maxMs: Math.round(times.at(-1)!) });
  } finally {
    await intake.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

type ClientsJob = { role: 'smtp-clients'; port: number; pdf: Uint8Array };

/** The worker-thread side: CLIENTS connections, one warm-up message each, then the timed messages; posts the seconds. */
async function sendFromClients(job: ClientsJob) {
  const pdf = Buffer.from(job.pdf);
  const transports = Array.from({ length: CLIENTS }, () =>
    nodemailer.createTransport({ host: '127.0.0.1', port: job.port, ignoreTLS: true, pool: true, maxConnections: 1, maxMessages: Infinity }),
  );
  const message = (client: number, n: number) => ({
    from: `client${client}@example.com`,
    to: `convert@${DOMAIN}`,
    subject: `bench ${client}-${n}`,
    text: 'convert this',
    attachments: [{ filename: 'document.pdf', content: pdf, contentType: 'application/pdf' }],
  });
  await Promise.all(transports.map((transport, client) => transport.sendMail(message(client, -1))));
  parentPort!.postMessage({ phase: 'start' });
  const started = performance.now();
  await Promise.all(
    transports.map(async (transport, client) => {
      for (let n = 0; n < MESSAGES_PER_CLIENT; n++) await transport.sendMail(message(client, n));
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  for (const transport of transports) transport.close();
  parentPort!.postMessage({ phase: 'done', seconds });
}

if (!isMainThread && (workerData as ClientsJob | undefined)?.role === 'smtp-clients') await sendFromClients(workerData as ClientsJob);

export async function run() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-bench-intake-pdf-'));
  try {
    const { megabyte, tenPages } = await buildPdfs(dir);
    await listenerThroughput(megabyte);
    await endToEnd(tenPages);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
