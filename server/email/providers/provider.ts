import type { EmailTag, FailureKind, ProviderName } from '../types.ts';

/** The specification's per-attempt provider timeout. */
export const ATTEMPT_TIMEOUT_MS = 15_000;

/**
 * One message as both providers receive it. The library builds it once per
 * attempt from the request alone, so a deferred retry sends byte-identical
 * JSON (Resend rejects a reused Idempotency-Key with another body).
 */
export type OutboundMessage = {
  from: string;
  to: string[];
  cc: string[];
  bcc: string[];
  replyTo: string[];
  subject: string;
  html?: string;
  text?: string;
  /** Custom headers; carries X-Folio-Log-Id so delivery events can be correlated. */
  headers: Record<string, string>;
  /** Provider tags; carries folio_log_id. Names and values are [A-Za-z0-9_-]. */
  tags: EmailTag[];
  attachments: Array<{ filename: string; content: string; contentType?: string }>;
  /** Provider-B configuration set; provider A has none. */
  configurationSet?: string;
};

export type ProviderOutcome = { ok: true; messageId: string } | { ok: false; kind: FailureKind; error: string };

/** One module per provider owns its wire format and the classification of its failures; `send` never throws. */
export type EmailProvider = {
  readonly name: ProviderName;
  send(message: OutboundMessage, options: { idempotencyKey: string }): Promise<ProviderOutcome>;
};
