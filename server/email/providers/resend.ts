import { Resend, type CreateEmailOptions, type ErrorResponse } from 'resend';
import type { FailureKind } from '../types.ts';
import type { EmailProvider } from './provider.ts';

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
export function classifyResendError(error: Pick<ErrorResponse, 'statusCode' | 'name'>): FailureKind {
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
