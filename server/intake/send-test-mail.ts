import { z } from 'zod';
import { DomainError } from '../errors.ts';
import { escapeHtml } from '../sharing/html.ts';
import { sendIntakeMail, type IntakeMailDeps } from './send-intake-mail.ts';

const TestMailRequest = z.object({
  to: z.email().max(320),
  subject: z.string().trim().min(1).max(200),
  body: z.string().max(20_000),
});

/**
 * The worker's `POST /test-send`: one message through the mail-provider API
 * exactly as a reply goes (token, MIME, send log), to check the service
 * account and the delegation from outside. Throws EMAIL_SUPPRESSED or
 * EMAIL_FAILED (the relay routes' codes) when it did not go out.
 */
export async function sendTestMail(deps: IntakeMailDeps, input: unknown): Promise<{ ok: true; messageId: string; logId: string }> {
  const parsed = TestMailRequest.safeParse(input);
  if (!parsed.success)
    throw new DomainError('VALIDATION_FAILED', 'Send JSON {to, subject, body}', { context: { issues: parsed.error.issues.map((issue) => issue.message) } });
  const { to, subject, body } = parsed.data;
  const result = await sendIntakeMail(deps, {
    to,
    subject,
    text: body,
    html: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body><pre style="white-space:pre-wrap">${escapeHtml(body)}</pre></body></html>`,
    source: 'intake:test-send',
  });
  if (result.ok) return result;
  if (result.status === 'suppressed') throw new DomainError('EMAIL_SUPPRESSED', result.error);
  throw new DomainError('EMAIL_FAILED', result.error);
}
