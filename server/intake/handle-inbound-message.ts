import { bossDb } from '../conversion-jobs/boss-db.ts';
import { CHUNK_QUEUE } from '../conversion-jobs/conversion-jobs.jobs.ts';
import { startConversion } from '../conversion-jobs/start-conversion.ts';
import { wakeWorkers } from '../queue/boss.ts';
import { getBalance, type Balance } from '../credits/credits.ts';
import { derivedUuid } from '../email/email.jobs.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { takeRateLimits } from '../rate-limit/take-rate-limit.ts';
import { readAll } from '../storage/storage.ts';

import { replyReferences } from './compose-mime.ts';
import { replyLinks, type IntakeDeps } from './intake-deps.ts';
import { enqueueIntakeCleanup } from './intake.jobs.ts';
import {
  filePageCount,
  findCustomerByEmail,
  findOrCreateOwner,
  insertConversionError,
  insertMailedFile,
  latestConversionJob,
  loadIntakeMessage,
  markAcknowledged,
  moveIntakeMessage,
  markReplied,
  recordCustomerAndFile,
  recordMessageFacts,
  type IntakeCustomer,
  type IntakeMessageRow,
} from './intake.queries.ts';
import {
  choosePdfAttachment,
  loopGuardReason,
  readInboundMessage,
  safePdfName,
  UnreadableMessageError,
  type InboundAttachment,
} from './read-inbound-message.ts';
import { renderReply, type ReplyFacts, type ReplyKind } from './replies.ts';
import { sendIntakeMail, type IntakeMailResult } from './send-intake-mail.ts';

/**
 * Bytes per page for the pre-check estimate. Deliberately generous (text
 * pages are 10–100 KB, scans more): the estimate errs low, so the pre-check
 * refuses only senders who clearly cannot pay; the exact page count is held
 * by the conversion itself before any work is done.
 */
const ESTIMATED_BYTES_PER_PAGE = 250_000;

/** A sender who is not registered gets the "how to register" reply at most this often. */
const UNREGISTERED_REPLY_WINDOW_MS = 60 * 60 * 1000;

const ENGINE_REFUSALS: Record<string, { kind: ReplyKind; reason: string }> = {
  NOT_A_PDF: { kind: 'unsupported_type', reason: 'its content is not a PDF' },
  PDF_ENCRYPTED: { kind: 'unsupported_type', reason: 'it is protected with a password' },
  PDF_MALFORMED: { kind: 'unsupported_type', reason: 'it is damaged and cannot be opened' },
  PDF_NO_PAGES: { kind: 'unsupported_type', reason: 'it has no pages' },
};

function estimatePages(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / ESTIMATED_BYTES_PER_PAGE));
}

/** What the customer can still spend: credits less open holds (paid), free pages left (free). */
export function spendable(balance: Balance): { planType: 'free' | 'paid'; available: number } {
  return balance.planType === 'paid'
    ? { planType: 'paid', available: Math.max(0, balance.creditsRemaining - balance.creditsHeld) }
    : { planType: 'free', available: balance.freePagesLeft };
}

type Thread = { sender: string; subject: string; messageId?: string; references: string[] };

/** A reply in the sender's thread (In-Reply-To, References, Re: subject); never throws. */
export function replyInThread(
  deps: IntakeDeps,
  row: Pick<IntakeMessageRow, 'id'>,
  thread: Thread,
  kind: ReplyKind,
  facts: ReplyFacts,
  attachments?: Array<{ filename: string; contentType: string; content: Buffer }>,
): Promise<IntakeMailResult> {
  const content = renderReply(kind, facts, replyLinks(deps.config), thread.subject);
  return sendIntakeMail(deps, {
    to: thread.sender,
    ...content,
    attachments,
    inReplyTo: thread.messageId,
    references: thread.references,
    source: `intake:${kind}`,
    intakeMessageId: row.id,
  });
}

/**
 * A branded refusal: the reply, then (one transaction) the job log row, the
 * message's final state and its cleanup. A failed reply is logged by the
 * mailer and changes none of that.
 */
async function refuse(
  deps: IntakeDeps,
  row: IntakeMessageRow,
  thread: Thread,
  kind: ReplyKind,
  facts: ReplyFacts,
  log: { customerId: string | null; error: string; fileId?: string },
): Promise<void> {
  const reply = await replyInThread(deps, row, thread, kind, facts);
  await markReplied(deps.db, row.id, reply.ok ? null : reply.error);
  await deps.db.transaction(async (tx) => {
    const logId = await insertConversionError(tx, {
      customerId: log.customerId,
      senderEmail: thread.sender,
      filename: facts.filename ?? null,
      fileSizeBytes: row.fileSizeBytes,
      errorMessage: log.error,
    });
    const moved = await moveIntakeMessage(tx, row.id, ['received', 'converting'], 'refused', { outcome: kind, fileId: log.fileId, conversionLogId: logId });
    if (moved) await enqueueIntakeCleanup(deps.boss, row.id, { db: bossDb(tx) });
  });
  deps.log.info({ event: 'intake_refused', intakeMessageId: row.id, kind, replied: reply.ok }, `intake: refused (${kind})`);
}

/** No reply on purpose; the outcome (and its reason, when given) stays on the message, the log line says why. */
async function drop(deps: IntakeDeps, row: IntakeMessageRow, outcome: string, detail: Record<string, unknown>, message: string, reason?: string) {
  await deps.db.transaction(async (tx) => {
    const moved = await moveIntakeMessage(tx, row.id, ['received'], 'dropped', { outcome: reason ? `${outcome}: ${reason}` : outcome });
    if (moved) await enqueueIntakeCleanup(deps.boss, row.id, { db: bossDb(tx) });
  });
  deps.log.warn({ event: `intake_${outcome}`, intakeMessageId: row.id, ...detail }, message);
}

function unsupportedReason(attachment: InboundAttachment): string {
  if (attachment.mimeType === 'application/pdf' || /\.pdf$/i.test(attachment.filename)) return 'its content is not a PDF';
  return `it is a ${attachment.mimeType || 'file'} of another kind`;
}

/**
 * The intake handler (specification: "Convert-by-email flow", steps 1–7):
 * parse, loop guards and the per-sender limit, the customer, the first PDF by
 * content, its size, the credit pre-check, the acknowledgment, the store and
 * the conversion, started exactly as an upload's Convert so the rest (chunks,
 * progress, cancel, webhooks, the charge) is the conversion service's.
 * Returns as soon as the conversion is queued: a 300-page PDF never holds
 * the intake. Runs at least once per message; every step is guarded by the
 * message's state, so a second run does nothing twice that matters.
 */
export async function handleInboundMessage(deps: IntakeDeps, messageId: string): Promise<void> {
  const row = await loadIntakeMessage(deps.db, messageId);
  if (!row) return;
  if (row.status === 'converting' && row.fileId && !(await latestConversionJob(deps.db, row.fileId))) {
    // A run that stopped between storing the file and starting its conversion: start it now.
    return resumeStart(deps, row);
  }
  if (row.status !== 'received') return;
  const { intake } = deps.config;
  if (!row.rawKey) return drop(deps, row, 'raw_missing', {}, 'intake: the stored message is gone');

  const raw = await readAll(await deps.store.get(row.rawKey));
  let message: Awaited<ReturnType<typeof readInboundMessage>>;
  try {
    message = await readInboundMessage(raw);
  } catch (error) {
    if (!(error instanceof UnreadableMessageError)) throw error;
    return drop(deps, row, 'unreadable', { size: raw.length, reason: error.message }, 'intake: unreadable message dropped without a reply');
  }
  const references = replyReferences(message.references, message.messageId);
  await recordMessageFacts(deps.db, row.id, {
    senderEmail: message.sender,
    subject: message.subject,
    threadMessageId: message.messageId,
    threadReferences: references,
  });
  if (/[\r\n]/.test(message.subject)) {
    deps.log.warn({ event: 'intake_header_injection', intakeMessageId: row.id }, 'intake: the subject carried line breaks; replies use it on one line');
  }

  const ownAddresses = [intake.publicAddress, deps.mailer.replyTo, (deps.mailer.from.match(/<([^>]+)>/)?.[1] ?? deps.mailer.from).toLowerCase()];
  const guard = loopGuardReason(message, row.envelopeFrom, ownAddresses, [intake.domain]);
  if (guard) return drop(deps, row, 'loop_guard', { reason: guard, sender: message.sender }, `intake: no reply (${guard})`, guard);
  const sender = message.sender!;

  const limited = await takeRateLimits(
    deps.db,
    [{ key: `intake:sender:${sender}`, limit: intake.senderLimit, windowMs: intake.senderWindowMs }],
    deps.clock.now(),
  );
  if (!limited.allowed) {
    return drop(deps, row, 'rate_limited', { sender, retryAfterMs: limited.retryAfterMs }, 'intake: sender over the rate limit; dropped without a reply');
  }
  const thread: Thread = { sender, subject: message.subject, messageId: message.messageId, references };

  const customer = await findCustomerByEmail(deps.db, sender);
  if (!customer) {
    const once = await takeRateLimits(
      deps.db,
      [{ key: `intake:unregistered-reply:${sender}`, limit: 1, windowMs: UNREGISTERED_REPLY_WINDOW_MS }],
      deps.clock.now(),
    );
    if (!once.allowed) return drop(deps, row, 'unregistered_repeat', { sender }, 'intake: unregistered sender already told how to register; no reply');
    return refuse(deps, row, thread, 'unregistered', {}, { customerId: null, error: 'Unregistered sender' });
  }

  const choice = choosePdfAttachment(message.attachments);
  if (choice.kind === 'none')
    return refuse(deps, row, thread, 'no_attachment', { maxMegabytes: megabytes(intake.maxBytes) }, { customerId: customer.id, error: 'No attachment' });
  if (choice.kind === 'unsupported') {
    const { attachment } = choice;
    deps.log.warn(
      { event: 'intake_unsupported_attachment', intakeMessageId: row.id, mimeType: attachment.mimeType, bytes: attachment.content.length },
      'intake: attachment is not a PDF by content',
    );
    const filename = attachment.filename.replace(/[\u0000-\u001f\u007f]+/g, '').slice(0, 200) || 'your attachment';
    return refuse(
      deps,
      row,
      thread,
      'unsupported_type',
      { filename, reason: unsupportedReason(attachment) },
      { customerId: customer.id, error: `Unsupported file type: ${attachment.mimeType}` },
    );
  }
  const pdf = choice.attachment;
  const filename = safePdfName(pdf.filename);
  await recordCustomerAndFile(deps.db, row.id, { customerId: customer.id, filename, fileSizeBytes: pdf.content.length });
  const withFile = { ...row, fileSizeBytes: pdf.content.length };
  if (pdf.content.length > intake.maxBytes) {
    return refuse(
      deps,
      withFile,
      thread,
      'too_large',
      { filename, maxMegabytes: megabytes(intake.maxBytes) },
      { customerId: customer.id, error: `File too large: ${pdf.content.length} bytes` },
    );
  }

  const estimatedPages = estimatePages(pdf.content.length);
  const balance = spendable(await getBalance(deps.db, customer.id));
  if (balance.available < estimatedPages) {
    return refuse(
      deps,
      withFile,
      thread,
      'insufficient_credits',
      { filename, estimatedPages, balance },
      { customerId: customer.id, error: 'Insufficient credits' },
    );
  }

  if (!row.ackSentAt) {
    await replyInThread(deps, row, thread, 'acknowledgment', { filename, estimatedPages });
    // Marked whatever the outcome: a failed acknowledgment is logged, and never sent twice.
    await markAcknowledged(deps.db, row.id);
  }
  await storeAndConvert(deps, withFile, thread, customer, pdf.content, filename);
}

/** 25 for the specification's 25 MB; one decimal for smaller limits (a test's 0.3). */
function megabytes(bytes: number) {
  return Number((bytes / (1024 * 1024)).toFixed(1));
}

/** The mailed file's id, the same on every run for one message, so a retry finds what the last run stored. */
function mailedFileId(messageId: string) {
  return derivedUuid(`intake-file:${messageId}`);
}

/**
 * Step 6–7: open the PDF for its exact page count, store it as a file of the
 * customer's, mark the message converting, and start the conversion (which
 * holds the exact credits or refuses). Engine refusals (encrypted, damaged)
 * and a hold the balance cannot cover become their branded replies.
 */
async function storeAndConvert(deps: IntakeDeps, row: IntakeMessageRow, thread: Thread, customer: IntakeCustomer, content: Buffer, filename: string) {
  const fileId = mailedFileId(row.id);
  try {
    const engine = await deps.engine();
    const meta = await engine.inspect(new Uint8Array(content.buffer, content.byteOffset, content.byteLength), { sourceName: filename });
    const maxPages = deps.config.conversion.uploadMaxPages;
    if (meta.pageCount > maxPages) throw new DomainError('PDF_TOO_MANY_PAGES', `${meta.pageCount} pages; the limit is ${maxPages}`);
    const key = `files/${fileId}/source`;
    await deps.store.put(key, content, { contentType: 'application/pdf' });
    const owner = await findOrCreateOwner(deps.db, customer);
    await insertMailedFile(deps.db, {
      id: fileId,
      ownerId: owner.id,
      tenantId: owner.tenantId,
      name: filename,
      size: content.length,
      pages: meta.pageCount,
      key,
    });
    await moveIntakeMessage(deps.db, row.id, ['received'], 'converting', { fileId });
  } catch (error) {
    if (!(await refuseForError(deps, row, thread, customer.id, filename, error))) throw error;
    return;
  }
  await start(deps, { ...row, fileId, status: 'converting' }, thread, customer.id, filename);
}

async function resumeStart(deps: IntakeDeps, row: IntakeMessageRow) {
  if (!row.senderEmail || !row.fileId) return;
  const thread: Thread = { sender: row.senderEmail, subject: row.subject ?? '', messageId: row.threadMessageId ?? undefined, references: row.threadReferences };
  await start(deps, row, thread, row.customerId, row.filename ?? 'document.pdf');
}

async function start(deps: IntakeDeps, row: IntakeMessageRow, thread: Thread, customerId: string | null, filename: string) {
  const fileId = row.fileId!;
  await deps.watchConversion(row.id, fileId);
  try {
    // The upload's own Convert: the exact pages held, the job, its chunks and their queue jobs in one transaction.
    if (!(await latestConversionJob(deps.db, fileId))) await startConversion(deps, { fileId, options: {} });
    wakeWorkers(deps.boss, [CHUNK_QUEUE]);
    deps.log.info({ event: 'intake_converting', intakeMessageId: row.id, fileId }, 'intake: conversion queued');
  } catch (error) {
    if (!(await refuseForError(deps, { ...row, fileId }, thread, customerId, filename, error))) throw error;
  }
}

/**
 * Errors of opening and starting a conversion that are the sender's to fix
 * (not a PDF after all, encrypted, damaged, too many pages, a balance that
 * cannot hold the exact page count) become their branded replies; true when
 * the error was one of those. Anything else is ours and is retried.
 */
async function refuseForError(
  deps: IntakeDeps,
  row: IntakeMessageRow,
  thread: Thread,
  customerId: string | null,
  filename: string,
  error: unknown,
): Promise<boolean> {
  if (!isDomainError(error)) return false;
  const failure = `${error.code}: ${error.message}`;
  const engine = ENGINE_REFUSALS[error.code];
  if (engine) {
    await refuse(deps, row, thread, engine.kind, { filename, reason: engine.reason }, { customerId, error: failure });
    return true;
  }
  if (error.code === 'PDF_TOO_MANY_PAGES') {
    await refuse(
      deps,
      row,
      thread,
      'too_large',
      { filename, reason: error.message, maxMegabytes: megabytes(deps.config.intake.maxBytes) },
      { customerId, error: failure },
    );
    return true;
  }
  if ((error.code === 'INSUFFICIENT_CREDITS' || error.code === 'FREE_PAGE_LIMIT') && customerId) {
    // The exact count the conversion tried to hold: the pre-check's estimate was too low for this balance.
    const pages = row.fileId ? await filePageCount(deps.db, row.fileId) : undefined;
    const balance = spendable(await getBalance(deps.db, customerId));
    await refuse(
      deps,
      row,
      thread,
      'insufficient_credits',
      { filename, pages, balance },
      { customerId, error: 'Insufficient credits', fileId: row.fileId ?? undefined },
    );
    return true;
  }
  return false;
}
