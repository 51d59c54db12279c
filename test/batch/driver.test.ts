import { Writable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batchPrefix } from '../../server/batch/batch.queries.ts';
import { chunkResultsKey } from '../../server/batch/batch-results.ts';
import { OVERDUE_STOP_WAIT_MS, pollBatch } from '../../server/batch/poll-batch.ts';
import { selectBatchRow } from '../../server/batch/batch.queries.ts';
import { runBatchTick } from '../../server/batch/run-batch-tick.ts';
import { batchHoldWindowMs } from '../../server/batch/eligibility.ts';
import { DEFAULT_PRICE_PER_1K_TOKENS } from '../../server/conversion/backends/vision/vision-backend.ts';
import { AnyRow, sql } from '../../server/db/database.ts';
import { createLog } from '../../server/log.ts';
import { registerBatchJobs } from '../../jobs/batch/batch.worker.ts';
import { startTestApp } from '../helpers/app.ts';
import { api } from '../service/harness.ts';
import { type BatchWorld, batchRowOf, clearParkedJobs, jobOf, ledgerOf, listKeys, readObject, ROLE_ARN, startBatchWorld, startHiFi } from './harness.ts';

let world: BatchWorld;
/** The chunk runs and s3rver round trips take seconds on an idle machine and far longer on a loaded shared one. */
const UNDER_LOAD_MS = 180_000;

beforeAll(async () => {
  world = await startBatchWorld();
}, UNDER_LOAD_MS);

const POLL_MS = 300_000;
/** What the batch lane bills for a record's tokens: the on-demand price times 0.5. */
const batchPrice = (input: number, output: number) => ((input * DEFAULT_PRICE_PER_1K_TOKENS.input + output * DEFAULT_PRICE_PER_1K_TOKENS.output) / 1000) * 0.5;

async function parkAndSubmit(options: Record<string, unknown> = { highFidelity: true }) {
  await clearParkedJobs(world);
  const started = await startHiFi(world, options);
  const report = await runBatchTick(world.batch);
  expect(report.prepared).toBe('submitted');
  const row = (await batchRowOf(world, started.jobId))!;
  return { ...started, row, arn: row.jobArn! };
}

describe('the switch', { timeout: UNDER_LOAD_MS }, () => {
  it('with the lane on, the driver registers its tick; with it off (or no bucket or role) no driver starts and jobs start pending', async () => {
    await registerBatchJobs(world.app.deps, { schedule: false });
    expect(await world.app.boss.getQueue('batch.tick')).toBeTruthy();
    const off = await startTestApp({ env: { BATCH_CONVERSION_ENABLED: 'true', BATCH_CONVERSION_ROLE_ARN: ROLE_ARN } });
    expect(off.config.batch.enabled).toBe(false);
    await registerBatchJobs(off.deps, { schedule: false });
    expect(await off.boss.getQueue('batch.tick')).toBeNull();
  });
});

describe('job creation', { timeout: UNDER_LOAD_MS }, () => {
  it('parks an eligible job and its chunks in waiting_batch; the file list says batchWaiting', async () => {
    await clearParkedJobs(world);
    const { fileId, jobId, status } = await startHiFi(world);
    expect(status).toBe('waiting_batch');
    const job = await jobOf(world, jobId);
    expect(job).toMatchObject({ status: 'waiting_batch', chunks: ['waiting_batch', 'waiting_batch'] });
    // the hold outlasts the batch turnaround: 24 h timeout + 2 h grace + 90 min
    expect(job.holdExpires!.getTime() - Date.now()).toBeGreaterThan(27 * 3_600_000);
    const list = (await (await api(world.app, world.token, 'GET', '/api/files')).json()) as { files: Array<{ id: string; batchWaiting: boolean }> };
    expect(list.files.find((file) => file.id === fileId)?.batchWaiting).toBe(true);
  });

  it.each([
    ['not high fidelity', {}],
    ['another parser', { highFidelity: true, parser: 'vision' }],
  ])('starts a job pending when it is %s', async (_name, options) => {
    const { jobId, status } = await startHiFi(world, options);
    expect(status).toBe('pending');
    expect(await batchRowOf(world, jobId)).toBeNull();
  });
});

describe('the driver', { timeout: UNDER_LOAD_MS }, () => {
  it('claims, writes shards and a manifest, submits one job, then collects, bills once and resumes primed', async () => {
    const { jobId, fileId, row, arn } = await parkAndSubmit();
    expect(row).toMatchObject({ state: 'submitted', records: 3 });
    // the claim stretched the hold over timeout + grace + 90 min, from the driver's clock
    expect((await jobOf(world, jobId)).holdExpires!.getTime()).toBe(world.clock.now().getTime() + batchHoldWindowMs(world.app.config.batch));
    const created = world.control.requests.find((request) => request.method === 'POST' && request.path === '/model-invocation-job')!;
    expect(created.body).toMatchObject({
      jobName: `folio-batch-${row.id}`,
      roleArn: ROLE_ARN,
      modelId: world.app.config.conversion.bedrock.modelId,
      timeoutDurationInHours: 24,
      clientRequestToken: row.id,
      inputDataConfig: { s3InputDataConfig: { s3Uri: `s3://folio-batch-test/${batchPrefix(row.id)}/input/` } },
      outputDataConfig: { s3OutputDataConfig: { s3Uri: `s3://folio-batch-test/${batchPrefix(row.id)}/output/` } },
    });
    expect(await listKeys(world, `${batchPrefix(row.id)}/`)).toEqual([`${batchPrefix(row.id)}/input/shard-0000.jsonl`, `${batchPrefix(row.id)}/manifest.json`]);
    const lines = (await readObject(world, `${batchPrefix(row.id)}/input/shard-0000.jsonl`)).trim().split('\n');
    const records = lines.map(
      (line) => JSON.parse(line) as { recordId: string; modelInput: { messages: Array<{ content: Array<{ source?: { data: string } }> }> } },
    );
    expect(records.map((record) => record.recordId)).toEqual(['c0-p1', 'c0-p2', 'c1-p3']);
    const document = records[0]!.modelInput.messages[0]!.content[0]!;
    expect(Buffer.from(document.source!.data, 'base64').subarray(0, 5).toString()).toBe('%PDF-');
    expect(JSON.parse(await readObject(world, `${batchPrefix(row.id)}/manifest.json`))).toMatchObject({ jobId, records: 3 });

    // not due yet: a tick does not poll
    await world.control.complete(arn, () => ({ kind: 'text', text: '<p>Batch page.</p>', inputTokens: 1000, outputTokens: 200 }));
    expect((await runBatchTick(world.batch)).polled).toBe(0);
    world.clock.advance(POLL_MS);
    expect((await runBatchTick(world.batch)).polled).toBe(1);

    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'closed', outcome: 'collected', accepted: 3, fallback: 0 });
    const cost = 3 * batchPrice(1000, 200);
    const ledger = await ledgerOf(world, jobId);
    expect(ledger).toHaveLength(1);
    expect(ledger[0]!.source).toBe('batch-lane');
    expect(ledger[0]!.costUsd).toBeCloseTo(cost, 6);
    expect(ledger[0]!.metadata).toMatchObject({ backend: 'chunked-vision', batch: true, batchMultiplier: 0.5, batchJobArn: arn, accepted: 3, fallback: 0 });
    expect(ledger[0]!.metadata).not.toHaveProperty('endState');
    const job = await jobOf(world, jobId);
    expect(job).toMatchObject({ status: 'pending', chunks: ['pending', 'pending'], options: { _batchPrimed: true } });
    expect(Number(job.options._batchCostUsd)).toBeCloseTo(cost, 6);
    expect(job.totalCostUsd).toBeCloseTo(cost, 6);
    // the hold is back to the 90-minute on-demand window
    expect(job.holdExpires!.getTime() - Date.now()).toBeLessThan(91 * 60_000);
    const results = JSON.parse((await world.app.deps.store.get(chunkResultsKey(fileId, jobId, 0)).then((s) => s.toArray())).join(''));
    expect(results.records.map((record: { page: number }) => record.page)).toEqual([1, 2]);
    expect(await world.app.deps.db.oneFirst(sql.type(z.object({ phase: z.string() }))`select phase from files where id = ${fileId}`)).toBe(
      'Queued: 0/2 chunks',
    );
    // queued chunk jobs commit with the resume
    const queued = await world.app.deps.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from pgboss.job where name = 'conversion.chunk' and data ->> 'jobId' = ${jobId}`);
    expect(queued).toBe(2);
  });

  it('two ticks at once claim a parked job once and submit one remote job; a tick run again changes nothing', async () => {
    await clearParkedJobs(world);
    const { jobId } = await startHiFi(world);
    const creates = () => world.control.requests.filter((request) => request.path === '/model-invocation-job').length;
    const before = creates();
    const reports = await Promise.all([runBatchTick(world.batch), runBatchTick(world.batch)]);
    expect(reports.map((report) => report.prepared).sort()).toEqual(['none', 'submitted']);
    expect(creates()).toBe(before + 1);
    const row = await batchRowOf(world, jobId);
    expect(row).toMatchObject({ state: 'submitted' });
    expect(await runBatchTick(world.batch)).toEqual({ resumed: 0, polled: 0, adopted: 0, closedStuck: 0, prepared: 'none' });
    expect(await batchRowOf(world, jobId)).toEqual(row);
    expect(creates()).toBe(before + 1);
  });

  it('two drivers racing to close the same row write one ledger row', async () => {
    const { jobId, row, arn } = await parkAndSubmit();
    await world.control.complete(arn, () => ({ kind: 'text', text: '<p>Page.</p>' }));
    const full = (await selectBatchRow(world.app.deps.db, row.id))!;
    const outcomes = await Promise.all([pollBatch(world.batch, full), pollBatch(world.batch, full)]);
    expect(outcomes.sort()).toEqual(['closed', 'lost']);
    expect((await ledgerOf(world, jobId)).filter((entry) => entry.source === 'batch-lane')).toHaveLength(1);
    expect((await jobOf(world, jobId)).status).toBe('pending');
  });

  it('on a partial end counts mismatched, rejected and missing records as fallback and bills what came back', async () => {
    const { jobId, row, arn } = await parkAndSubmit();
    const lines: Array<{ level: number; msg: string; share?: number }> = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    });
    const logged = { ...world.batch, log: createLog({ destination, level: 'info' }) };
    await world.control.complete(
      arn,
      (id) =>
        id === 'c0-p1'
          ? { kind: 'text', text: '<p>Good.</p>', inputTokens: 1000, outputTokens: 100 }
          : id === 'c0-p2'
            ? { kind: 'text', text: '<p>Cut.</p>', stopReason: 'max_tokens', inputTokens: 1000, outputTokens: 4096 }
            : { kind: 'missing' },
      'PartiallyCompleted',
    );
    world.clock.advance(POLL_MS);
    await runBatchTick(logged);
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'closed', outcome: 'collected', accepted: 1, fallback: 2 });
    // 2 of 3 records fall back: over the 20% the lane is worth it at
    expect(lines.filter((line) => line.level === 40 && /fall back to on-demand/.test(line.msg)).map((line) => line.share)).toEqual([2 / 3]);
    const [entry] = await ledgerOf(world, jobId);
    expect(entry!.costUsd).toBeCloseTo(batchPrice(1000, 100) + batchPrice(1000, 4096), 6);
    expect(entry!.metadata).toMatchObject({ accepted: 1, fallback: 2, endState: 'PartiallyCompleted', batchJobArn: arn });
    expect((await jobOf(world, jobId)).options._batchPrimed).toBe(true);
    expect(row.records).toBe(3);
  });

  it.each([
    ['Failed', 'failed'],
    ['Expired', 'expired'],
    ['Stopped', 'failed'],
  ])('a remote %s closes the row %s, bills partial output and resumes on-demand without _batchPrimed', async (status, outcome) => {
    const { jobId, arn } = await parkAndSubmit();
    await world.control.complete(
      arn,
      (id) => (id === 'c0-p1' ? { kind: 'text', text: '<p>One.</p>', inputTokens: 500, outputTokens: 50 } : { kind: 'missing' }),
      status,
    );
    world.clock.advance(POLL_MS);
    await runBatchTick(world.batch);
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'closed', outcome, reason: `remote job ${status}` });
    const [entry] = await ledgerOf(world, jobId);
    expect(entry!.costUsd).toBeCloseTo(batchPrice(500, 50), 6);
    expect(entry!.metadata).toMatchObject({ endState: status });
    const job = await jobOf(world, jobId);
    expect(job.status).toBe('pending');
    expect(job.options._batchPrimed).toBeUndefined();
  });

  it('stops an overdue job past timeout plus 2 hours, waits for Stopped, then closes it expired billing the partial output', async () => {
    const { jobId, arn } = await parkAndSubmit();
    world.control.setStatus(arn, 'InProgress');
    world.clock.advance(26 * 3_600_000 + 1000);
    await runBatchTick(world.batch);
    expect(world.control.jobs.get(arn)!.status).toBe('Stopping');
    // Bedrock writes a stopped job's partial output as it stops: the row waits for it
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'submitted' });
    await world.control.complete(
      arn,
      (id) => (id === 'c1-p3' ? { kind: 'text', text: '<p>Late.</p>', inputTokens: 1200, outputTokens: 300 } : { kind: 'missing' }),
      'Stopped',
    );
    world.clock.advance(POLL_MS);
    await runBatchTick(world.batch);
    expect(await batchRowOf(world, jobId)).toMatchObject({
      state: 'closed',
      outcome: 'expired',
      reason: 'overdue: no result within the timeout plus 2 hours',
      accepted: 1,
      fallback: 2,
    });
    const ledger = await ledgerOf(world, jobId);
    expect(ledger).toHaveLength(1);
    // 1,200 in and 300 out at half of $3/$15 per million: $0.004050
    expect(ledger[0]!.costUsd).toBe(0.00405);
    expect(ledger[0]!.metadata).toMatchObject({ endState: 'Stopped', returned: 1 });
    const job = await jobOf(world, jobId);
    expect(job).toMatchObject({ status: 'pending', totalCostUsd: 0.00405 });
    expect(job.options._batchPrimed).toBeUndefined();
  });

  it('closes an overdue job whose stop never finishes an hour later, billing the output already written', async () => {
    const { jobId, arn } = await parkAndSubmit();
    world.clock.advance(26 * 3_600_000 + 1000);
    // the remote wrote part of its output and is stuck stopping
    await world.control.complete(
      arn,
      (id) => (id === 'c0-p1' ? { kind: 'text', text: '<p>One.</p>', inputTokens: 2000, outputTokens: 1000 } : { kind: 'missing' }),
      'Stopping',
    );
    await runBatchTick(world.batch);
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'submitted' });
    world.clock.advance(OVERDUE_STOP_WAIT_MS);
    await runBatchTick(world.batch);
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'closed', outcome: 'expired', accepted: 1, costUsd: 0.0105 });
    const [entry] = await ledgerOf(world, jobId);
    // 2,000 in and 1,000 out: ($0.006 + $0.015) / 2
    expect(entry!.costUsd).toBe(0.0105);
    expect(entry!.metadata).toMatchObject({ endState: 'Stopping' });
    expect((await jobOf(world, jobId)).status).toBe('pending');
  });

  it('gives up collecting after 5 failed attempts, bills the records the remote reports answered, and resumes on-demand', async () => {
    const { jobId, row, arn } = await parkAndSubmit();
    await world.control.complete(arn, (id) => (id === 'c0-p2' ? { kind: 'error', message: 'bad page' } : { kind: 'text', text: '<p>x</p>' }));
    // the outputs are there but reading them fails with something other than a missing object
    const badDeps = { ...world.batch, batchStore: { ...world.batch.batchStore, get: async () => Promise.reject(new Error('AccessDenied')) } };
    for (let attempt = 1; attempt <= 4; attempt++) {
      expect(await pollBatch(badDeps, (await selectBatchRow(world.app.deps.db, row.id))!)).toBe('waiting');
    }
    expect(await pollBatch(badDeps, (await selectBatchRow(world.app.deps.db, row.id))!)).toBe('closed');
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'closed', outcome: 'failed' });
    expect((await batchRowOf(world, jobId))!.reason).toMatch(/^collect failed 5 times/);
    const job = await jobOf(world, jobId);
    expect(job.status).toBe('pending');
    expect(job.options._batchPrimed).toBeUndefined();
    const [entry] = await ledgerOf(world, jobId);
    // 2 records answered (1 errored, unbilled), each estimated at 3,000 in and 1,000 out: 2 × ($0.009 + $0.015) / 2
    expect(entry!.costUsd).toBe(0.024);
    expect(entry!.metadata).toMatchObject({ batchJobArn: arn, accepted: 0, fallback: 3, returned: 2, estimated: true });
    expect(job.totalCostUsd).toBe(0.024);
    expect(Number(job.options._batchCostUsd)).toBe(0.024);
  });

  it('a collect still failing past the deadline closes at once and bills the processed records less the errored ones', async () => {
    const { jobId, row, arn } = await parkAndSubmit();
    await world.control.complete(arn, () => ({ kind: 'text', text: '<p>x</p>' }), 'PartiallyCompleted');
    // a remote that reports processed and error counts but no success count
    world.control.jobs.get(arn)!.counts = { total: 3, processed: 3, success: undefined as never, error: 1 };
    const badDeps = { ...world.batch, batchStore: { ...world.batch.batchStore, get: async () => Promise.reject(new Error('SlowDown')) } };
    world.clock.advance(26 * 3_600_000 + 1000);
    expect(await pollBatch(badDeps, (await selectBatchRow(world.app.deps.db, row.id))!)).toBe('closed');
    expect((await batchRowOf(world, jobId))!.reason).toBe('collect failed 1 times: Error');
    expect((await ledgerOf(world, jobId))[0]!.costUsd).toBe(0.024);
  });

  it('runs too small a job on-demand without submitting', async () => {
    await clearParkedJobs(world);
    const { jobId } = await startHiFi(world);
    const strict = { ...world.batch, config: { ...world.batch.config, batch: { ...world.batch.config.batch, minRecords: 4 } } };
    const before = world.control.jobs.size;
    expect((await runBatchTick(strict)).prepared).toBe('closed');
    expect(world.control.jobs.size).toBe(before);
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'closed', outcome: 'skipped', reason: 'too few records (3 < 4)' });
    expect(await jobOf(world, jobId)).toMatchObject({ status: 'pending', chunks: ['pending', 'pending'] });
    expect(await ledgerOf(world, jobId)).toHaveLength(0);
  });

  it('skips a job over the record maximum', async () => {
    await clearParkedJobs(world);
    const { jobId } = await startHiFi(world);
    const strict = { ...world.batch, config: { ...world.batch.config, batch: { ...world.batch.config.batch, maxRecords: 2 } } };
    await runBatchTick(strict);
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'closed', outcome: 'skipped', reason: 'too many records (3 > 2)' });
  });

  it('skips a job whose input passes the ceiling, and removes what it had uploaded', async () => {
    await clearParkedJobs(world);
    const { jobId } = await startHiFi(world);
    const before = world.control.jobs.size;
    expect((await runBatchTick({ ...world.batch, maxInputBytes: 1000 })).prepared).toBe('closed');
    const row = await batchRowOf(world, jobId);
    expect(row).toMatchObject({ state: 'closed', outcome: 'skipped', reason: 'input over about 4.5 GB' });
    expect(world.control.jobs.size).toBe(before);
    expect(await listKeys(world, `${batchPrefix(row!.id)}/`)).toEqual([]);
    expect((await jobOf(world, jobId)).status).toBe('pending');
  });

  it('closes a prepare error and resumes on-demand', async () => {
    await clearParkedJobs(world);
    const { jobId } = await startHiFi(world);
    world.control.failNext('create', 'AccessDeniedException');
    expect((await runBatchTick(world.batch)).prepared).toBe('closed');
    const row = await batchRowOf(world, jobId);
    expect(row).toMatchObject({ state: 'closed', outcome: 'failed' });
    expect(row!.reason).toMatch(/^prepare error: AccessDeniedException/);
    expect((await jobOf(world, jobId)).status).toBe('pending');
  });

  it('a preparing row stuck over 2 hours adopts its remote job when one exists, else closes', async () => {
    await clearParkedJobs(world);
    const adopt = await startHiFi(world);
    const adoptRow = await world.app.deps.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into conversion_batch_jobs (job_id, job_name, claimed_at, records, shards)
      values (${adopt.jobId}, 'pending-name', now() - interval '3 hours', 3, 1) returning id`);
    await world.app.deps.db.query(sql.type(AnyRow)`update conversion_batch_jobs set job_name = 'folio-batch-' || id where id = ${adoptRow}`);
    const arn = await world.batch.control.createJob({
      jobName: `folio-batch-${adoptRow}`,
      modelId: 'm',
      roleArn: ROLE_ARN,
      inputS3Uri: 's3://folio-batch-test/x/',
      outputS3Uri: 's3://folio-batch-test/y/',
      timeoutHours: 24,
      clientRequestToken: adoptRow,
    });
    const lost = await startHiFi(world);
    await world.app.deps.db.query(sql.type(AnyRow)`
      insert into conversion_batch_jobs (job_id, job_name, claimed_at) values (${lost.jobId}, 'folio-batch-none', now() - interval '3 hours')`);
    const report = await runBatchTick(world.batch);
    expect(report).toMatchObject({ adopted: 1, closedStuck: 1 });
    expect(await batchRowOf(world, adopt.jobId)).toMatchObject({ state: 'submitted', jobArn: arn });
    expect(await batchRowOf(world, lost.jobId)).toMatchObject({ state: 'closed', outcome: 'failed', reason: 'preparing stuck over 2 hours' });
    expect((await jobOf(world, lost.jobId)).status).toBe('pending');
    await api(world.app, world.token, 'POST', `/api/v1/files/${adopt.fileId}/cancel`);
  });

  it('resumes a stranded job (row closed, job still parked) with _batchPrimed when collected', async () => {
    await clearParkedJobs(world);
    const { jobId } = await startHiFi(world);
    await world.app.deps.db.query(sql.type(AnyRow)`
      insert into conversion_batch_jobs (job_id, job_name, state, outcome, reason, claimed_at, closed_at)
      values (${jobId}, 'folio-batch-stranded', 'closed', 'collected', 'remote job Completed', now(), now())`);
    expect((await runBatchTick(world.batch)).resumed).toBe(1);
    expect(await jobOf(world, jobId)).toMatchObject({ status: 'pending', options: { _batchPrimed: true } });
  });
});
