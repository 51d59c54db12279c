import { z } from 'zod';
import type { Deps } from '../deps.ts';
import type { EmailService } from '../email/email-service.ts';
import { DomainError } from '../errors.ts';
import { enforceRateLimits } from '../rate-limit/take-rate-limit.ts';
import { escapeHtml } from '../sharing/html.ts';
import { insertContactMessage, recordContactSend } from './contact.queries.ts';

/** Contact messages per address per hour: enough for a person, too few for a spam run. */
const CONTACT_PER_IP_PER_HOUR = 5;

export const ContactInput = z.object({
  email: z.email().max(320),
  name: z.string().trim().min(1).max(200),
  message: z.string().trim().min(1).max(5000),
  /** The honeypot: hidden from people by the form, filled in by bots. */
  website: z.string().max(500).optional(),
});
export type ContactInput = z.infer<typeof ContactInput>;

export const ContactResult = z.object({
  /** Always true: a honeypot hit gets the same answer, so a bot learns nothing. */
  received: z.literal(true),
  /** True only when the team was notified (the library said ok). */
  notified: z.boolean(),
});
export type ContactResult = z.infer<typeof ContactResult>;

type ContactDeps = Pick<Deps, 'db' | 'config' | 'clock' | 'log'> & { email: EmailService };

/** The team address notifications go to; without CONTACT_EMAIL nothing can be delivered. */
export function teamAddress(deps: Pick<Deps, 'config'>): string {
  const address = deps.config.product.contactEmail;
  if (!address) throw new DomainError('SERVICE_UNAVAILABLE', 'The contact address is not configured');
  return address;
}

/**
 * POST /api/contact: a visitor writes to the team. Rate limited per IP; a
 * filled honeypot is answered as a success and nothing is kept or sent, so
 * a bot learns nothing. The message is stored before the notification
 * (Reply-To the sender), so a failed send loses nothing.
 */
export async function submitContact(deps: ContactDeps, input: ContactInput, remoteAddress: string | undefined): Promise<ContactResult> {
  const to = teamAddress(deps);
  await enforceRateLimits(
    deps.db,
    [{ key: `contact:ip:${remoteAddress ?? 'unknown'}`, limit: CONTACT_PER_IP_PER_HOUR, windowMs: 60 * 60 * 1000 }],
    deps.clock.now(),
  );
  if (input.website) {
    deps.log.info({ remoteAddress }, 'contact honeypot filled; dropped');
    return { received: true, notified: false };
  }
  const email = input.email.trim().toLowerCase();
  const id = await insertContactMessage(deps.db, { email, name: input.name, message: input.message, remoteAddress });
  const result = await deps.email.send({
    category: 'notification',
    source: 'api:contact',
    idempotencyKey: `contact:${id}`,
    to,
    replyTo: email,
    subject: `Contact: ${input.name.slice(0, 100)}`,
    text: `From: ${input.name} <${email}>\n\n${input.message}`,
    html: `<p>From: ${escapeHtml(input.name)} &lt;${escapeHtml(email)}&gt;</p><p>${escapeHtml(input.message).replace(/\n/g, '<br>')}</p>`,
  });
  await recordContactSend(deps.db, id, result.status);
  return { received: true, notified: result.ok };
}
