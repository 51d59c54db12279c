import { DomainError } from '../errors.ts';
import type { ConversionDeps } from './conversion-deps.ts';
import { cancelConversionJob, requireFile, selectLiveJob } from './conversion-jobs.queries.ts';

/**
 * Cancels the file's running conversion (cancel_conversion_job: job and every
 * non-completed chunk cancelled, hold released, nothing charged). The file goes
 * back to `uploaded` unless resetFile is false (a delete follows).
 * 409 CONVERSION_FINISHING while assembling, CONVERSION_NOT_INTERRUPTIBLE for
 * the inline DOCX path, NO_ACTIVE_CONVERSION when nothing runs.
 */
export async function cancelConversion(
  deps: Pick<ConversionDeps, 'db'>,
  input: { fileId: string; resetFile?: boolean },
): Promise<{ cancelled: true; jobId: string }> {
  const file = await requireFile(deps.db, input.fileId);
  const job = await selectLiveJob(deps.db, input.fileId);
  if (!job) {
    if (file.status === 'processing') throw new DomainError('CONVERSION_NOT_INTERRUPTIBLE', 'This conversion runs in one step and cannot be cancelled');
    throw new DomainError('NO_ACTIVE_CONVERSION', 'There is no conversion to cancel');
  }
  await cancelConversionJob(deps.db, job.id, input.resetFile ?? true);
  return { cancelled: true, jobId: job.id };
}
