import { releaseHold } from '../credits/credits.ts';
import { isDomainError } from '../errors.ts';
import type { Queryable } from '../db/database.ts';
import { backendFor, type ConversionDeps } from './conversion-deps.ts';
import { failOpenChunks, insertOutboxEvent, markFileFailed, markJobFailed, notifyConversion } from './conversion-jobs.queries.ts';

/**
 * Releases the job's hold unless it is already settled or released. In a
 * savepoint: a refused release rolls back only itself, where a bare error
 * would abort the whole transaction and the next statement would report that
 * instead of the cause. Any other error propagates.
 */
export async function releaseOpenHold(tx: Queryable, holdId: string): Promise<void> {
  try {
    await tx.transaction((savepoint) => releaseHold(savepoint, holdId, 'failed'));
  } catch (error) {
    if (!isDomainError(error) || error.code !== 'HOLD_ALREADY_RESOLVED') throw error;
  }
}

/**
 * Fails a live job: its open chunks failed, the hold released (outcome
 * failed), the file failed, conversion.failed in the outbox, in one
 * transaction. Guarded: a job no longer live is left alone, so a second call
 * does nothing.
 */
export async function failConversion(
  deps: Pick<ConversionDeps, 'db' | 'log'>,
  input: { jobId: string; code: string; message: string; cause?: unknown },
): Promise<void> {
  const { jobId, code, message, cause } = input;
  if (cause) deps.log.error({ err: cause, jobId }, 'conversion failed');
  await deps.db.transaction(async (tx) => {
    const job = await markJobFailed(tx, jobId, code, message);
    if (!job) return;
    await failOpenChunks(tx, jobId);
    if (job.holdId) await releaseOpenHold(tx, job.holdId);
    await markFileFailed(tx, job.fileId, code, message);
    await insertOutboxEvent(tx, 'conversion.failed', job.fileId, {
      fileId: job.fileId,
      jobId,
      userId: job.ownerId,
      backend: backendFor(job.options),
      pages: job.totalPages,
      code,
      message,
    });
    await notifyConversion(tx, job.fileId, jobId, 'failed');
  });
}
