import { jobObjectKey } from '../conversion-jobs/conversion-deps.ts';
import type { IntakeDeps } from './intake-deps.ts';
import { deleteUnconvertedFile, ENDED_JOB_STATUSES, forgetFileSource, latestConversionJob, loadIntakeMessage, markCleaned } from './intake.queries.ts';

/**
 * Step 12, queued after the reply: the temporary objects go — the raw
 * message, the mailed PDF and the chunk results. A file whose conversion
 * never started is deleted outright; a converted one keeps its row, its job
 * and its result zip, so the web app's file list, the download link in a
 * webhook and the conversion report work as for an upload. Idempotent.
 */
export async function cleanUpMessage(deps: Pick<IntakeDeps, 'db' | 'store' | 'log'>, messageId: string): Promise<void> {
  const row = await loadIntakeMessage(deps.db, messageId);
  if (!row) return;
  await deps.store.deletePrefix(`intake/${row.id}/`);
  if (row.fileId) {
    const job = await latestConversionJob(deps.db, row.fileId);
    if (!job) {
      await deleteUnconvertedFile(deps.db, row.fileId);
      await deps.store.deletePrefix(`files/${row.fileId}/`);
    } else if (ENDED_JOB_STATUSES.has(job.status)) {
      await deps.store.delete(`files/${row.fileId}/source`);
      await deps.store.deletePrefix(jobObjectKey(row.fileId, job.id, 'chunks/'));
      await forgetFileSource(deps.db, row.fileId);
    }
  }
  await markCleaned(deps.db, row.id);
  deps.log.debug({ intakeMessageId: row.id }, 'intake: temporary objects removed');
}
