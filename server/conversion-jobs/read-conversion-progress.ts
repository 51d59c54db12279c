import type { ConversionDeps } from './conversion-deps.ts';
import { selectSnapshot, type Snapshot } from './conversion-jobs.queries.ts';

/** Where the file's latest conversion stands (what progress events carry); null once the file is gone. */
export function readConversionProgress(deps: Pick<ConversionDeps, 'db'>, input: { fileId: string }): Promise<Snapshot | null> {
  return selectSnapshot(deps.db, input.fileId);
}
