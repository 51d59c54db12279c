import { z } from 'zod';
import { DomainError } from '../errors.ts';
import type { EmailService } from './email-service.ts';
import { EmailCategory, EmailTag, ProviderName } from './types.ts';

const Addresses = z.union([z.string().min(3).max(320), z.array(z.string().min(3).max(320)).min(1).max(50)]);

/** Body of POST /api/send-email and /internal/send-email (issue 5, "Interface details"). */
export const RelayRequest = z
  .object({
    to: Addresses,
    subject: z.string().min(1).max(998),
    html: z.string().optional(),
    text: z.string().optional(),
    from: z.string().min(3).max(320).optional(),
    replyTo: Addresses.optional(),
    category: EmailCategory,
    source: z.string().max(200).optional(),
    tags: z.array(EmailTag).max(20).optional(),
    provider: ProviderName.optional(),
    idempotencyKey: z.string().min(1).max(256).optional(),
    cloudConfigurationSet: z.string().min(1).max(64).optional(),
  })
  .refine((body) => body.html !== undefined || body.text !== undefined, { message: 'html or text is required', path: ['html'] });
export type RelayRequest = z.infer<typeof RelayRequest>;

export const RelayResponse = z.object({
  status: z.enum(['sent', 'deferred', 'suppressed', 'failed']),
  ok: z.boolean(),
  error: z.string().optional(),
  id: z.uuid().optional(),
  provider: ProviderName.optional(),
});
export type RelayResponse = z.infer<typeof RelayResponse>;

/**
 * Sends a relayed request through the library. Every To suppressed is 422
 * EMAIL_SUPPRESSED (the caller must not retry), a failed send is 500
 * EMAIL_FAILED; `sent` and `deferred` answer 200 with the result.
 */
export async function relaySendEmail(email: EmailService, input: RelayRequest): Promise<RelayResponse> {
  const result = await email.send(input);
  if (result.status === 'suppressed') throw new DomainError('EMAIL_SUPPRESSED', result.error, { context: { status: result.status, ok: false, id: result.id } });
  if (result.status === 'failed')
    throw new DomainError('EMAIL_FAILED', result.error, { context: { status: result.status, ok: false, errorKind: result.errorKind, id: result.id } });
  return { status: result.status, ok: result.ok, id: result.id, provider: result.provider };
}
