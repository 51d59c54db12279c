import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Resend, type CreateEmailOptions, type ErrorResponse } from 'resend';
import { z } from 'zod';
import { EmailEvent, type EmailEventInput } from '../../delivery-events/delivery-events.queries.ts';
import type { FailureKind } from '../types.ts';
import type { EmailProvider } from './provider.ts';

/**
 * Provider A (Resend) on the wire, in one place: the send call and its error
 * table, the sent-email list the events poller reads, the webhook payload and
 * its Svix signature, and the event names.
 */

/**
 * Error names that say Resend definitely did not take the message and the
 * other provider may: rate limit, quotas, and every "this API key cannot send"
 * answer (missing, invalid, restricted, suspended, unscoped).
 */
const UNAVAILABLE_NAMES = new Set([
  'rate_limit_exceeded',
  'daily_quota_exceeded',
  'monthly_quota_exceeded',
  'missing_api_key',
  'invalid_api_key',
  'restricted_api_key',
  'suspended_api_key',
  'invalid_access',
  'invalid_permission',
  'service_unavailable',
]);

/**
 * Resend failure → kind (specification: "Provider failure kinds").
 * - `statusCode: null` is every fetch-level failure, including our own
 *   15 s abort: the request may have been written, so ambiguous.
 * - 503 (Resend's own JSON answer), 429, quota, bad key → unavailable.
 * - 500, 502, 504, any other 5xx (the SDK reports a non-JSON 5xx body as
 *   `application_error` with the real status) → ambiguous.
 * - 409 `concurrent_idempotent_requests` → ambiguous: another request with our
 *   key is still in flight and may deliver; a same-key retry later gets its answer.
 * - other 4xx (validation, unverified From domain, reused key with another body) → rejected.
 */
function classifyResendError(error: Pick<ErrorResponse, 'statusCode' | 'name'>): FailureKind {
  const status = error.statusCode;
  if (status === null || status === undefined) return 'ambiguous';
  if (error.name === 'concurrent_idempotent_requests') return 'ambiguous';
  if (UNAVAILABLE_NAMES.has(error.name) || String(error.name).includes('quota')) return 'unavailable';
  if (status === 429 || status === 401) return 'unavailable';
  // The SDK names every non-JSON error body `application_error`; a 503 page from
  // something in front of Resend is "a 5xx with a non-JSON body": ambiguous.
  if (status === 503 && error.name !== 'application_error') return 'unavailable';
  if (status >= 500) return 'ambiguous';
  if (status >= 400) return 'rejected';
  return 'ambiguous';
}

export type ResendSettings = { apiKey?: string; baseUrl: string; timeoutMs: number };

/** Provider A through the `resend` SDK, which never throws and has no timeout of its own: we pass an AbortSignal. */
export function createResendProvider(settings: ResendSettings): EmailProvider {
  const client = settings.apiKey ? new Resend(settings.apiKey, { baseUrl: settings.baseUrl }) : undefined;
  return {
    name: 'provider_a',
    async send(message, { idempotencyKey }) {
      if (!client) return { ok: false, kind: 'unavailable', error: 'provider_a: PROVIDER_A_API_KEY is not set' };
      // Field order is fixed here so a same-key retry sends the identical body.
      const payload = {
        from: message.from,
        to: message.to,
        ...(message.cc.length > 0 ? { cc: message.cc } : {}),
        ...(message.bcc.length > 0 ? { bcc: message.bcc } : {}),
        ...(message.replyTo.length > 0 ? { replyTo: message.replyTo } : {}),
        subject: message.subject,
        ...(message.html !== undefined ? { html: message.html } : {}),
        ...(message.text !== undefined ? { text: message.text } : {}),
        headers: message.headers,
        tags: message.tags,
        ...(message.attachments.length > 0
          ? { attachments: message.attachments.map((file) => ({ filename: file.filename, content: file.content, contentType: file.contentType })) }
          : {}),
      } as CreateEmailOptions;
      try {
        const { data, error } = await client.emails.send(payload, { idempotencyKey, signal: AbortSignal.timeout(settings.timeoutMs) });
        if (error) {
          return { ok: false, kind: classifyResendError(error), error: `provider_a ${error.name} (${error.statusCode ?? 'no response'}): ${error.message}` };
        }
        if (data?.id) return { ok: true, messageId: data.id };
        return { ok: false, kind: 'ambiguous', error: 'provider_a: answer without an email id' };
      } catch (error) {
        // The SDK resolves on every HTTP and network failure; this is a bug or an abort escaping it.
        return { ok: false, kind: 'ambiguous', error: `provider_a: ${(error as Error).message}` };
      }
    },
  };
}

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

/** Resend's delivery event names (webhook `email.<name>`, the list's `last_event`): ours, which are Resend's plus SES's transient bounce. */
export const RESEND_EMAIL_EVENTS: ReadonlySet<string> = new Set<string>(EmailEvent.options.filter((name) => name !== 'bounce_transient'));

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
  if (!RESEND_EMAIL_EVENTS.has(name)) return { kind: 'ignore', reason: `email.${name} is not a delivery event` };
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

/** Svix / Standard Webhooks: the official libraries hard-code five minutes either way. */
const SVIX_TOLERANCE_SECONDS = 5 * 60;

export type SvixHeaders = { id?: string; timestamp?: string; signature?: string };
export type SvixVerdict = { ok: true } | { ok: false; reason: 'missing_header' | 'bad_timestamp' | 'timestamp_out_of_range' | 'bad_signature' | 'no_secret' };

/**
 * Verifies a Svix-signed body (Resend's webhooks): HMAC-SHA256 keyed with the
 * base64-decoded part of `whsec_...` over `${id}.${timestamp}.${rawBody}`,
 * base64; the header lists `v1,<sig>` entries separated by spaces (several
 * during a secret rotation) and any one matching suffices. The raw bytes are
 * signed, so this must see the body before any JSON parsing.
 */
export function verifySvixSignature(secret: string | undefined, headers: SvixHeaders, rawBody: Buffer, now: Date): SvixVerdict {
  if (!secret) return { ok: false, reason: 'no_secret' };
  const { id, timestamp, signature } = headers;
  if (!id || !timestamp || !signature) return { ok: false, reason: 'missing_header' };
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'bad_timestamp' };
  if (Math.abs(Math.floor(now.getTime() / 1000) - Number(timestamp)) > SVIX_TOLERANCE_SECONDS) return { ok: false, reason: 'timestamp_out_of_range' };
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(rawBody).digest();
  for (const entry of signature.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const given = Buffer.from(value, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return { ok: true };
  }
  return { ok: false, reason: 'bad_signature' };
}

/** The Svix headers of a provider-A webhook request. */
export function resendSignatureHeaders(headers: IncomingHttpHeaders): SvixHeaders {
  const one = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined);
  return { id: one(headers['svix-id']), timestamp: one(headers['svix-timestamp']), signature: one(headers['svix-signature']) };
}

/** One page of the sent-email list, newest first, after the email `after` (excluded). */
export async function listResendEmails(settings: { apiKey: string; baseUrl: string }, page: { limit: number; after?: string }) {
  const client = new Resend(settings.apiKey, { baseUrl: settings.baseUrl });
  return client.emails.list(page.after ? { limit: page.limit, after: page.after } : { limit: page.limit });
}
