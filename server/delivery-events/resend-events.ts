import { z } from 'zod';
import type { EmailEvent, EmailEventInput } from './delivery-events.queries.ts';

/** The part of a Resend webhook body we read; everything else is kept in raw. */
export const ResendWebhookEvent = z.object({
  type: z.string(),
  created_at: z.string().optional(),
  data: z
    .object({
      email_id: z.string().optional(),
      created_at: z.string().optional(),
      from: z.string().optional(),
      to: z.union([z.array(z.string()), z.string()]).optional(),
      subject: z.string().optional(),
      tags: z.record(z.string(), z.unknown()).optional(),
      bounce: z.object({ type: z.string().optional(), subType: z.string().optional(), message: z.string().optional() }).passthrough().optional(),
      failed: z.object({ reason: z.string().optional() }).passthrough().optional(),
      suppressed: z.object({ type: z.string().optional(), message: z.string().optional() }).passthrough().optional(),
    })
    .passthrough()
    .default({}),
});
export type ResendWebhookEvent = z.infer<typeof ResendWebhookEvent>;

const KNOWN = new Set<string>(['sent', 'delivery_delayed', 'delivered', 'opened', 'clicked', 'bounced', 'complained', 'failed', 'suppressed']);

/**
 * The status move a Resend event stands for. Opens and clicks move the status
 * of outreach mail only (specification: "outreach configuration only"), and
 * provider-A mail is never outreach (outreach is pinned to provider B): an open
 * or a click says the mail was delivered, and stays the row's raw last_event.
 */
export function resendStatusEvent(name: string): EmailEvent {
  return name === 'opened' || name === 'clicked' ? 'delivered' : (name as EmailEvent);
}

/** Parses Resend's "2026-04-03 22:13:42.674981+00" as well as ISO 8601. */
export function parseResendTime(value: string | undefined): Date | undefined {
  if (!value) return undefined;
  const normalised = value.replace(' ', 'T').replace(/([+-]\d\d)$/, '$1:00');
  const date = new Date(normalised);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function addressOf(value: string) {
  const match = /<([^>]+)>/.exec(value);
  return (match ? match[1]! : value).trim().toLowerCase();
}

export type ResendMapping = { kind: 'ignore'; reason: string } | { kind: 'no_email_id' } | { kind: 'record'; input: EmailEventInput; recipients: string[] };

/**
 * Maps a Resend webhook event onto the recording function's input
 * ("Provider-A delivery events"): the `email.` prefix is stripped; received,
 * contact.* and domain.* (and any other non-email type) are ignored; a
 * Permanent bounce suppresses as hard_bounce and a complaint as complaint,
 * only for single-recipient mail (the event covers the whole email);
 * Temporary / Undetermined bounces are recorded as bounced and alerted, not suppressed.
 */
export function mapResendWebhookEvent(event: ResendWebhookEvent): ResendMapping {
  if (!event.type.startsWith('email.')) return { kind: 'ignore', reason: 'not an email event' };
  const name = event.type.slice('email.'.length);
  if (!KNOWN.has(name)) return { kind: 'ignore', reason: `email.${name} is not a delivery event` };
  const data = event.data;
  if (!data.email_id) return { kind: 'no_email_id' };
  const recipients = (Array.isArray(data.to) ? data.to : data.to ? [data.to] : []).map(addressOf).filter(Boolean);
  const single = recipients.length === 1;
  let error: string | undefined;
  let suppress: EmailEventInput['suppress'];
  if (name === 'bounced') {
    error = [data.bounce?.type, data.bounce?.subType, data.bounce?.message].filter(Boolean).join(': ') || 'bounced';
    if (data.bounce?.type === 'Permanent' && single) suppress = { addresses: recipients, reason: 'hard_bounce' };
  } else if (name === 'complained') {
    error = 'complaint';
    if (single) suppress = { addresses: recipients, reason: 'complaint' };
  } else if (name === 'failed') {
    error = data.failed?.reason ?? 'failed';
  } else if (name === 'suppressed') {
    error = data.suppressed?.message ?? data.suppressed?.type ?? 'suppressed by provider';
  }
  const tags = Object.fromEntries(Object.entries(data.tags ?? {}).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  return {
    kind: 'record',
    recipients,
    input: {
      provider: 'provider_a',
      providerMessageId: data.email_id,
      event: resendStatusEvent(name),
      occurredAt: parseResendTime(event.created_at) ?? parseResendTime(data.created_at),
      raw: event,
      lastEvent: name,
      error,
      to: recipients,
      from: data.from,
      subject: data.subject,
      tags: Object.keys(tags).length ? tags : undefined,
      logId: tags.folio_log_id,
      suppress,
    },
  };
}
