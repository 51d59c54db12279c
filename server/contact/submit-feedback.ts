import { z } from 'zod';
import type { Deps } from '../deps.ts';
import type { EmailService } from '../email/email-service.ts';
import { DomainError } from '../errors.ts';
import { inlineResultKey } from '../files/docx.ts';
import { readReportSummary } from '../files/report-summary.ts';
import { enforceRateLimits } from '../rate-limit/take-rate-limit.ts';
import { escapeHtml } from '../sharing/html.ts';
import { findOwnedResultFile } from '../sharing/sharing.queries.ts';
import type { ObjectStore } from '../storage/storage.ts';
import { insertFeedback, recordFeedbackSend } from './contact.queries.ts';
import { teamAddress } from './submit-contact.ts';

/** Feedback per user per hour. */
const FEEDBACK_PER_USER_PER_HOUR = 20;

export const FeedbackInput = z.object({
  fileId: z.uuid(),
  rating: z.number().int().min(1).max(5),
  comment: z.string().trim().max(5000).optional(),
});
export type FeedbackInput = z.infer<typeof FeedbackInput>;

export const FeedbackResult = z.object({ feedbackId: z.uuid(), notified: z.boolean() });

type FeedbackDeps = Pick<Deps, 'db' | 'config' | 'clock'> & { email: EmailService; store: ObjectStore };

/**
 * POST /api/feedback: the owner rates the conversion of a file. The row ties
 * the rating to the file, the job whose report it judges and that report's
 * WCAG verdict; the team is notified with Reply-To on the user.
 */
export async function submitFeedback(deps: FeedbackDeps, user: { id: string; email: string }, input: FeedbackInput) {
  const to = teamAddress(deps);
  await enforceRateLimits(deps.db, [{ key: `feedback:user:${user.id}`, limit: FEEDBACK_PER_USER_PER_HOUR, windowMs: 60 * 60 * 1000 }], deps.clock.now());
  const file = await findOwnedResultFile(deps.db, input.fileId, user.id);
  if (!file) throw new DomainError('NOT_FOUND', 'File not found');
  if (file.status !== 'completed') throw new DomainError('CONFLICT', 'Feedback is for a converted file');
  const report = await readReportSummary(deps.store, file.resultKey ?? inlineResultKey(file.id));
  const id = await insertFeedback(deps.db, {
    fileId: file.id,
    jobId: file.jobId,
    userId: user.id,
    rating: input.rating,
    comment: input.comment || undefined,
    wcagStatus: report.wcagStatus,
  });
  const facts = [
    `Rating: ${input.rating}/5`,
    `File: ${file.originalName} (${file.id})`,
    ...(file.jobId ? [`Conversion: ${file.jobId}`] : []),
    `Report: WCAG ${report.wcagStatus ?? 'unknown'}${report.findings ? `, ${report.findings.length} findings` : ''}${report.pages !== undefined ? `, ${report.pages} pages` : ''}`,
  ];
  const result = await deps.email.send({
    category: 'notification',
    source: 'api:feedback',
    idempotencyKey: `feedback:${id}`,
    to,
    replyTo: user.email,
    subject: `Feedback ${input.rating}/5 from ${user.email}`,
    text: `${facts.join('\n')}${input.comment ? `\n\n${input.comment}` : ''}`,
    html: `${facts.map((line) => `<p>${escapeHtml(line)}</p>`).join('')}${input.comment ? `<p>${escapeHtml(input.comment).replace(/\n/g, '<br>')}</p>` : ''}`,
  });
  await recordFeedbackSend(deps.db, id, result.status);
  return { feedbackId: id, notified: result.ok };
}
