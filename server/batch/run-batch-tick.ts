import { randomUUID } from 'node:crypto';
import { ensureConversionQueues } from '../conversion-jobs/conversion-jobs.jobs.ts';
import type { BatchDeps } from './batch-deps.ts';
import { claimNextJob, markSubmitted, selectDueRows, selectStrandedJobs, selectStuckPreparing } from './batch.queries.ts';
import { batchHoldWindowMs, BATCH_GRACE_MS } from './eligibility.ts';
import { pollBatch } from './poll-batch.ts';
import { closeUnsubmitted, prepareBatch } from './prepare-batch.ts';
import { resumeBatchConversion } from './resume-batch-job.ts';

/** A preparing row older than this lost its driver (a prepare takes minutes). */
const STUCK_PREPARING_MS = 2 * 60 * 60 * 1000;

export type TickReport = { resumed: number; polled: number; adopted: number; closedStuck: number; prepared: 'submitted' | 'closed' | 'none' };

/**
 * One tick of the batch driver (every 60 s, on one leader: the queue is a
 * singleton). In order: resume stranded jobs (row closed, job still parked);
 * poll the submitted rows that are due; adopt or close preparing rows stuck
 * over 2 hours; then claim the oldest parked job and prepare it — one per tick.
 */
export async function runBatchTick(deps: BatchDeps): Promise<TickReport> {
  const report: TickReport = { resumed: 0, polled: 0, adopted: 0, closedStuck: 0, prepared: 'none' };
  await ensureConversionQueues(deps.boss);
  const now = deps.clock.now();

  for (const stranded of await selectStrandedJobs(deps.db)) {
    const queued = await deps.db.transaction((tx) => resumeBatchConversion(deps.boss, tx, stranded.jobId, stranded.outcome === 'collected'));
    if (queued > 0) report.resumed++;
  }

  for (const row of await selectDueRows(deps.db, now)) {
    try {
      await pollBatch(deps, row);
      report.polled++;
    } catch (error) {
      deps.log.error({ err: error, batchRowId: row.id }, 'batch poll failed');
    }
  }

  for (const row of await selectStuckPreparing(deps.db, new Date(now.getTime() - STUCK_PREPARING_MS))) {
    const remote = await deps.control.findJob(row.jobName).catch(() => undefined);
    if (remote) {
      const adopted = await markSubmitted(deps.db, row.id, {
        jobArn: remote.jobArn,
        modelId: row.modelId ?? deps.config.conversion.bedrock.modelId,
        promptHash: row.promptHash ?? '',
        records: row.records ?? 0,
        shards: row.shards ?? 0,
        inputBytes: 0,
        now,
        deadline: new Date(now.getTime() + deps.config.batch.timeoutHours * 3_600_000 + BATCH_GRACE_MS),
        nextPoll: now,
      });
      if (adopted) report.adopted++;
    } else if (await closeUnsubmitted(deps, row, 'failed', 'preparing stuck over 2 hours')) {
      report.closedStuck++;
    }
  }

  const claimed = await deps.db.transaction((tx) => claimNextJob(tx, { rowId: randomUUID(), now, holdWindowMs: batchHoldWindowMs(deps.config.batch) }));
  if (claimed) report.prepared = await prepareBatch(deps, { id: claimed.rowId, jobId: claimed.jobId });
  return report;
}
