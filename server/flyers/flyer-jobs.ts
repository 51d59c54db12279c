import { z } from 'zod';
import type { ConversionDeps } from '../conversion-jobs/conversion-deps.ts';
import { startConversion } from '../conversion-jobs/start-conversion.ts';
import { sql, type Database } from '../db/database.ts';
import { sqlState } from '../db/sql-state.ts';
import { DomainError } from '../errors.ts';

export const FlyerJob = z.object({
  flyerJobId: z.uuid(),
  fileId: z.uuid().nullable(),
  status: z.enum(['pending', 'processing', 'completed', 'failed']),
  errorMessage: z.string().nullable(),
  creditsCharged: z.number().int(),
  refunded: z.boolean(),
  compConversionId: z.uuid().nullable(),
});
export type FlyerJob = z.infer<typeof FlyerJob>;

const columns = sql.fragment`id as "flyerJobId", file_id as "fileId", status, error_message as "errorMessage", credits_charged as "creditsCharged",
  refunded, comp_conversion_id as "compConversionId"`;

/** The user's own flyer job; anyone else's (and a missing one) is the same 404. */
async function requireOwnFlyer(db: Database, userId: string, flyerJobId: string): Promise<FlyerJob> {
  const flyer = await db.maybeOne(sql.type(FlyerJob)`select ${columns} from flyer_jobs where id = ${flyerJobId} and owner_id = ${userId}`);
  if (!flyer) throw new DomainError('NOT_FOUND', 'Preserve Formatting job not found');
  return flyer;
}

/**
 * POST /api/flyers/:flyerJobId/cancel: the specification's Preserve
 * Formatting cancel — failed with a cancellation message, its charge
 * refunded, its claim dropped so a worker still running writes nothing
 * (cancel_flyer_job, one transaction). CONFLICT when it already ended.
 */
export async function cancelFlyerJob(db: Database, user: { id: string }, flyerJobId: string): Promise<FlyerJob> {
  await requireOwnFlyer(db, user.id, flyerJobId);
  try {
    return await db.one(sql.type(FlyerJob)`select ${columns} from cancel_flyer_job(${flyerJobId})`);
  } catch (error) {
    if (sqlState(error) === 'FD003') throw new DomainError('CONFLICT', 'This Preserve Formatting job has already ended', { cause: error });
    if (sqlState(error) === 'FD001') throw new DomainError('NOT_FOUND', 'Preserve Formatting job not found', { cause: error });
    throw error;
  }
}

/**
 * POST /api/flyers/:flyerJobId/comped-reflow: turns an ended flyer job into a
 * free reflowed conversion of its file (no hold, nothing charged). Once only:
 * 409 ALREADY_RESOLVED when the flyer job already has its comp (cancelling
 * that conversion clears it, and the user may choose again).
 */
export async function compFlyerReflow(deps: ConversionDeps, user: { id: string }, flyerJobId: string) {
  const flyer = await requireOwnFlyer(deps.db, user.id, flyerJobId);
  if (flyer.compConversionId) throw new DomainError('ALREADY_RESOLVED', 'This Preserve Formatting job was already turned into a reflowed conversion');
  if (flyer.status === 'pending' || flyer.status === 'processing') throw new DomainError('CONFLICT', 'The Preserve Formatting job is still running');
  if (!flyer.fileId) throw new DomainError('CONFLICT', 'The file of this Preserve Formatting job was deleted');
  try {
    const started = await startConversion(deps, { fileId: flyer.fileId, options: {}, compFor: { flyerJobId } });
    return { flyerJobId, fileId: flyer.fileId, ...started };
  } catch (error) {
    // Two requests at once: the loser may meet the winner's running conversion before the flyer lock; it is the same answer.
    if (error instanceof DomainError && error.code === 'CONFLICT' && (await requireOwnFlyer(deps.db, user.id, flyerJobId)).compConversionId) {
      throw new DomainError('ALREADY_RESOLVED', 'This Preserve Formatting job was already turned into a reflowed conversion', { cause: error });
    }
    throw error;
  }
}
