import type { ConversionDeps } from './conversion-deps.ts';
import { failStuckInlineFiles, selectStuckJobs } from './conversion-jobs.queries.ts';
import { failConversion } from './fail-conversion.ts';
import { MAX_CHUNK_CLAIMS } from './recover-orphaned-chunks.ts';

const STUCK_CODE = 'CONVERSION_STUCK';
const STUCK_MESSAGE = 'The conversion made no progress and was stopped';

/**
 * Stuck-file sweep: live jobs with no progress past the bound fail (hold
 * released), and so do inline (DOCX) files left processing that long, and
 * jobs with a chunk claimed more than MAX_CHUNK_CLAIMS times.
 * Cancelled jobs are not live. Returns how many jobs it failed.
 */
export async function sweepStuckConversions(deps: Pick<ConversionDeps, 'db' | 'log'>, input: { boundMs: number }): Promise<number> {
  const stuck = await selectStuckJobs(deps.db, input.boundMs, MAX_CHUNK_CLAIMS);
  for (const jobId of stuck) await failConversion(deps, { jobId, code: STUCK_CODE, message: STUCK_MESSAGE });
  await failStuckInlineFiles(deps.db, input.boundMs, STUCK_CODE, STUCK_MESSAGE);
  return stuck.length;
}
