import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { batchPrefix } from '../../server/batch/batch.queries.ts';
import { chunkResultsKey } from '../../server/batch/batch-results.ts';
import { runBatchTick } from '../../server/batch/run-batch-tick.ts';
import { sweepBatchObjects } from '../../server/batch/sweep-batch-objects.ts';
import { sql } from '../../server/db/database.ts';
import { registerBatchJobs } from '../../jobs/batch/batch.worker.ts';
import { startTestApp } from '../helpers/app.ts';
import { api } from '../service/harness.ts';
import { type BatchWorld, batchRowOf, clearParkedJobs, listKeys, startBatchWorld, startHiFi } from './harness.ts';

let world: BatchWorld;
/** s3rver round trips take seconds on an idle machine and far longer on a loaded shared one. */
const UNDER_LOAD_MS = 180_000;
const DAY_MS = 24 * 3_600_000;

beforeAll(async () => {
  world = await startBatchWorld();
}, UNDER_LOAD_MS);

/** A job collected by the lane: its results files in the service's store, its inputs and outputs in the batch bucket. */
async function collectedJob() {
  await clearParkedJobs(world);
  const started = await startHiFi(world);
  expect((await runBatchTick(world.batch)).prepared).toBe('submitted');
  const row = (await batchRowOf(world, started.jobId))!;
  await world.control.complete(row.jobArn!, () => ({ kind: 'text', text: '<p>Page.</p>' }));
  world.clock.advance(300_000);
  await runBatchTick(world.batch);
  expect(await batchRowOf(world, started.jobId)).toMatchObject({ state: 'closed', outcome: 'collected' });
  return { ...started, row };
}

const sweptAt = (rowId: string) =>
  world.app.deps.db.oneFirst(sql.type(z.object({ sweptAt: z.date().nullable() }))`select swept_at as "sweptAt" from conversion_batch_jobs where id = ${rowId}`);

describe('batch object expiry on the filesystem driver', { timeout: UNDER_LOAD_MS }, () => {
  it('removes the results files and the batch folder of a row closed over 14 days ago, once', async () => {
    const { fileId, jobId, row } = await collectedJob();
    const { store } = world.app.deps;
    expect(store.driver).toBe('fs');
    const results = [chunkResultsKey(fileId, jobId, 0), chunkResultsKey(fileId, jobId, 1)];
    for (const key of results) expect(await store.exists(key)).toBe(true);
    expect((await listKeys(world, `${batchPrefix(row.id)}/`)).length).toBeGreaterThan(0);
    const sweep = () => sweepBatchObjects(world.batch);

    // 13 days on: still there
    world.clock.advance(13 * DAY_MS);
    await sweep();
    for (const key of results) expect(await store.exists(key)).toBe(true);
    expect(await sweptAt(row.id)).toBeNull();

    world.clock.advance(DAY_MS + 1000);
    expect(await sweep()).toBeGreaterThanOrEqual(1);
    for (const key of results) expect(await store.exists(key)).toBe(false);
    expect(await listKeys(world, `${batchPrefix(row.id)}/`)).toEqual([]);
    expect(await sweptAt(row.id)).toEqual(world.clock.now());
    // the source file and the job's other objects stay
    const source = await world.app.deps.db.oneFirst(sql.type(z.object({ key: z.string() }))`select storage_key as key from files where id = ${fileId}`);
    expect(await store.exists(source)).toBe(true);
    expect(await sweep()).toBe(0);
    await api(world.app, world.token, 'POST', `/api/v1/files/${fileId}/cancel`);
  });

  it('registers the hourly sweep even with the lane off (results files outlive a lane switched off)', async () => {
    const off = await startTestApp({ env: { BATCH_CONVERSION_ENABLED: 'false' } });
    await registerBatchJobs(off.deps);
    expect(await off.boss.getQueue('batch.tick')).toBeNull();
    expect(await off.boss.getSchedules()).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'batch.sweep', cron: '23 * * * *' })]));
  });
});
