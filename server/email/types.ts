import { z } from 'zod';

/** `provider_a` is Resend (the default), `provider_b` is Amazon SES v2. */
export const ProviderName = z.enum(['provider_a', 'provider_b']);
export type ProviderName = z.infer<typeof ProviderName>;

export const EmailCategory = z.enum(['auth', 'transactional', 'notification', 'alert', 'marketing']);
export type EmailCategory = z.infer<typeof EmailCategory>;

/**
 * How one provider attempt failed: `rejected` (this message was refused; the
 * other provider would refuse it too), `unavailable` (definitely not accepted:
 * safe to fail over), `ambiguous` (may have been accepted: only a same-key
 * retry on the same provider is safe).
 */
export const FailureKind = z.enum(['rejected', 'unavailable', 'ambiguous']);
export type FailureKind = z.infer<typeof FailureKind>;

export const SuppressionReason = z.enum(['hard_bounce', 'complaint', 'manual']);
export type SuppressionReason = z.infer<typeof SuppressionReason>;

const AddressList = z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(50)]);

export const EmailTag = z.object({ name: z.string().min(1).max(256), value: z.string().max(256) });
export type EmailTag = z.infer<typeof EmailTag>;

/** `content` is base64 text or raw bytes; bytes are turned into base64 before anything leaves the process. */
export const EmailAttachment = z.object({
  filename: z.string().min(1).max(255),
  content: z.union([z.string(), z.instanceof(Uint8Array)]),
  contentType: z.string().max(255).optional(),
});

/** What a caller hands the library (specification: "Library send request and result"). */
export const SendRequest = z
  .object({
    /** Pin: only this provider, never a failover. Suppression, logging and deferral still apply. */
    provider: ProviderName.optional(),
    category: EmailCategory,
    source: z.string().max(200).optional(),
    tags: z.array(EmailTag).max(20).optional(),
    cloudConfigurationSet: z.string().min(1).max(64).optional(),
    /** Generated (the send-log id) when absent; reused by every deferred retry. */
    idempotencyKey: z.string().min(1).max(256).optional(),
    from: z.string().min(3).max(320).optional(),
    to: AddressList,
    cc: AddressList.optional(),
    bcc: AddressList.optional(),
    replyTo: AddressList.optional(),
    subject: z.string().min(1).max(998),
    html: z.string().optional(),
    text: z.string().optional(),
    attachments: z.array(EmailAttachment).max(20).optional(),
    /** Extra headers (List-Unsubscribe for outreach); a value with a line break would inject headers, so none has one. */
    headers: z
      .record(
        z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,63}$/),
        z
          .string()
          .max(2000)
          .regex(/^[^\r\n]*$/),
      )
      .refine((headers) => Object.keys(headers).length <= 10, 'at most 10 headers')
      .optional(),
  })
  .refine((request) => request.html !== undefined || request.text !== undefined, { message: 'html or text is required', path: ['html'] });
export type SendRequest = z.input<typeof SendRequest>;
export type ParsedSendRequest = z.output<typeof SendRequest>;

/**
 * The library's answer; a send never throws. `ok` means a provider has the
 * message (or will get it from a same-key retry): callers must never tell a
 * user "sent" unless `ok` is true. `id` is the send-log row when one was written.
 */
export type SendResult =
  | { status: 'sent'; ok: true; id?: string; provider: ProviderName; providerMessageId: string; failedOver: boolean; suppressedRecipients?: string[] }
  | { status: 'deferred'; ok: true; id?: string; provider: ProviderName; failedOver: boolean; suppressedRecipients?: string[] }
  | { status: 'suppressed'; ok: false; error: string; id?: string; provider?: undefined; suppressedRecipients: string[] }
  | { status: 'failed'; ok: false; error: string; errorKind: FailureKind; id?: string; provider?: ProviderName; failedOver: boolean };

export type SendStatus = SendResult['status'];
