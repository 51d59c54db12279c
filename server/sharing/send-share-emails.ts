import type { EmailService } from '../email/email-service.ts';
import { escapeHtml } from './html.ts';

export type ShareInput = { sharedBy: string; replyTo?: string; itemName: string; link: string; recipients: string[]; message?: string };

/** An address the share did not reach, and why (the library's status and error). */
type UnsentRecipient = { email: string; status: 'suppressed' | 'failed'; reason: string };

/** `recipients` counts only the emails that went out (`ok`); everyone else is in `unsentRecipients` with the reason. */
export type ShareResult = { recipients: number; unsentRecipients: UnsentRecipient[] };

/**
 * Mails a share link, one email per recipient, so one suppressed or failing
 * address never holds back the others and each send has its own log row.
 */
export async function sendShareEmails(email: EmailService, input: ShareInput): Promise<ShareResult> {
  const recipients = [...new Set(input.recipients.map((address) => address.trim().toLowerCase()).filter(Boolean))];
  const note = input.message ? `\n\n${input.message}` : '';
  const results = await Promise.all(
    recipients.map((to) =>
      email.send({
        category: 'notification',
        source: 'api:share',
        to,
        replyTo: input.replyTo,
        subject: `${input.sharedBy} shared “${input.itemName}” with you`,
        text: `${input.sharedBy} shared “${input.itemName}” with you.${note}\n\nOpen it: ${input.link}`,
        html: `<p>${escapeHtml(input.sharedBy)} shared “${escapeHtml(input.itemName)}” with you.</p>${input.message ? `<p>${escapeHtml(input.message)}</p>` : ''}<p><a href="${escapeHtml(input.link)}">Open it</a></p>`,
      }),
    ),
  );
  const unsentRecipients: UnsentRecipient[] = [];
  recipients.forEach((address, index) => {
    const result = results[index]!;
    if (!result.ok) unsentRecipients.push({ email: address, status: result.status, reason: result.error });
  });
  return { recipients: results.filter((result) => result.ok).length, unsentRecipients };
}
