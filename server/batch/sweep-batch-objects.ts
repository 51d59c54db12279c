import { z } from 'zod';
import { jobObjectKey } from '../conversion-jobs/conversion-deps.ts';
import type { Deps } from '../deps.ts';
import { AnyRow, sql } from '../db/database.ts';
import type { ObjectStore } from '../storage/storage.ts';
import { batchPrefix } from './batch.queries.ts';

/** Batch inputs, outputs and results hold page images and text of customers' documents: they go after 14 days. */
export const BATCH_OBJECT_DAYS = 14;
const BATCH_OBJECT_MS = BATCH_OBJECT_DAYS * 24 * 60 * 60 * 1000;

/** Rows one sweep handles; an hourly sweep of this many keeps up with any realistic lane. */
const SWEEP_ROWS = 200;

const SweepRow = z.object({ id: z.uuid(), jobId: z.uuid().nullable(), fileId: z.uuid().nullable() });

/**
 * Removes the objects of batch rows closed over 14 days ago: the results
 * files in the service's object store (`files/<file>/jobs/<job>/results/`),
 * which the filesystem driver has no lifecycle rule for (nor does an S3
 * service bucket: the keys share no prefix), and, when the lane is on, the
 * row's folder in the batch bucket (its lifecycle rule normally got there
 * first; this covers a bucket that refused the rule). Each row is marked
 * swept once. A job still running then finds no results file and runs its
 * pages on-demand, which is always correct. The number of rows swept.
 */
export async function sweepBatchObjects(deps: Pick<Deps, 'db' | 'store' | 'clock' | 'log'> & { batchStore?: ObjectStore }): Promise<number> {
  const before = new Date(deps.clock.now().getTime() - BATCH_OBJECT_MS);
  const rows = await deps.db.any(sql.type(SweepRow)`
    select b.id, b.job_id as "jobId", j.file_id as "fileId"
      from conversion_batch_jobs b left join large_conversion_jobs j on j.id = b.job_id
     where b.state = 'closed' and b.swept_at is null and b.closed_at < ${before.toISOString()}::timestamptz
     order by b.closed_at limit ${SWEEP_ROWS}`);
  let swept = 0;
  for (const row of rows) {
    try {
      // a deleted file took its results with it (job_id is null then)
      if (row.jobId && row.fileId) await deps.store.deletePrefix(jobObjectKey(row.fileId, row.jobId, 'results/'));
      if (deps.batchStore) await deps.batchStore.deletePrefix(`${batchPrefix(row.id)}/`);
    } catch (error) {
      deps.log.warn({ err: error, batchRowId: row.id }, 'sweeping batch objects failed; the next sweep tries again');
      continue;
    }
    await deps.db.query(sql.type(AnyRow)`update conversion_batch_jobs set swept_at = ${deps.clock.now().toISOString()}::timestamptz where id = ${row.id}`);
    swept++;
  }
  if (swept > 0) deps.log.info({ swept }, `batch objects older than ${BATCH_OBJECT_DAYS} days removed`);
  return swept;
}
