import type { Config } from '../config.ts';
import { ATTEMPT_TIMEOUT_MS, type ProviderOutcome } from '../email/providers/provider.ts';
import { createResendProvider } from '../email/providers/resend.ts';

/**
 * The out-of-band senders' one way out (specification: "Out-of-band senders"):
 * provider A called directly, with no database, no send log, no suppression
 * check and no failover, so budget alerts, cost monitors and fatal-log mail
 * still leave when the API or the database is down. Their mail reaches the
 * send log only through provider A's delivery events, as category `unknown`
 * (it carries no folio_log_id for the events to match).
 */
export type OutOfBandMail = {
  /** Which sender it is; becomes the `oob` provider tag. [A-Za-z0-9_-] only. */
  source: string;
  subject: string;
  text: string;
  /** Provider A's Idempotency-Key: the same key within 24 hours delivers once, whichever process sends it. */
  key: string;
};

export type OutOfBandOutcome = ProviderOutcome | { ok: false; kind: 'unconfigured'; error: string };

export type OutOfBandSender = { send: (mail: OutOfBandMail) => Promise<OutOfBandOutcome> };

export type OutOfBandSettings = { apiKey?: string; baseUrl: string; from: string; to?: string; timeoutMs?: number };

export function outOfBandSettings(config: Pick<Config, 'email' | 'alerts'>): OutOfBandSettings {
  return { apiKey: config.email.providerA.apiKey, baseUrl: config.email.providerA.baseUrl, from: config.email.defaultFrom, to: config.alerts.alertEmail };
}

/** Never throws: without ALERT_EMAIL or PROVIDER_A_API_KEY every send answers `unconfigured`. */
export function createOutOfBandSender(settings: OutOfBandSettings): OutOfBandSender {
  const provider = createResendProvider({ apiKey: settings.apiKey, baseUrl: settings.baseUrl, timeoutMs: settings.timeoutMs ?? ATTEMPT_TIMEOUT_MS });
  return {
    async send(mail) {
      if (!settings.to) return { ok: false, kind: 'unconfigured', error: 'ALERT_EMAIL is not set' };
      if (!settings.apiKey) return { ok: false, kind: 'unconfigured', error: 'PROVIDER_A_API_KEY is not set' };
      return provider.send(
        {
          from: settings.from,
          to: [settings.to],
          cc: [],
          bcc: [],
          replyTo: [],
          subject: mail.subject.slice(0, 250),
          text: mail.text,
          headers: {},
          tags: [{ name: 'oob', value: mail.source.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64) }],
          attachments: [],
        },
        { idempotencyKey: mail.key.slice(0, 256) },
      );
    },
  };
}
