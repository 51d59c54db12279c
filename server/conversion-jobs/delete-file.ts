import { CLOSE_REASONS } from '../batch/eligibility.ts';
import type { ConversionDeps } from './conversion-deps.ts';
import { cancelConversion } from './cancel-conversion.ts';
import { deleteFileRow, requireFile, selectLiveJob } from './conversion-jobs.queries.ts';

/** Cancels a live conversion first (file row untouched), then removes the row and every object under the file. */
export async function deleteFile(deps: Pick<ConversionDeps, 'db' | 'store' | 'config' | 'log' | 'clock'>, input: { fileId: string }): Promise<void> {
  const { fileId } = input;
  await requireFile(deps.db, fileId);
  if (await selectLiveJob(deps.db, fileId)) await cancelConversion(deps, { fileId, resetFile: false, reason: CLOSE_REASONS.fileDeleted });
  await deleteFileRow(deps.db, fileId);
  await deps.store.deletePrefix(`files/${fileId}/`);
}
