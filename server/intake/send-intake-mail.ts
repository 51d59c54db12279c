import { randomUUID } from 'node:crypto';
import type { Deps } from '../deps.ts';
import { rewriteFrom } from '../email/addresses.ts';
import { findSuppressions, recordEmailSend, type SendLogEntry } from '../email/email.queries.ts';
import { HOOK_TIMEOUT_MS, withinTimeout } from '../email/hook-timeout.ts';
import { composeMime, type OutgoingAttachment } from './compose-mime.ts';
import { createMailApiClient, type MailApiClient } from './mail-api.ts';

/** The send-log provider name of the mail-provider API (sql/055_intake.sql). */
const MAIL_API_PROVIDER = 'mail_api';

/** One per process: the API client caches its access token in memory. */
export type IntakeMailer = { client: MailApiClient; from: string; replyTo: string; messageIdDomain: string };

export function createIntakeMailer(deps: Pick<Deps, 'config' | 'clock'>): IntakeMailer {
  const { intake, email } = deps.config;
  // The sender is the public address; on the retired domain it becomes the current sender domain, as every library From does.
  const from = rewriteFrom(`Folio <${intake.publicAddress}>`, email.retiredDomain, email.senderDomain);
  return {
    client: createMailApiClient({ settings: intake.mail, subject: intake.publicAddress, now: deps.clock.now }),
    from,
    replyTo: intake.publicAddress,
    messageIdDomain: email.senderDomain ?? intake.publicAddress.split('@')[1] ?? 'folio.localhost',
  };
}

export type IntakeMail = {
  to: string;
  subject: string;
  text: string;
  html: string;
  attachments?: OutgoingAttachment[];
  inReplyTo?: string;
  references?: string[];
  /** Send-log source, e.g. `intake:result`. */
  source: string;
  /** Kept as a tag on the send-log row, to find the replies of one message. */
  intakeMessageId?: string;
};

export type IntakeMailResult = { ok: true; messageId: string; logId: string } | { ok: false; status: 'failed' | 'suppressed'; error: string; logId: string };

export type IntakeMailDeps = Pick<Deps, 'config' | 'db' | 'log' | 'clock' | 'mailer'>;

/**
 * Sends one message through the mail-provider API and writes it to the send
 * log the email library keeps (provider `mail_api`), honouring its
 * suppression list (a lookup that fails or is slow lets the mail go, as the
 * library does). Never throws: a failure is logged here and returned, so the
 * caller's own outcome (a conversion, its charge) never depends on it.
 */
export async function sendIntakeMail(deps: IntakeMailDeps, mail: IntakeMail): Promise<IntakeMailResult> {
  const logId = randomUUID();
  const to = mail.to.trim().toLowerCase();
  const { mailer, log } = deps;
  const base: Omit<SendLogEntry, 'status'> = {
    id: logId,
    category: 'transactional',
    source: mail.source,
    provider: MAIL_API_PROVIDER,
    failed_over: false,
    idempotency_key: logId,
    attempt: 1,
    to: [to],
    cc: [],
    bcc: [],
    from: mailer.from,
    subject: mail.subject,
    tags: { folio_log_id: logId, ...(mail.intakeMessageId ? { intake_message_id: mail.intakeMessageId } : {}) },
  };
  const writeLog = async (entry: SendLogEntry) => {
    if (!deps.config.email.loggingEnabled) return;
    const written = await withinTimeout(recordEmailSend(deps.db, entry), HOOK_TIMEOUT_MS);
    if (!written.ok) log.error({ event: 'email_log_write_failed', err: written.error, timedOut: written.timedOut, logId }, 'intake send log write failed');
  };

  try {
    if (deps.config.email.loggingEnabled) {
      const lookup = await withinTimeout(findSuppressions(deps.db, [to]), HOOK_TIMEOUT_MS);
      const suppression = lookup.ok ? lookup.value[0] : undefined;
      if (!lookup.ok) log.warn({ err: lookup.error, timedOut: lookup.timedOut, logId }, 'intake suppression lookup failed; sending without it');
      if (suppression) {
        const error = `Recipient suppressed: ${suppression.reason.replace('_', ' ')}`;
        await writeLog({ ...base, status: 'suppressed', error });
        log.warn({ event: 'intake_reply_suppressed', logId, source: mail.source, intakeMessageId: mail.intakeMessageId }, error);
        return { ok: false, status: 'suppressed', error, logId };
      }
    }
    const mime = composeMime({
      from: mailer.from,
      to,
      replyTo: mailer.replyTo,
      subject: mail.subject,
      messageId: `<${logId}@${mailer.messageIdDomain}>`,
      inReplyTo: mail.inReplyTo,
      references: mail.references,
      date: deps.clock.now(),
      text: mail.text,
      html: mail.html,
      attachments: mail.attachments,
      // RFC 3834: other auto-responders must not answer us, and Exchange's out-of-office neither.
      headers: { 'Auto-Submitted': 'auto-replied', 'X-Auto-Response-Suppress': 'All', 'X-Folio-Log-Id': logId },
    });
    const outcome = await mailer.client.send(mime);
    if (outcome.ok) {
      await writeLog({ ...base, status: 'sent', provider_message_id: outcome.messageId });
      return { ok: true, messageId: outcome.messageId, logId };
    }
    await writeLog({ ...base, status: 'failed', error_kind: outcome.kind, error: outcome.error });
    log.error(
      { event: 'intake_reply_failed', logId, source: mail.source, kind: outcome.kind, error: outcome.error, intakeMessageId: mail.intakeMessageId },
      'intake reply failed',
    );
    return { ok: false, status: 'failed', error: outcome.error, logId };
  } catch (error) {
    log.error(
      { event: 'intake_reply_failed', err: error, logId, source: mail.source, intakeMessageId: mail.intakeMessageId },
      'intake reply failed unexpectedly',
    );
    return { ok: false, status: 'failed', error: 'Internal error while sending the reply', logId };
  }
}
