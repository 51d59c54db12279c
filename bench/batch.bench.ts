import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { promisify } from 'node:util';
import { z } from 'zod';
import type { BatchDeps } from '../server/batch/batch-deps.ts';
import { batchPrefix, claimNextJob, selectBatchRow } from '../server/batch/batch.queries.ts';
import type { BatchControl, RemoteJob } from '../server/batch/bedrock-batch.ts';
import { pollBatch } from '../server/batch/poll-batch.ts';
import { prepareBatch } from '../server/batch/prepare-batch.ts';
import { loadConfig } from '../server/config.ts';
import { DEFAULT_PRICE_PER_1K_TOKENS } from '../server/conversion/backends/vision/vision-backend.ts';
import { sql } from '../server/db/database.ts';
import { silentLog } from '../server/log.ts';
import { startBoss } from '../server/queue/boss.ts';
import { createFsStore } from '../server/storage/fs-store.ts';
import { openBenchDatabase } from './database.ts';
import { report } from './report.ts';

const execFileAsync = promisify(execFile);
const SOURCE = path.resolve(import.meta.dirname, '../../shared/corpus/multicolumn-latex.pdf');
const PAGES = Number(process.env.BENCH_BATCH_PAGES ?? 2000);
const CHUNK_PAGES = 10;
/** Share of records the bench's model answers unusably (cut off), which then run on-demand. */
const REJECTED_SHARE = Number(process.env.BENCH_BATCH_REJECTED ?? 0.03);
const INPUT_TOKENS = 1800;
const OUTPUT_TOKENS = 700;

/** Bedrock's control plane in memory: the bench measures our driver, not the SDK. */
function memoryControl(): BatchControl & { finish: (arn: string) => void } {
  const jobs = new Map<string, RemoteJob>();
  return {
    async createJob(input) {
      const jobArn = `arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/${input.clientRequestToken.slice(0, 12)}`;
      jobs.set(jobArn, { jobArn, jobName: input.jobName, status: 'Submitted' });
      return jobArn;
    },
    async getJob(jobArn) {
      return jobs.get(jobArn)!;
    },
    async stopJob() {},
    async findJob() {
      return undefined;
    },
    finish: (arn) => void (jobs.get(arn)!.status = 'Completed'),
  };
}

const price = (input: number, output: number) => (input * DEFAULT_PRICE_PER_1K_TOKENS.input + output * DEFAULT_PRICE_PER_1K_TOKENS.output) / 1000;

/**
 * The batch lane on a generated 2,000-page job (the corpus's 3-page paper
 * repeated): the driver's prepare time and peak RSS while it cuts every page
 * and streams the JSONL shards (batch bucket on the filesystem store, which
 * writes as it receives, like the S3 driver's 5 MB parts), then the model
 * spend of the job with the lane against without it, with the fallback share.
 */
export async function run() {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-bench-batch-'));
  const bench = await openBenchDatabase();
  const boss = await startBoss(bench.url, { supervise: false, schedule: false });
  try {
    const pdf = path.join(dir, 'source.pdf');
    const copies = Math.ceil(PAGES / 3);
    await execFileAsync('qpdf', ['--empty', '--pages', ...Array.from({ length: copies }, () => SOURCE), '--', pdf]);
    if (copies * 3 !== PAGES) await execFileAsync('qpdf', [pdf, '--pages', pdf, `1-${PAGES}`, '--', '--replace-input']);

    const config = loadConfig({
      FOLIO_DATA_DIR: dir,
      BATCH_CONVERSION_ENABLED: 'true',
      BATCH_CONVERSION_S3_BUCKET: 'bench',
      BATCH_CONVERSION_ROLE_ARN: 'arn:aws:iam::123456789012:role/bench',
      BATCH_CONVERSION_MIN_RECORDS: '1',
    });
    const store = createFsStore(path.join(dir, 'objects'));
    const batchStore = createFsStore(path.join(dir, 'batch'));
    await store.put('files/bench/source.pdf', await fs.readFile(pdf));
    const control = memoryControl();
    const clock = { now: () => new Date() };
    const deps: BatchDeps = { db: bench.db, boss, config, log: silentLog, clock, store, control, batchStore, bucket: 'bench' };

    const jobId = await bench.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      with c as (insert into customers (email, plan_type, credits_remaining) values ('bench-batch@example.com', 'paid', 100000) returning id),
           u as (insert into users (email, customer_id) select 'bench-batch@example.com', id from c returning id, customer_id),
           f as (insert into files (owner_id, original_name, content_type, page_count, storage_key, status)
                 select id, 'bench.pdf', 'application/pdf', ${PAGES}, 'files/bench/source.pdf', 'processing' from u returning id, owner_id)
      insert into large_conversion_jobs (file_id, owner_id, customer_id, status, options, total_pages, total_chunks)
      select f.id, f.owner_id, u.customer_id, 'waiting_batch', '{"highFidelity": true}', ${PAGES}, ${Math.ceil(PAGES / CHUNK_PAGES)} from f, u
      returning large_conversion_jobs.id`);
    await bench.db.query(sql.type(z.object({}))`
      insert into chunk_jobs (job_id, chunk_index, page_start, page_end, status)
      select ${jobId}, i, i * ${CHUNK_PAGES} + 1, least(${PAGES}, (i + 1) * ${CHUNK_PAGES}), 'waiting_batch'
        from generate_series(0, ${Math.ceil(PAGES / CHUNK_PAGES) - 1}) i`);

    const claim = await bench.db.transaction((tx) => claimNextJob(tx, { rowId: crypto.randomUUID(), now: clock.now(), holdWindowMs: 1000 }));
    global.gc?.();
    const baseRss = process.memoryUsage().rss;
    let peakRss = baseRss;
    const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 25);
    const started = performance.now();
    const outcome = await prepareBatch(deps, { id: claim!.rowId, jobId: claim!.jobId });
    const prepareMs = performance.now() - started;
    clearInterval(sampler);
    if (outcome !== 'submitted') throw new Error(`prepare ended ${outcome}`);
    const row = (await selectBatchRow(bench.db, claim!.rowId))!;
    const shardFiles = await fs.readdir(path.join(dir, 'batch', batchPrefix(row.id), 'input'));
    let inputMb = 0;
    for (const name of shardFiles) inputMb += (await fs.stat(path.join(dir, 'batch', batchPrefix(row.id), 'input', name))).size / 1024 ** 2;
    report('batch', 'prepare_ms', prepareMs, 'ms', {
      pages: PAGES,
      shards: shardFiles.length,
      inputMb: Math.round(inputMb),
      perPageMs: Number((prepareMs / PAGES).toFixed(2)),
    });
    report('batch', 'prepare_peak_rss_mb', peakRss / 1024 ** 2, 'MB', { aim: 300, startRssMb: Math.round(baseRss / 1024 ** 2) });

    // The model's side: every record answered, a share of them cut off at max_tokens.
    const remoteId = row.jobArn!.slice(row.jobArn!.lastIndexOf('/') + 1);
    for (let shard = 0; shard < (row.shards ?? 0); shard++) {
      const name = `shard-${String(shard).padStart(4, '0')}.jsonl`;
      const input = await batchStore.get(`${batchPrefix(row.id)}/input/${name}`);
      const lines: string[] = [];
      let index = 0;
      for await (const line of readline.createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
        const { recordId } = JSON.parse(line) as { recordId: string };
        const rejected = REJECTED_SHARE > 0 && index++ % Math.round(1 / REJECTED_SHARE) === 0;
        lines.push(
          JSON.stringify({
            recordId,
            modelOutput: {
              content: [{ type: 'text', text: '<p>Batch answer.</p>' }],
              stop_reason: rejected ? 'max_tokens' : 'end_turn',
              usage: { input_tokens: INPUT_TOKENS, output_tokens: OUTPUT_TOKENS },
            },
          }),
        );
      }
      await batchStore.put(`${batchPrefix(row.id)}/output/${remoteId}/${name}.out`, Buffer.from(`${lines.join('\n')}\n`));
    }
    control.finish(row.jobArn!);
    const collectStarted = performance.now();
    await pollBatch(deps, row);
    const collectMs = performance.now() - collectStarted;
    const closed = await bench.db.one(sql.type(z.object({ accepted: z.number(), fallback: z.number(), cost: z.coerce.number() }))`
      select accepted, fallback, cost_usd as cost from conversion_batch_jobs where id = ${row.id}`);

    const onDemandPage = price(INPUT_TOKENS, OUTPUT_TOKENS);
    const withoutLane = PAGES * onDemandPage;
    // with the lane: the batch row (every returned record at half price) plus the fallback pages on-demand
    const withLane = closed.cost + closed.fallback * onDemandPage;
    report('batch', 'collect_ms', collectMs, 'ms', { pages: PAGES });
    report('batch', 'spend_batch_served_ratio', closed.cost / (PAGES * onDemandPage), 'ratio', { aim: 0.5, batchUsd: closed.cost });
    report('batch', 'spend_with_lane_vs_without', withLane / withoutLane, 'ratio', {
      withLaneUsd: Number(withLane.toFixed(2)),
      withoutLaneUsd: Number(withoutLane.toFixed(2)),
      fallbackShare: Number((closed.fallback / PAGES).toFixed(4)),
      accepted: closed.accepted,
    });
  } finally {
    await boss.stop({ graceful: false, close: true }).catch(() => {});
    await bench.close();
    await fs.rm(dir, { recursive: true, force: true });
  }
}
