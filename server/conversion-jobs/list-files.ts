import type { ConversionDeps } from './conversion-deps.ts';
import { type FileListItem, selectOwnerFiles } from './conversion-jobs.queries.ts';

export { FileListItem } from './conversion-jobs.queries.ts';

/** The owner's files, newest first, with status, phase, pages and batchWaiting (derived from the live job, never stored). */
export async function listFiles(deps: Pick<ConversionDeps, 'db'>, input: { ownerId: string }): Promise<FileListItem[]> {
  return [...(await selectOwnerFiles(deps.db, input.ownerId))];
}
