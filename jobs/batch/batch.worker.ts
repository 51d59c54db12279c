import { createBatchDeps, ensureBatchLifecycle } from '../../server/batch/batch-deps.ts';
import { runBatchTick } from '../../server/batch/run-batch-tick.ts';
import type { Deps } from '../../server/deps.ts';

const BATCH_TICK_QUEUE = 'batch.tick';

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
 * starts.
 */
export async function registerBatchJobs(deps: Deps, options: { schedule?: boolean } = {}): Promise<void> {
  if (!deps.config.batch.enabled) return;
  const batchDeps = createBatchDeps(deps);
  await ensureBatchLifecycle(batchDeps.s3, batchDeps.bucket, deps.log);
  await deps.boss.createQueue(BATCH_TICK_QUEUE, TICK_POLICY);
  await deps.boss.work(BATCH_TICK_QUEUE, { batchSize: 1 }, async () => {
    const report = await runBatchTick(batchDeps);
    if (report.prepared !== 'none' || report.polled > 0 || report.resumed > 0) deps.log.info(report, 'batch tick');
  });
  if (options.schedule !== false) await deps.boss.schedule(BATCH_TICK_QUEUE, '* * * * *');
}
