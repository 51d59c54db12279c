import { replyInThread } from './handle-inbound-message.ts';
import type { IntakeDeps } from './intake-deps.ts';
import { IntakeJob } from './intake.jobs.ts';
import { insertConversionError, latestConversionJob, loadIntakeMessage, markReplied, moveIntakeMessage } from './intake.queries.ts';

/**
 * A message (or its finishing) that failed every receive. It is marked
 * `failed` and logged for an operator. Its sender hears about it only when we
 * had already acknowledged the PDF (a result was promised): one failure reply
 * and a `conversion_jobs` error row, nothing charged. A message that crashed
 * its handler before that is broken or hostile, and answering it could only
 * start a loop. The raw bytes stay in the store for inspection.
 */
export async function giveUpOnMessage(deps: IntakeDeps, data: unknown): Promise<void> {
  const parsed = IntakeJob.safeParse(data);
  if (!parsed.success) {
    deps.log.error({ event: 'intake_dead_letter' }, 'intake: an unreadable job reached the dead-letter queue');
    return;
  }
  const row = await loadIntakeMessage(deps.db, parsed.data.messageId);
  if (row?.status === 'converting' && row.fileId && (await latestConversionJob(deps.db, row.fileId))) {
    // The conversion did start: its end still finishes the message (the notice, or the sweep).
    deps.log.error({ event: 'intake_dead_letter', intakeMessageId: row.id }, 'intake: a handler failed after the conversion started; it finishes as usual');
    return;
  }
  if (!row || !(await moveIntakeMessage(deps.db, row.id, ['received', 'converting', 'finishing'], 'failed', { outcome: 'dead_letter' }))) return;
  deps.log.error({ event: 'intake_dead_letter', intakeMessageId: row.id }, 'intake: gave up on a message after every retry');
  if (!row.ackSentAt || !row.senderEmail || row.replySentAt || row.conversionLogId) return;
  const thread = { sender: row.senderEmail, subject: row.subject ?? '', messageId: row.threadMessageId ?? undefined, references: row.threadReferences };
  const reply = await replyInThread(deps, row, thread, 'conversion_failed', { filename: row.filename ?? undefined });
  await markReplied(deps.db, row.id, reply.ok ? null : reply.error);
  await deps.db.transaction(async (tx) => {
    const logId = await insertConversionError(tx, {
      customerId: row.customerId,
      senderEmail: row.senderEmail!,
      filename: row.filename,
      fileSizeBytes: row.fileSizeBytes,
      errorMessage: 'The intake gave up after every retry',
    });
    await moveIntakeMessage(tx, row.id, ['failed'], 'failed', { conversionLogId: logId });
  });
}
