import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { ConversionDeps } from '../conversion-jobs/conversion-deps.ts';
import { signDownloadToken, verifyDownloadToken } from '../conversion-jobs/download-token.ts';
import { requireFile } from '../conversion-jobs/conversion-jobs.queries.ts';
import { chargePages, withPurchaseLink } from '../credits/credits.ts';
import { AnyRow, sql } from '../db/database.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { publicUrl } from '../public-url.ts';
import { readAll } from '../storage/storage.ts';
import { enqueueFlyerRender } from './flyers.jobs.ts';
import { renderPositionedHtml } from './render-positioned-html.ts';

/** Preserve Formatting is for flyers and short documents: longer ones are what the reflowed conversion is for. */
const FLYER_MAX_PAGES = 20;

type FlyerDeps = Pick<ConversionDeps, 'db' | 'boss' | 'config' | 'clock' | 'log' | 'store'>;

/**
 * POST /api/files/:fileId/preserve-formatting: charges the pages (one credit
 * each, like any conversion) and queues the render, in one transaction.
 */
export async function requestFlyer(deps: FlyerDeps, user: { id: string }, fileId: string) {
  const file = await requireFile(deps.db, fileId);
  if (file.ownerId !== user.id) throw new DomainError('NOT_FOUND', 'File not found');
  if (file.contentType !== 'application/pdf' || !file.storageKey || !file.pageCount) {
    throw new DomainError('CONFLICT', 'Only an uploaded PDF can be converted with Preserve Formatting');
  }
  if (file.pageCount > FLYER_MAX_PAGES) {
    throw new DomainError('PDF_TOO_MANY_PAGES', `Preserve Formatting takes at most ${FLYER_MAX_PAGES} pages; convert longer documents normally`);
  }
  const pages = file.pageCount;
  return deps.db.transaction(async (tx) => {
    await chargePages(tx, file.customerId, pages).catch((error: unknown) => {
      throw withPurchaseLink(error, deps.config.product.purchaseUrl);
    });
    const flyerJobId = await tx.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into flyer_jobs (file_id, owner_id, customer_id, status, credits_charged, pages)
      values (${fileId}, ${user.id}, ${file.customerId}, 'pending', ${pages}, ${pages}) returning id`);
    await enqueueFlyerRender(deps.boss, tx, flyerJobId);
    return { flyerJobId, status: 'pending' as const, pages, creditsCharged: pages };
  });
}

const Claimed = z.object({ fileId: z.uuid(), storageKey: z.string(), originalName: z.string() });

/**
 * The worker: claims a pending job (a fresh claim id; cancel clears it),
 * renders the positioned HTML, stores it, and completes only while it still
 * holds the claim. A render that fails refunds and fails the job; a lost
 * claim (cancelled meanwhile) throws its result away.
 */
export async function runFlyer(deps: FlyerDeps, flyerJobId: string): Promise<'completed' | 'failed' | 'lost' | 'skipped'> {
  const claimId = randomUUID();
  const claimed = await deps.db.maybeOne(sql.type(Claimed)`
    update flyer_jobs j set status = 'processing', claim_id = ${claimId}, updated_at = now()
      from files f where j.id = ${flyerJobId} and j.status = 'pending' and f.id = j.file_id and f.storage_key is not null
    returning f.id as "fileId", f.storage_key as "storageKey", f.original_name as "originalName"`);
  if (!claimed) return 'skipped';
  const resultKey = `files/${claimed.fileId}/flyers/${flyerJobId}.html`;
  try {
    const pdf = await readAll(await deps.store.get(claimed.storageKey));
    const { html } = await renderPositionedHtml(pdf, { title: claimed.originalName.replace(/\.pdf$/i, '') || claimed.originalName });
    await deps.store.put(resultKey, Buffer.from(html, 'utf8'), { contentType: 'text/html; charset=utf-8' });
  } catch (error) {
    deps.log.warn({ err: error, flyerJobId }, 'flyer render failed');
    const message = isDomainError(error) ? error.message : 'The document could not be rendered';
    const failed = await deps.db.oneFirst(sql.type(z.object({ ok: z.boolean() }))`select fail_flyer_job(${flyerJobId}, ${claimId}, ${message}) as ok`);
    return failed ? 'failed' : 'lost';
  }
  const done = await deps.db.query(sql.type(AnyRow)`
    update flyer_jobs set status = 'completed', result_key = ${resultKey}, claim_id = null, updated_at = now()
     where id = ${flyerJobId} and claim_id = ${claimId} and status = 'processing'`);
  if (done.rowCount === 0) {
    await deps.store.delete(resultKey).catch(() => undefined);
    return 'lost';
  }
  return 'completed';
}

export const FlyerStatus = z.object({
  flyerJobId: z.uuid(),
  fileId: z.uuid().nullable(),
  status: z.enum(['pending', 'processing', 'completed', 'failed']),
  pages: z.number().nullable(),
  creditsCharged: z.number(),
  refunded: z.boolean(),
  errorMessage: z.string().nullable(),
  compConversionId: z.uuid().nullable(),
  /** The positioned HTML, for 24 hours from this answer; null until completed. */
  htmlUrl: z.string().nullable(),
});

/** GET /api/flyers/:flyerJobId: the owner's view of a flyer job, with a 24-hour link to its HTML once completed. */
export async function readFlyer(deps: FlyerDeps & { linkSecret: string }, user: { id: string }, flyerJobId: string) {
  const row = await deps.db.maybeOne(sql.type(FlyerStatus.omit({ htmlUrl: true }).extend({ resultKey: z.string().nullable() }))`
    select id as "flyerJobId", file_id as "fileId", status, pages, credits_charged as "creditsCharged", refunded, error_message as "errorMessage",
           comp_conversion_id as "compConversionId", result_key as "resultKey"
      from flyer_jobs where id = ${flyerJobId} and owner_id = ${user.id}`);
  if (!row) throw new DomainError('NOT_FOUND', 'Preserve Formatting job not found');
  const { resultKey, ...flyer } = row;
  const token = signDownloadToken(deps.linkSecret, `flyer:${flyerJobId}`, deps.clock.now());
  const htmlUrl = row.status === 'completed' && resultKey ? publicUrl(deps.config, `/api/flyers/${flyerJobId}/html?token=${encodeURIComponent(token)}`) : null;
  return { ...flyer, htmlUrl };
}

/** The stored HTML of a completed flyer job for a genuine, unexpired link; null otherwise. */
export async function openFlyerHtml(deps: FlyerDeps & { linkSecret: string }, flyerJobId: string, token: unknown) {
  if (!z.uuid().safeParse(flyerJobId).success || !verifyDownloadToken(deps.linkSecret, `flyer:${flyerJobId}`, token, deps.clock.now())) return null;
  const key = await deps.db.maybeOneFirst(sql.type(z.object({ key: z.string().nullable() }))`
    select result_key as key from flyer_jobs where id = ${flyerJobId} and status = 'completed'`);
  if (!key || !(await deps.store.exists(key))) return null;
  return deps.store.get(key);
}
