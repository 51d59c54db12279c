import type { ConversionDeps } from './conversion-deps.ts';
import { failStuckInlineFiles, selectStuckJobs } from './conversion-jobs.queries.ts';
import { failConversion } from './fail-conversion.ts';

const STUCK_CODE = 'CONVERSION_STUCK';
const STUCK_MESSAGE = 'The conversion made no progress and was stopped';

/**
 * Stuck-file sweep: live jobs with no progress past the bound fail (hold
 * released), and so do inline (DOCX) files left processing that long.
 * Cancelled jobs are not live. Returns how many jobs it failed.
 */
export async function sweepStuckConversions(deps: Pick<ConversionDeps, 'db' | 'log'>, input: { boundMs: number }): Promise<number> {
  const stuck = await selectStuckJobs(deps.db, input.boundMs);
  for (const jobId of stuck) await failConversion(deps, { jobId, code: STUCK_CODE, message: STUCK_MESSAGE });
  await failStuckInlineFiles(deps.db, input.boundMs, STUCK_CODE, STUCK_MESSAGE);
  return stuck.length;
}
