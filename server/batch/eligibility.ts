import { z } from 'zod';
import type { Config } from '../config.ts';

/** The specification's close reasons for a user's action. */
export const CLOSE_REASONS = {
  cancelled: 'Cancelled by user',
  processNow: 'user chose interactive',
  fileDeleted: 'Cancelled: the source file was deleted',
} as const;

/** The driver gives up on a remote job this long after its own timeout. */
export const BATCH_GRACE_MS = 2 * 60 * 60 * 1000;

/**
 * How long a parked job's funds hold must last: the remote timeout, the
 * driver's grace after it, then the 90-minute on-demand window the resumed
 * job gets.
 */
export function batchHoldWindowMs(batch: Config['batch']) {
  return batch.timeoutHours * 60 * 60 * 1000 + BATCH_GRACE_MS + 90 * 60 * 1000;
}

/**
 * Whether a new job goes to the batch lane (specification: "Batch
 * eligibility"), read at job creation. The lane must be on (the switch plus
 * its bucket and role); the job high-fidelity on the default parser (any
 * other parser is chunk routing the batch stage does not cover); and large
 * enough, or a bulk item that opted in.
 */
export function isBatchEligible(batch: Config['batch'], job: { options: Record<string, unknown>; totalPages: number }): boolean {
  if (!batch.enabled) return false;
  const { options } = job;
  if (options.highFidelity !== true) return false;
  if (options.parser !== undefined && options.parser !== 'auto') return false;
  return job.totalPages >= batch.minPages || options._batchLane === true;
}

export const BatchLaneOffer = z.object({
  /** the lane is on: a high-fidelity job on the default parser may use it */
  enabled: z.boolean(),
  /** from this many pages a high-fidelity job goes to the lane by itself; below it, only when the caller opts in */
  minPages: z.number().int(),
  /** the longest a parked job waits for the lane before it runs on-demand anyway */
  timeoutHours: z.number().int(),
});

/** What a client needs to offer the lane before starting a conversion; no bucket or role leaves the server. */
export function batchLaneOffer(batch: Config['batch']): z.infer<typeof BatchLaneOffer> {
  return { enabled: batch.enabled, minPages: batch.minPages, timeoutHours: batch.timeoutHours };
}
