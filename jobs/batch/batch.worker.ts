import { createBatchDeps, ensureBatchLifecycle } from '../../server/batch/batch-deps.ts';
import { runBatchTick } from '../../server/batch/run-batch-tick.ts';
import { sweepBatchObjects } from '../../server/batch/sweep-batch-objects.ts';
import type { Deps } from '../../server/deps.ts';

const BATCH_TICK_QUEUE = 'batch.tick';
const BATCH_SWEEP_QUEUE = 'batch.sweep';

/**
 * A tick prepares at most one job: cutting and uploading 50,000 pages can take
 * a long while, so pg-boss must not take the job back after its 15-minute
 * default. The queue is stately — one tick active (one driver, one leader)
 * and at most one waiting, so a long prepare does not pile ticks up — and a
 * failed tick is not retried: the next one comes within a minute.
 */
const TICK_POLICY = { policy: 'stately', retryLimit: 0, expireInSeconds: 3 * 60 * 60 } as const;

/**
 * The batch driver, only when the lane is on (BATCH_CONVERSION_ENABLED with a
 * bucket and a role): with it off, jobs are created pending and no driver
 * starts. The hourly sweep of 14-day-old batch objects runs either way: a
 * lane switched off still leaves results files behind.
 */
export async function registerBatchJobs(deps: Deps, options: { schedule?: boolean } = {}): Promise<void> {
  const batchDeps = deps.config.batch.enabled ? createBatchDeps(deps) : undefined;
  await deps.boss.createQueue(BATCH_SWEEP_QUEUE, { policy: 'stately', retryLimit: 0 });
  await deps.boss.work(BATCH_SWEEP_QUEUE, { batchSize: 1 }, async () => {
    await sweepBatchObjects({ ...deps, batchStore: batchDeps?.batchStore });
  });
  if (options.schedule !== false) await deps.boss.schedule(BATCH_SWEEP_QUEUE, '23 * * * *');
  if (!batchDeps) return;
  await ensureBatchLifecycle(batchDeps.s3, batchDeps.bucket, deps.log);
  await deps.boss.createQueue(BATCH_TICK_QUEUE, TICK_POLICY);
  await deps.boss.work(BATCH_TICK_QUEUE, { batchSize: 1 }, async () => {
    const report = await runBatchTick(batchDeps);
    if (report.prepared !== 'none' || report.polled > 0 || report.resumed > 0) deps.log.info(report, 'batch tick');
  });
  if (options.schedule !== false) await deps.boss.schedule(BATCH_TICK_QUEUE, '* * * * *');
}
