import type { PageResult } from '../conversion/model.ts';
import type { ConversionDeps } from './conversion-deps.ts';
import { addJobCost, insertChunkCost } from './conversion-jobs.queries.ts';

/** Sum of page costs, booked even for a run whose result is thrown away: the money was spent. */
export function pagesCost(pages: PageResult[]) {
  return pages.reduce((sum, page) => sum + (Number.isFinite(page.costUsd) ? page.costUsd : 0), 0);
}

/** The spend of a run whose result is not kept (aborted, discarded) on the ledger and the job's total. */
export async function bookChunkSpend(
  deps: Pick<ConversionDeps, 'db'>,
  input: { jobId: string; chunkId: string; costUsd: number; backend: string; metadata: Record<string, unknown> },
): Promise<void> {
  await deps.db.transaction(async (tx) => {
    await insertChunkCost(tx, input.jobId, input.chunkId, input.costUsd, input.metadata, input.backend);
    await addJobCost(tx, input.jobId, input.costUsd);
  });
}
