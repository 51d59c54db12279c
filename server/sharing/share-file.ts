import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { signLinkToken } from '../auth/signed-link.ts';
import type { Deps } from '../deps.ts';
import type { EmailService } from '../email/email-service.ts';
import { DomainError } from '../errors.ts';
import { inlineResultKey } from '../files/docx.ts';
import { publicUrl } from '../public-url.ts';
import { enforceRateLimits } from '../rate-limit/take-rate-limit.ts';
import type { ObjectStore } from '../storage/storage.ts';
import { isDocumentHtml, openZipEntry } from '../storage/zip-entry.ts';
import { sendShareEmails } from './send-share-emails.ts';
import { findOwnedResultFile, insertFileShare, recordShareOutcome } from './sharing.queries.ts';

/** The specification's route takes a list; 20 keeps one share from becoming a mailing. */
const MAX_SHARE_RECIPIENTS = 20;
/** Shares per user per hour: with 20 recipients each, at most 200 emails an hour from one account. */
const SHARES_PER_HOUR = 10;
/** A shared link outlives the 24-hour download link: a recipient may open it days later. */
const SHARE_LINK_TTL_MS = 30 * 24 * 60 * 60 * 1000;

export const ShareFileInput = z.object({
  fileId: z.uuid(),
  recipients: z.array(z.email().max(320)).min(1).max(MAX_SHARE_RECIPIENTS),
  message: z.string().trim().max(2000).optional(),
});
export type ShareFileInput = z.infer<typeof ShareFileInput>;

export const ShareFileResult = z.object({
  shareId: z.uuid(),
  recipients: z.number().int(),
  unsentRecipients: z.array(z.object({ email: z.string(), status: z.enum(['suppressed', 'failed']), reason: z.string() })),
  link: z.string(),
  expiresAt: z.string(),
});
export type ShareFileResult = z.infer<typeof ShareFileResult>;

export type ShareDeps = Pick<Deps, 'db' | 'config' | 'clock'> & { email: EmailService; store: ObjectStore; linkSecret: string };

/**
 * POST /api/files/:fileId/share: the owner mails a link to the accessible
 * HTML of a converted file. The HTML is copied out of the result zip once
 * (beside it), so the link keeps showing what was shared. `recipients` counts
 * only the emails that went out; the others are listed with why.
 */
export async function shareFile(deps: ShareDeps, user: { id: string; email: string }, input: ShareFileInput): Promise<ShareFileResult> {
  await enforceRateLimits(deps.db, [{ key: `share:user:${user.id}`, limit: SHARES_PER_HOUR, windowMs: 60 * 60 * 1000 }], deps.clock.now());
  const file = await findOwnedResultFile(deps.db, input.fileId, user.id);
  if (!file) throw new DomainError('NOT_FOUND', 'File not found');
  if (file.status !== 'completed') throw new DomainError('CONFLICT', 'Only a converted file can be shared');
  const resultKey = file.resultKey ?? inlineResultKey(file.id);
  const htmlKey = resultKey.replace(/\.zip$/, '.html');
  if (!(await deps.store.exists(htmlKey))) {
    const html = (await deps.store.exists(resultKey)) ? await openZipEntry(deps.store, resultKey, isDocumentHtml) : undefined;
    if (!html) throw new DomainError('CONFLICT', 'The converted document is no longer available; convert the file again');
    await deps.store.put(htmlKey, html, { contentType: 'text/html; charset=utf-8' });
  }

  const shareId = randomUUID();
  const expiresAt = new Date(deps.clock.now().getTime() + SHARE_LINK_TTL_MS);
  // The row first: a recipient may open the link the moment the mail lands.
  await insertFileShare(deps.db, { id: shareId, fileId: file.id, sharedBy: user.id, htmlKey, message: input.message, expiresAt });
  const link = publicUrl(deps.config, `/api/shared/${signLinkToken(deps.linkSecret, 'share', shareId, expiresAt)}`);
  const sent = await sendShareEmails(deps.email, {
    sharedBy: user.email,
    replyTo: user.email,
    itemName: file.originalName.replace(/\.[^.]+$/, '') || file.originalName,
    link,
    recipients: input.recipients,
    message: input.message,
  });
  await recordShareOutcome(deps.db, shareId, sent.recipients, sent.unsentRecipients.length);
  return { shareId, recipients: sent.recipients, unsentRecipients: sent.unsentRecipients, link, expiresAt: expiresAt.toISOString() };
}
