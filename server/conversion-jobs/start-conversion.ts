import { z } from 'zod';
import { batchHoldWindowMs, isBatchEligible } from '../batch/eligibility.ts';
import { createHold, ON_DEMAND_HOLD_WINDOW_MS } from '../credits/credits.ts';
import { DomainError } from '../errors.ts';
import type { ConversionDeps } from './conversion-deps.ts';
import { enqueueChunk, ensureConversionQueues } from './conversion-jobs.jobs.ts';
import {
  insertChunks,
  insertJob,
  lockUnresolvedFlyer,
  markFileQueued,
  notifyConversion,
  requireFile,
  selectLiveJob,
  setFlyerComp,
} from './conversion-jobs.queries.ts';
import { withPurchaseLink } from '../credits/credits.ts';

export const ConvertOptions = z.object({
  highFidelity: z.boolean().optional(),
  parser: z.enum(['auto', 'local', 'vision', 'parser']).optional(),
  /** what to make: the HTML (with its report) always; 'pdf' adds the tagged PDF. Default both. */
  outputs: z
    .array(z.enum(['html', 'pdf']))
    .min(1)
    .max(2)
    .refine((outputs) => outputs.includes('html'), "outputs must include 'html': the HTML and its report are always made")
    .optional(),
  _batchLane: z.boolean().optional(),
  _compedFlyerJobId: z.uuid().optional(),
});
export type ConvertOptions = z.infer<typeof ConvertOptions>;

export type StartedConversion = { jobId: string; status: string; totalChunks: number; totalPages: number };

/** Consecutive page ranges of at most chunkPages pages covering 1..totalPages. */
function chunkRanges(totalPages: number, chunkPages: number): Array<{ start: number; end: number }> {
  const size = Math.max(1, chunkPages);
  const ranges = [];
  for (let start = 1; start <= totalPages; start += size) ranges.push({ start, end: Math.min(totalPages, start + size - 1) });
  return ranges;
}

/**
 * Starts a chunked conversion of an uploaded PDF: the hold for the estimated
 * pages (refused with INSUFFICIENT_CREDITS / FREE_PAGE_LIMIT before any work),
 * then the job, its chunk rows and their queue jobs in one transaction.
 * CONFLICT when the file is not an uploaded PDF or a conversion of it is live.
 */
export async function startConversion(
  deps: ConversionDeps,
  input: { fileId: string; options: ConvertOptions; compFor?: { flyerJobId: string } },
): Promise<StartedConversion> {
  const { db } = deps;
  const { fileId, compFor } = input;
  // A comp is decided by the caller (the comped-reflow route), never by options a client sent.
  const options: ConvertOptions = compFor ? { ...input.options, _compedFlyerJobId: compFor.flyerJobId } : input.options;
  const file = await requireFile(db, fileId);
  if (file.contentType !== 'application/pdf' || !file.storageKey || !file.pageCount) {
    throw new DomainError('CONFLICT', 'Only an uploaded PDF can be converted this way');
  }
  if (file.status === 'processing' || (await selectLiveJob(db, fileId))) throw new DomainError('CONFLICT', 'A conversion of this file is already running');
  await ensureConversionQueues(deps.boss);
  const pages = file.pageCount;
  const estimate = pages * Math.max(1, deps.config.conversion.highFidelityCreditMultiplier);
  const ranges = chunkRanges(pages, deps.config.conversion.chunkPages);
  // Read at creation: a job parked for the lane stays there even if the switch goes off later.
  const batch = isBatchEligible(deps.config.batch, { options, totalPages: pages });
  const status = batch ? 'waiting_batch' : 'pending';
  return db.transaction(async (tx) => {
    if (compFor) await lockUnresolvedFlyer(tx, compFor.flyerJobId);
    // A comped reflow is free: no hold, so assembling charges nothing.
    const holdId = compFor
      ? null
      : await createHold(tx, {
          customerId: file.customerId,
          amount: estimate,
          // a parked job's hold must outlast the batch turnaround (the driver's claim sets it again)
          windowMs: batch ? batchHoldWindowMs(deps.config.batch) : ON_DEMAND_HOLD_WINDOW_MS,
          reference: `conversion:${fileId}`,
        }).catch((error: unknown) => {
          throw withPurchaseLink(error, deps.config.product.purchaseUrl);
        });
    const jobId = await insertJob(tx, {
      fileId,
      ownerId: file.ownerId,
      customerId: file.customerId,
      status,
      options,
      totalPages: pages,
      totalChunks: ranges.length,
      holdId,
    });
    if (compFor) await setFlyerComp(tx, compFor.flyerJobId, jobId);
    const chunks = await insertChunks(tx, jobId, ranges, status);
    await markFileQueued(tx, fileId, ranges.length);
    if (!batch) for (const chunk of chunks) await enqueueChunk(deps.boss, tx, { chunkId: chunk.id, jobId });
    await notifyConversion(tx, fileId, jobId, 'progress');
    return { jobId, status, totalChunks: ranges.length, totalPages: pages };
  });
}
