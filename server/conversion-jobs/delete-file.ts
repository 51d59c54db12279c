import { CLOSE_REASONS } from '../batch/eligibility.ts';
import { isDomainError } from '../errors.ts';
import type { ConversionDeps } from './conversion-deps.ts';
import { cancelConversion } from './cancel-conversion.ts';
import { deleteFileRow, requireFile, selectLiveJob } from './conversion-jobs.queries.ts';

/**
 * Cancels a live conversion first (file row untouched; a DOCX's hold released too), then removes the row and
 * every object under the file.
 */
export async function deleteFile(deps: Pick<ConversionDeps, 'db' | 'store' | 'config' | 'log' | 'clock'>, input: { fileId: string }): Promise<void> {
  const { fileId } = input;
  const file = await requireFile(deps.db, fileId);
  if (file.status === 'processing' || (await selectLiveJob(deps.db, fileId))) {
    await cancelConversion(deps, { fileId, resetFile: false, reason: CLOSE_REASONS.fileDeleted }).catch((error: unknown) => {
      // it ended meanwhile, or is a DOCX with no hold: nothing to stop before the delete
      if (!isDomainError(error) || (error.code !== 'NO_ACTIVE_CONVERSION' && error.code !== 'CONVERSION_NOT_INTERRUPTIBLE')) throw error;
    });
  }
  await deleteFileRow(deps.db, fileId);
  await deps.store.deletePrefix(`files/${fileId}/`);
}
