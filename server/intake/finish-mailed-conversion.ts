import { bossDb } from '../conversion-jobs/boss-db.ts';
import { downloadUrl } from '../conversion-jobs/download-token.ts';
import { getBalance } from '../credits/credits.ts';
import { safeBaseName } from '../conversion/render/zip.ts';
import { openZipEntry, readZipEntryText } from '../storage/zip-entry.ts';
import { replyInThread, spendable } from './handle-inbound-message.ts';
import { publicBase, type IntakeDeps } from './intake-deps.ts';
import { enqueueIntakeCleanup } from './intake.jobs.ts';
import {
  ENDED_JOB_STATUSES,
  insertConversionLog,
  latestConversionJob,
  loadIntakeMessage,
  markReplied,
  moveIntakeMessage,
  type EndedJob,
} from './intake.queries.ts';
import type { ReplyFacts, ReplyKind } from './replies.ts';

/**
 * The HTML is attached up to this size; a larger one is linked instead. The
 * send endpoint takes the whole message as base64url JSON, where an attachment
 * grows by 4/3 twice; a few megabytes is what such endpoints reliably take.
 */
const MAX_ATTACHED_HTML_BYTES = 2 * 1024 * 1024;

type Outputs = { html?: Buffer; standardPages: number; complexPages: number; wcagStatus?: string };

/** A report is a few kilobytes per page; this bounds what a damaged zip could make us read. */
const MAX_REPORT_BYTES = 16 * 1024 * 1024;
const isHtml = (name: string) => name.endsWith('.html') && !name.endsWith('.report.html');

/** The HTML, when small enough to attach, and the report's page classes, read from the conversion's zip by ranges. */
async function readOutputs(deps: IntakeDeps, resultKey: string): Promise<Outputs> {
  const reportText = await readZipEntryText(deps.store, resultKey, (name) => name.endsWith('.report.json'), MAX_REPORT_BYTES);
  if (reportText === undefined) throw new Error(`the result zip ${resultKey} has no report`);
  const report = JSON.parse(reportText) as { standardPages?: number; complexPages?: number; wcagStatus?: string };
  const stream = await openZipEntry(deps.store, resultKey, isHtml);
  if (!stream) throw new Error(`the result zip ${resultKey} has no HTML`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_ATTACHED_HTML_BYTES) {
      stream.destroy();
      break;
    }
    chunks.push(chunk);
  }
  return {
    html: size > MAX_ATTACHED_HTML_BYTES ? undefined : Buffer.concat(chunks),
    standardPages: report.standardPages ?? 0,
    complexPages: report.complexPages ?? 0,
    wcagStatus: report.wcagStatus,
  };
}

/**
 * Steps 8–12 of the specification's flow, once the conversion of a mailed
 * PDF has ended. The charge is the conversion's own: its assembly settled the
 * hold at 1 credit per page through `deduct_credits` (paid) or
 * `use_free_pages` (free), in the transaction that completed the job, so a
 * mailed PDF is charged exactly like an upload and never twice. Here: the
 * reply (result with the HTML attached, or the failure, or the cancel), then
 * in one transaction the `conversion_jobs` row, the message's final state and
 * its cleanup job. A reply that cannot be sent is logged and recorded on the
 * message; the outcome rows are written all the same.
 */
export async function finishMailedConversion(deps: IntakeDeps, messageId: string): Promise<void> {
  const row = await loadIntakeMessage(deps.db, messageId);
  if (!row || (row.status !== 'converting' && row.status !== 'finishing')) return;
  const job = row.fileId ? await latestConversionJob(deps.db, row.fileId) : null;
  if (job && !ENDED_JOB_STATUSES.has(job.status)) return;
  await moveIntakeMessage(deps.db, row.id, ['converting'], 'finishing');

  const thread = { sender: row.senderEmail ?? '', subject: row.subject ?? '', messageId: row.threadMessageId ?? undefined, references: row.threadReferences };
  const filename = row.filename ?? 'document.pdf';
  const outcome = await describeOutcome(deps, job, filename, row.customerId);

  if (!row.replySentAt && !row.replyError && thread.sender) {
    const reply = await replyInThread(deps, row, thread, outcome.kind, outcome.facts, outcome.attachments);
    await markReplied(deps.db, row.id, reply.ok ? null : reply.error);
  }
  await deps.db.transaction(async (tx) => {
    const logId = await insertConversionLog(tx, {
      customerId: row.customerId,
      senderEmail: thread.sender,
      filename,
      fileSizeBytes: row.fileSizeBytes,
      totalPages: job?.totalPages ?? null,
      standardPages: outcome.standardPages ?? null,
      complexPages: outcome.complexPages ?? null,
      creditsCharged: outcome.success ? (job?.creditsCharged ?? 0) : 0,
      status: outcome.success ? 'success' : 'error',
      errorMessage: outcome.error ?? null,
    });
    const moved = await moveIntakeMessage(tx, row.id, ['finishing'], outcome.success ? 'replied' : 'failed', { outcome: outcome.kind, conversionLogId: logId });
    if (moved) await enqueueIntakeCleanup(deps.boss, row.id, { db: bossDb(tx) });
  });
  if (!outcome.success)
    deps.log.error(
      { event: 'intake_conversion_failed', intakeMessageId: row.id, fileId: row.fileId, error: outcome.error },
      'intake: mailed conversion failed',
    );
  else deps.log.info({ event: 'intake_replied', intakeMessageId: row.id, fileId: row.fileId, pages: job?.totalPages }, 'intake: result sent');
}

type Outcome = {
  kind: ReplyKind;
  facts: ReplyFacts;
  success: boolean;
  error?: string;
  standardPages?: number;
  complexPages?: number;
  attachments?: Array<{ filename: string; contentType: string; content: Buffer }>;
};

async function describeOutcome(deps: IntakeDeps, job: EndedJob | null, filename: string, customerId: string | null): Promise<Outcome> {
  if (!job) return { kind: 'conversion_failed', facts: { filename }, success: false, error: 'The conversion never started or its file was deleted' };
  if (job.status === 'cancelled') return { kind: 'conversion_cancelled', facts: { filename }, success: false, error: 'Cancelled by the user' };
  if (job.status === 'failed' || !job.resultKey) {
    return {
      kind: 'conversion_failed',
      facts: { filename, reason: job.errorMessage ?? undefined },
      success: false,
      error: `${job.errorCode ?? 'CONVERSION_FAILED'}: ${job.errorMessage ?? 'The conversion failed'}`,
    };
  }
  const outputs = await readOutputs(deps, job.resultKey);
  const attached = outputs.html !== undefined;
  const balance = customerId ? spendable(await getBalance(deps.db, customerId)) : undefined;
  const facts: ReplyFacts = {
    filename,
    pages: job.totalPages,
    standardPages: outputs.standardPages,
    complexPages: outputs.complexPages,
    creditsCharged: job.creditsCharged ?? 0,
    wcagStatus: outputs.wcagStatus,
    attached,
    downloadUrl: attached ? undefined : `${publicBase(deps.config)}${downloadUrl(deps.downloadSecret, job.fileId, deps.clock.now())}`,
    balance,
  };
  return {
    kind: 'result',
    facts,
    success: true,
    standardPages: outputs.standardPages,
    complexPages: outputs.complexPages,
    // Named as inside the zip: the PDF's name with .html.
    attachments: outputs.html
      ? [{ filename: `${safeBaseName(filename.replace(/\.[^.]+$/, '') || 'document')}.html`, contentType: 'text/html; charset=utf-8', content: outputs.html }]
      : undefined,
  };
}
