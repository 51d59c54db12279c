import { markBatchForUser } from '../batch/batch.queries.ts';
import { CLOSE_REASONS } from '../batch/eligibility.ts';
import { stopRemoteJob } from '../batch/stop-remote-job.ts';
import { DomainError } from '../errors.ts';
import type { ConversionDeps } from './conversion-deps.ts';
import { cancelConversionJob, cancelInlineConversion, requireFile, selectLiveJob } from './conversion-jobs.queries.ts';

/**
 * Cancels the file's running conversion (cancel_conversion_job: job and every
 * non-completed chunk cancelled, hold released, nothing charged). The file goes
 * back to `uploaded` unless resetFile is false (a delete follows).
 * A job parked for the batch lane gives its batch row the reason in the same
 * transaction (closed when the driver had not claimed it); a submitted remote
 * job is stopped best effort, else by the driver at its next poll.
 * A DOCX conversion (no job row: the file is `processing` on the hold taken at
 * upload) is cancelled the same way: hold released, file back to `uploaded`,
 * `cancelled` sent; its run sees the file leave the hold at its next heartbeat
 * and terminates its worker. jobId is null for it.
 * 409 CONVERSION_FINISHING while assembling, CONVERSION_NOT_INTERRUPTIBLE for
 * a file processing with neither a job nor a hold (none is made today),
 * NO_ACTIVE_CONVERSION when nothing runs.
 */
export async function cancelConversion(
  deps: Pick<ConversionDeps, 'db' | 'config' | 'log' | 'clock'>,
  input: { fileId: string; resetFile?: boolean; reason?: string },
): Promise<{ cancelled: true; jobId: string | null }> {
  const file = await requireFile(deps.db, input.fileId);
  const job = await selectLiveJob(deps.db, input.fileId);
  if (!job) {
    if (await deps.db.transaction((tx) => cancelInlineConversion(tx, input.fileId, input.resetFile ?? true))) return { cancelled: true, jobId: null };
    if (file.status === 'processing') throw new DomainError('CONVERSION_NOT_INTERRUPTIBLE', 'This conversion runs in one step and cannot be cancelled');
    throw new DomainError('NO_ACTIVE_CONVERSION', 'There is no conversion to cancel');
  }
  const batch = await deps.db.transaction(async (tx) => {
    await cancelConversionJob(tx, job.id, input.resetFile ?? true);
    return job.status === 'waiting_batch' ? markBatchForUser(tx, job.id, input.reason ?? CLOSE_REASONS.cancelled, deps.clock.now()) : undefined;
  });
  if (batch?.state === 'submitted' && batch.jobArn) await stopRemoteJob(deps, batch.jobArn);
  return { cancelled: true, jobId: job.id };
}
