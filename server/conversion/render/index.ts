import type { Log } from '../../log.ts';
import type { AuditInput, AuditResult } from '../audit/index.ts';
import type { ConversionOutputs } from '../engine.ts';
import type { ConvertedDocument } from '../model.ts';
import { renderHtml } from './html.ts';
import { renderTaggedPdf } from './pdf.ts';
import { buildReport, renderReportHtml } from './report.ts';

export { zipOutputs } from './zip.ts';
export { renderHtml } from './html.ts';
export { renderTaggedPdf } from './pdf.ts';
export type { FolioReport } from './report.ts';

/** HTML, tagged PDF, audit and report of a whole document (pages in page order). */
export async function renderDocument(
  document: ConvertedDocument,
  options: {
    log?: Log;
    /** where the audit runs (default: this thread); elsewhere, it runs while this thread draws the tagged PDF */
    audit?: (input: AuditInput) => Promise<AuditResult>;
  } = {},
): Promise<ConversionOutputs> {
  const started = performance.now();
  const html = renderHtml(document);
  const htmlMs = Math.round(performance.now() - started);
  const auditing = (options.audit ?? auditHere)({ html: html.html, shell: html.shell, mainParts: html.mainParts });
  // awaited after the PDF; until then a failure must not count as an unhandled rejection
  auditing.catch(() => undefined);
  const pdfStarted = performance.now();
  const taggedPdf = await renderTaggedPdf(document, options.log);
  const pdfMs = Math.round(performance.now() - pdfStarted);
  const audit = await auditing;
  const report = buildReport(document, audit, html.warnings, html.headings.length, {
    htmlMs,
    pdfMs,
    auditMs: audit.ms,
    renderMs: Math.round(performance.now() - started),
  });
  options.log?.info(
    { pages: report.pages, wcagStatus: report.wcagStatus, violations: audit.violationCount, htmlMs, pdfMs, auditMs: audit.ms },
    'conversion rendered',
  );
  return { html: html.html, taggedPdf, report, reportHtml: renderReportHtml(report) };
}

/** jsdom and axe-core load only when this thread audits: with the audit in a worker, the engine's thread never holds them. */
async function auditHere(input: AuditInput): Promise<AuditResult> {
  const { auditHtml } = await import('../audit/index.ts');
  return auditHtml(input);
}
