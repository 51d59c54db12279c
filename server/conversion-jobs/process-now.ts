import { markBatchForUser } from '../batch/batch.queries.ts';
import { CLOSE_REASONS } from '../batch/eligibility.ts';
import { resumeBatchConversion } from '../batch/resume-batch-job.ts';
import { stopRemoteJob } from '../batch/stop-remote-job.ts';
import { DomainError } from '../errors.ts';
import type { ConversionDeps } from './conversion-deps.ts';
import { ensureConversionQueues } from './conversion-jobs.jobs.ts';
import { requireFile, selectLiveJob } from './conversion-jobs.queries.ts';

const notWaiting = () => new DomainError('NOT_BATCH_WAITING', 'The conversion is not waiting for the batch lane');

/**
 * Process now: a job parked for the batch lane runs on-demand at once. Its
 * batch row takes the reason `user chose interactive` (closed when the driver
 * had not claimed the job; a submitted remote job is stopped now, or by the
 * driver at its next poll), then resume_batch_conversion_job moves job and
 * chunks to pending and queues them, in one transaction. When the batch row
 * is already closed the call answers 200 without resuming: the driver's own
 * resume (or its stranded-job resume) does that, with the batch results.
 * 409 NOT_BATCH_WAITING for any job not in waiting_batch.
 */
export async function processNow(
  deps: Pick<ConversionDeps, 'db' | 'boss' | 'config' | 'log' | 'clock'>,
  input: { fileId: string },
): Promise<{ resumed: boolean; jobId: string }> {
  const { fileId } = input;
  await requireFile(deps.db, fileId);
  const job = await selectLiveJob(deps.db, fileId);
  if (job?.status !== 'waiting_batch') throw notWaiting();
  await ensureConversionQueues(deps.boss);
  const { batch, resumed } = await deps.db.transaction(async (tx) => {
    const batch = await markBatchForUser(tx, job.id, CLOSE_REASONS.processNow, deps.clock.now());
    if (batch.state === 'closed') return { batch, resumed: false };
    if ((await resumeBatchConversion(deps.boss, tx, job.id, false)) === 0) throw notWaiting();
    return { batch, resumed: true };
  });
  if (batch.state === 'submitted' && batch.jobArn) await stopRemoteJob(deps, batch.jobArn);
  return { resumed, jobId: job.id };
}
