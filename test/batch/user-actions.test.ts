import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { claimNextJob } from '../../server/batch/batch.queries.ts';
import { prepareBatch } from '../../server/batch/prepare-batch.ts';
import { runBatchTick } from '../../server/batch/run-batch-tick.ts';
import { AnyRow, sql } from '../../server/db/database.ts';
import { api, jobState } from '../service/harness.ts';
import { type BatchWorld, BatchRowView, batchRowOf, clearParkedJobs, jobOf, ledgerOf, startBatchWorld, startHiFi } from './harness.ts';

let world: BatchWorld;
/** The chunk runs and s3rver round trips take seconds on an idle machine and far longer on a loaded shared one. */
const UNDER_LOAD_MS = 180_000;

beforeAll(async () => {
  world = await startBatchWorld();
}, UNDER_LOAD_MS);

const POLL_MS = 300_000;
const PROCESS_NOW = 'user chose interactive';
const CANCELLED = 'Cancelled by user';

type Action = { name: string; route: string; reason: string; jobAfter: string };
const PROCESS: Action = { name: 'process now', route: 'process-now', reason: PROCESS_NOW, jobAfter: 'pending' };
const CANCEL: Action = { name: 'cancel', route: 'cancel', reason: CANCELLED, jobAfter: 'cancelled' };

function act(action: Action, fileId: string) {
  return api(world.app, world.token, 'POST', `/api/v1/files/${fileId}/${action.route}`);
}

function stopsOf(arn: string) {
  return world.control.requests.filter((request) => request.method === 'POST' && request.path === `/model-invocation-job/${arn}/stop`).length;
}

function queuedChunks(jobId: string) {
  return world.app.deps.db.oneFirst(sql.type(z.object({ n: z.number() }))`
    select count(*)::int as n from pgboss.job where name = 'conversion.chunk' and data ->> 'jobId' = ${jobId}`);
}

async function parked() {
  await clearParkedJobs(world);
  return startHiFi(world);
}

async function claimed() {
  const started = await parked();
  const claim = await world.app.deps.db.transaction((tx) =>
    claimNextJob(tx, { rowId: crypto.randomUUID(), now: world.clock.now(), holdWindowMs: 27 * 3_600_000 }),
  );
  expect(claim?.jobId).toBe(started.jobId);
  return { ...started, rowId: claim!.rowId };
}

async function submitted() {
  const started = await parked();
  expect((await runBatchTick(world.batch)).prepared).toBe('submitted');
  const row = (await batchRowOf(world, started.jobId))!;
  return { ...started, rowId: row.id, arn: row.jobArn! };
}

/** The remote job reports Stopped at the next due poll: the row closes skipped, billed once. */
async function finishStopped(arn: string, rowId: string) {
  await world.control.complete(arn, (id) => (id === 'c0-p1' ? { kind: 'text', text: '<p>Done before the stop.</p>' } : { kind: 'missing' }), 'Stopped');
  world.clock.advance(POLL_MS);
  await runBatchTick(world.batch);
  return world.app.deps.db.one(sql.type(BatchRowView)`
    select id, job_id as "jobId", state, outcome, reason, job_arn as "jobArn", records, accepted, fallback, cost_usd as "costUsd"
      from conversion_batch_jobs where id = ${rowId}`);
}

describe.each([PROCESS, CANCEL])('$name', { timeout: UNDER_LOAD_MS }, (action) => {
  it('before the driver claims the job: the row is closed skipped with the reason and never claimed', async () => {
    const { fileId, jobId } = await parked();
    const response = await act(action, fileId);
    expect(response.status).toBe(200);
    if (action === PROCESS) expect(await response.json()).toMatchObject({ resumed: true, jobId });
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'closed', outcome: 'skipped', reason: action.reason });
    expect((await jobOf(world, jobId)).status).toBe(action.jobAfter);
    const report = await runBatchTick(world.batch);
    expect(report).toMatchObject({ prepared: 'none', resumed: 0 });
    expect((await jobOf(world, jobId)).status).toBe(action.jobAfter);
    expect(await queuedChunks(jobId)).toBe(action === PROCESS ? 2 : 0);
    if (action === PROCESS) {
      const phase = await world.app.deps.db.oneFirst(sql.type(z.object({ phase: z.string().nullable() }))`select phase from files where id = ${fileId}`);
      expect(phase).toBe('Queued: 0/2 chunks');
    } else {
      expect(await jobState(world.app, fileId)).toMatchObject({ holdOutcome: 'cancelled', fileStatus: 'uploaded' });
    }
  });

  it('while preparing: the reason is set, the driver submits and stops the job on its first poll', async () => {
    const { fileId, jobId, rowId } = await claimed();
    expect((await act(action, fileId)).status).toBe(200);
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'preparing', reason: action.reason });
    expect((await jobOf(world, jobId)).status).toBe(action.jobAfter);
    expect(await prepareBatch(world.batch, { id: rowId, jobId })).toBe('submitted');
    const arn = (await batchRowOf(world, jobId))!.jobArn!;
    world.clock.advance(POLL_MS);
    await runBatchTick(world.batch);
    expect(stopsOf(arn)).toBe(1);
    expect(world.control.jobs.get(arn)!.status).toBe('Stopping');
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'submitted', reason: action.reason });
    const closed = await finishStopped(arn, rowId);
    expect(closed).toMatchObject({ state: 'closed', outcome: 'skipped', reason: action.reason });
    expect((await jobOf(world, jobId)).status).toBe(action.jobAfter);
    expect(await queuedChunks(jobId)).toBe(action === PROCESS ? 2 : 0);
  });

  it('when submitted: the remote job is stopped now; the row stays submitted until the remote reports Stopped, then bills once', async () => {
    const { fileId, jobId, rowId, arn } = await submitted();
    expect((await act(action, fileId)).status).toBe(200);
    expect(stopsOf(arn)).toBe(1);
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'submitted', reason: action.reason });
    expect((await jobOf(world, jobId)).status).toBe(action.jobAfter);
    world.clock.advance(POLL_MS);
    await runBatchTick(world.batch);
    // Stopping is not an end; the stop is not sent again
    expect(stopsOf(arn)).toBe(1);
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'submitted' });
    const closed = await finishStopped(arn, rowId);
    expect(closed).toMatchObject({ state: 'closed', outcome: 'skipped', reason: action.reason, accepted: 1, fallback: 2 });
    const ledger = (await ledgerOf(world, jobId)).filter((entry) => entry.source === 'batch-lane');
    expect(ledger).toHaveLength(1);
    expect(ledger[0]!.metadata).toMatchObject({ endState: 'Stopped' });
    const job = await jobOf(world, jobId);
    expect(job.status).toBe(action.jobAfter);
    expect(job.options._batchPrimed).toBeUndefined();
    expect(job.totalCostUsd).toBeCloseTo(ledger[0]!.costUsd, 6);
    expect(await queuedChunks(jobId)).toBe(action === PROCESS ? 2 : 0);
  });

  it('when submitted and the stop call fails: the driver stops the job at its next poll', async () => {
    const { fileId, jobId, arn } = await submitted();
    // (a throttled stop would be retried by the SDK; a refused one is not)
    world.control.failNext('stop', 'AccessDeniedException');
    expect((await act(action, fileId)).status).toBe(200);
    expect(world.control.jobs.get(arn)!.status).toBe('Submitted');
    expect(await batchRowOf(world, jobId)).toMatchObject({ state: 'submitted', reason: action.reason });
    world.clock.advance(POLL_MS);
    await runBatchTick(world.batch);
    expect(world.control.jobs.get(arn)!.status).toBe('Stopping');
  });
});

describe('process now', { timeout: UNDER_LOAD_MS }, () => {
  it('answers 200 without resuming when the batch row is already closed', async () => {
    const { fileId, jobId } = await parked();
    await world.app.deps.db.query(sql.type(AnyRow)`
      insert into conversion_batch_jobs (job_id, job_name, state, outcome, reason, claimed_at, closed_at)
      values (${jobId}, 'folio-batch-closed', 'closed', 'collected', 'remote job Completed', now(), now())`);
    const response = await act(PROCESS, fileId);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ resumed: false, jobId });
    expect(await jobOf(world, jobId)).toMatchObject({ status: 'waiting_batch', chunks: ['waiting_batch', 'waiting_batch'] });
    expect(await batchRowOf(world, jobId)).toMatchObject({ reason: 'remote job Completed' });
    await act(CANCEL, fileId);
  });

  it('answers 409 NOT_BATCH_WAITING for a job that is not parked', async () => {
    const { fileId } = await startHiFi(world, {});
    const response = await act(PROCESS, fileId);
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({ code: 'NOT_BATCH_WAITING' });
  });
});

describe('deleting the source file', { timeout: UNDER_LOAD_MS }, () => {
  it('closes the batch row with its reason and keeps the row of the running remote job', async () => {
    const { fileId, jobId, rowId, arn } = await submitted();
    const response = await api(world.app, world.token, 'DELETE', `/api/files/${fileId}`);
    expect(response.status).toBeLessThan(300);
    expect(stopsOf(arn)).toBe(1);
    const closed = await finishStopped(arn, rowId);
    expect(closed).toMatchObject({ jobId: null, state: 'closed', outcome: 'skipped', reason: 'Cancelled: the source file was deleted' });
    const ledger = await world.app.deps.db.any(sql.type(z.object({ arn: z.string(), cost: z.coerce.number() }))`
      select metadata ->> 'batchJobArn' as arn, cost_usd as cost from cost_ledger where source = 'batch-lane' and metadata ->> 'batchRowId' = ${rowId}`);
    // the one record that came back before the stop is billed even though the job is gone
    expect(ledger.map((entry) => entry.arn)).toEqual([arn]);
    expect(ledger[0]!.cost).toBeGreaterThan(0);
    // the job went with the file; the row outlived it (job_id set null) so the remote job was still closed and billed
    expect(await world.app.deps.db.maybeOneFirst(sql.type(z.object({ id: z.uuid() }))`select id from large_conversion_jobs where id = ${jobId}`)).toBeNull();
  });

  it('before the driver claims: the row is closed skipped with the deletion reason', async () => {
    const { fileId, jobId } = await parked();
    const rowBefore = await batchRowOf(world, jobId);
    expect(rowBefore).toBeNull();
    await api(world.app, world.token, 'DELETE', `/api/files/${fileId}`);
    const reasons = await world.app.deps.db.anyFirst(sql.type(z.object({ reason: z.string().nullable() }))`
      select reason from conversion_batch_jobs where job_id is null and state = 'closed' and outcome = 'skipped'`);
    expect(reasons).toContain('Cancelled: the source file was deleted');
  });
});
