import { z } from 'zod';
import { sql, type Database } from '../db/database.ts';
import type { Log } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import type { SendRequest, SendResult } from '../email/types.ts';
import { messengerConfigured, sendMessengerMessage, type MessengerConfig } from './messenger.ts';

const AlertType = z.enum(['email_delivery_failure']);

/** The body of POST /internal/email-alert and of the in-process call. */
export const AdminAlert = z.object({
  type: AlertType.default('email_delivery_failure'),
  subject: z.string().min(1).max(300),
  message: z.string().max(10_000).default(''),
  /** The recipients of the failed mail; when the alert inbox is among them, email is skipped (it would loop). */
  recipients: z.array(z.string()).max(100).default([]),
  sendId: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type AdminAlert = z.input<typeof AdminAlert>;

export type AlertDelivery =
  | { delivery: 'delivered'; channels: string[]; escalated?: 'messenger' }
  | { delivery: 'disabled' }
  | { delivery: 'unconfigured'; missing: string[]; escalated?: 'messenger' }
  | { delivery: 'failed'; errors: string[]; escalated?: 'messenger' };

export type AlertDeps = {
  db: Database;
  log: Log;
  metrics?: Metrics;
  alertEmail?: string;
  messenger: MessengerConfig;
  sendEmail: (request: SendRequest) => Promise<SendResult>;
};

const Settings = z.object({ enabled: z.boolean(), channels: z.array(z.string()), email_to: z.string().nullable() });

async function readSettings(db: Database, type: string) {
  const row = await db.maybeOne(sql.type(Settings)`select enabled, channels, email_to from admin_notification_settings where alert_type = ${type}`);
  return row ?? { enabled: true, channels: ['email', 'messenger'], email_to: null };
}

function messengerText(alert: z.output<typeof AdminAlert>) {
  return [
    `[${alert.type}] ${alert.subject}`,
    alert.message,
    alert.recipients.length ? `Recipients: ${alert.recipients.join(', ')}` : '',
    alert.sendId ? `Send log: ${alert.sendId}` : '',
  ]
    .filter(Boolean)
    .join('\n');
}

/**
 * Dispatches one admin alert over the channels its settings want.
 *
 * delivered: at least one wanted channel succeeded. disabled: the type is
 * muted. unconfigured: no wanted channel has its configuration, nothing was
 * attempted. failed: channels were attempted and none succeeded. When the
 * failing mail was addressed to the alert inbox itself, email is skipped (an
 * alert about the inbox would go to the inbox) and the messenger is used
 * directly, whatever the routing says; if that fails too a fatal line is logged.
 */
export async function dispatchAdminAlert(deps: AlertDeps, input: AdminAlert): Promise<AlertDelivery> {
  const alert = AdminAlert.parse(input);
  const settings = await readSettings(deps.db, alert.type);
  const result = await dispatch(deps, alert, settings);
  deps.metrics?.alerts.inc({ result: result.delivery });
  return result;
}

async function dispatch(deps: AlertDeps, alert: z.output<typeof AdminAlert>, settings: z.infer<typeof Settings>): Promise<AlertDelivery> {
  if (!settings.enabled) return { delivery: 'disabled' };
  const inbox = deps.alertEmail?.toLowerCase();
  const emailTo = settings.email_to ?? inbox;
  const recipients = alert.recipients.map((r) => r.trim().toLowerCase());

  if (inbox && recipients.includes(inbox)) {
    const context = { event: 'admin_alert_inbox_failing', type: alert.type, sendId: alert.sendId };
    if (!messengerConfigured(deps.messenger)) {
      deps.log.fatal(context, 'the alert inbox is failing and the messenger is not configured');
      return { delivery: 'unconfigured', missing: ['messenger'], escalated: 'messenger' };
    }
    const sent = await sendMessengerMessage(deps.messenger, `ALERT INBOX FAILING\n${messengerText(alert)}`);
    if (sent.ok) return { delivery: 'delivered', channels: ['messenger'], escalated: 'messenger' };
    deps.log.fatal({ ...context, error: sent.error }, 'the alert inbox is failing and the messenger failed');
    return { delivery: 'failed', errors: [sent.error], escalated: 'messenger' };
  }

  const wanted = settings.channels;
  const missing = wanted.filter((channel) => (channel === 'email' ? !emailTo : channel === 'messenger' ? !messengerConfigured(deps.messenger) : true));
  const usable = wanted.filter((channel) => !missing.includes(channel));
  if (usable.length === 0) {
    deps.log.error({ event: 'admin_alert_unconfigured', type: alert.type, missing }, 'no alert channel is configured');
    return { delivery: 'unconfigured', missing };
  }
  const outcomes = await Promise.all(
    usable.map(async (channel): Promise<{ channel: string; error?: string }> => {
      if (channel === 'email') {
        const sent = await deps.sendEmail({
          category: 'alert',
          to: emailTo!,
          subject: `[Folio alert] ${alert.subject}`,
          text: messengerText(alert),
          source: `alert:${alert.type}`,
        });
        return sent.ok ? { channel } : { channel, error: `email ${sent.status}: ${sent.error}` };
      }
      const sent = await sendMessengerMessage(deps.messenger, messengerText(alert));
      return sent.ok ? { channel } : { channel, error: sent.error };
    }),
  );
  const succeeded = outcomes.filter((o) => !o.error).map((o) => o.channel);
  if (succeeded.length > 0) return { delivery: 'delivered', channels: succeeded };
  const errors = outcomes.map((o) => o.error!);
  deps.log.error({ event: 'admin_alert_failed', type: alert.type, errors }, 'every alert channel failed');
  return { delivery: 'failed', errors };
}

/** The HTTP answer of POST /internal/email-alert for a dispatcher result ("Alert route responses"). */
export function alertResponse(result: AlertDelivery): { status: number; body: Record<string, unknown> } {
  const escalated = 'escalated' in result && result.escalated ? { escalated: result.escalated } : {};
  switch (result.delivery) {
    case 'delivered':
      return { status: 200, body: { success: true, delivery: 'delivered', ...escalated } };
    case 'disabled':
      return { status: 200, body: { success: true, delivery: 'disabled' } };
    case 'unconfigured':
      return {
        status: 503,
        body: { code: 'ALERT_CHANNEL_UNCONFIGURED', message: 'No alert channel is configured', success: false, delivery: 'unconfigured', ...escalated },
      };
    case 'failed':
      return { status: 502, body: { code: 'ALERT_DELIVERY_FAILED', message: 'Every alert channel failed', success: false, delivery: 'failed', ...escalated } };
  }
}
