import { downloadUrl } from '../conversion-jobs/download-token.ts';
import { inlineResultKey } from '../files/docx.ts';
import { type ReportSummary, readReportSummary } from '../files/report-summary.ts';
import type { Deps } from '../deps.ts';
import type { EmailService } from '../email/email-service.ts';
import type { SendStatus } from '../email/types.ts';
import { publicUrl } from '../public-url.ts';
import { escapeHtml } from '../sharing/html.ts';
import { claimResultMail, findResultEvent, recordResultMail, recordSkippedResultMail, type ResultEvent } from './result-mail.queries.ts';

export type ResultMailDeps = Pick<Deps, 'db' | 'config' | 'clock' | 'log' | 'store'> & { email: EmailService; downloadSecret: string };

export type ResultMailOutcome = SendStatus | 'skipped' | 'already_sent' | 'gone';

/**
 * Mails the owner of a finished conversion who opted in: the result with its
 * 24-hour download link and the report's summary, or the failure with its
 * reason. Never for a conversion started by email (the intake replies), nor
 * when the owner has since opted out. Runs twice, mails once.
 */
export async function sendResultMail(deps: ResultMailDeps, eventId: number): Promise<ResultMailOutcome> {
  const event = await findResultEvent(deps.db, eventId);
  if (!event) return 'gone';
  const claim = { eventId, fileId: event.fileId, userId: event.userId };
  if (!event.optedIn || event.byEmail) {
    await recordSkippedResultMail(deps.db, claim);
    return 'skipped';
  }
  if (!(await claimResultMail(deps.db, claim))) return 'already_sent';
  const content = event.type === 'conversion.completed' ? await completedMail(deps, event) : failedMail(deps, event);
  const result = await deps.email.send({
    category: 'notification',
    source: 'api:conversion-result',
    idempotencyKey: `conversion-result:${eventId}`,
    to: event.email,
    ...content,
  });
  await recordResultMail(deps.db, eventId, { status: result.status, logId: result.id });
  if (!result.ok) deps.log.warn({ eventId, status: result.status, error: result.error }, 'conversion result mail not sent');
  return result.status;
}

function displayName(event: ResultEvent) {
  return event.originalName.replace(/\.[^.]+$/, '') || event.originalName;
}

function readReport(deps: ResultMailDeps, event: ResultEvent): Promise<ReportSummary> {
  const key = event.resultKey ?? (event.payload.inline ? inlineResultKey(event.fileId) : undefined);
  return key ? readReportSummary(deps.store, key) : Promise.resolve({});
}

async function completedMail(deps: ResultMailDeps, event: ResultEvent) {
  const report = await readReport(deps, event);
  const now = deps.clock.now();
  const link = publicUrl(deps.config, downloadUrl(deps.downloadSecret, event.fileId, now));
  const wcag = report.wcagStatus ?? (typeof event.payload.wcagStatus === 'string' ? event.payload.wcagStatus : undefined);
  const pages = report.pages ?? (typeof event.payload.pages === 'number' ? event.payload.pages : undefined);
  const name = displayName(event);
  const summary = [
    pages !== undefined ? `Pages: ${pages}${report.complexPages ? ` (${report.complexPages} complex)` : ''}` : undefined,
    wcag ? `Accessibility check (WCAG): ${wcag}` : undefined,
    report.findings ? `Findings in the report: ${report.findings.length}` : undefined,
    typeof event.payload.credits === 'number' ? `Credits charged: ${event.payload.credits}` : undefined,
  ].filter((line): line is string => line !== undefined);
  const expires = new Date(now.getTime() + 24 * 60 * 60 * 1000).toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    subject: `Converted: ${name}`,
    text: `${event.originalName} is converted to accessible HTML.\n\n${summary.join('\n')}\n\nDownload the HTML, the tagged PDF and the report (link valid until ${expires}): ${link}`,
    html: `<p>${escapeHtml(event.originalName)} is converted to accessible HTML.</p><ul>${summary.map((line) => `<li>${escapeHtml(line)}</li>`).join('')}</ul><p><a href="${escapeHtml(link)}">Download the HTML, the tagged PDF and the report</a> (valid until ${expires})</p>`,
  };
}

function failedMail(deps: ResultMailDeps, event: ResultEvent) {
  const reason = typeof event.payload.message === 'string' ? event.payload.message : 'The conversion failed';
  const code = typeof event.payload.code === 'string' ? ` (${event.payload.code})` : '';
  const filesPage = publicUrl(deps.config, '/files');
  return {
    subject: `Conversion failed: ${displayName(event)}`,
    text: `We could not convert ${event.originalName}: ${reason}${code}.\n\nNo credits were charged for it. You can start it again from your files: ${filesPage}`,
    html: `<p>We could not convert ${escapeHtml(event.originalName)}: ${escapeHtml(reason)}${escapeHtml(code)}.</p><p>No credits were charged for it. <a href="${escapeHtml(filesPage)}">Start it again from your files</a>.</p>`,
  };
}
