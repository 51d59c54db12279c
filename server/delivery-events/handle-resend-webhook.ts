import { raiseClaimedAlert, type RaiseAlertDeps } from '../alerts/raise-alert.ts';
import { DomainError } from '../errors.ts';
import { recordEmailEvent } from './delivery-events.queries.ts';
import { mapResendWebhookEvent, ResendWebhookEvent, type SvixHeaders, verifySvixSignature } from '../email/providers/resend.ts';

export type WebhookAnswer = { status: number; body: Record<string, unknown> };

/**
 * The provider-A webhook receiver. Anything not correctly signed is refused
 * with BAD_REQUEST (400) before a byte is recorded. A delivered or disabled alert (or none) is 200;
 * an unconfigured alert is 200 with the claim released (the next poll
 * re-alerts); a failed alert is 502 with the claim released, so Resend
 * redelivers and the redelivery alerts again.
 */
export async function handleResendWebhook(deps: RaiseAlertDeps & { now: Date }, headers: SvixHeaders, rawBody: Buffer): Promise<WebhookAnswer> {
  const verdict = verifySvixSignature(deps.config.email.providerA.webhookSecret, headers, rawBody, deps.now);
  if (!verdict.ok) {
    deps.log.warn({ event: 'resend_webhook_rejected', reason: verdict.reason }, 'provider-A webhook refused');
    throw new DomainError('BAD_REQUEST', verdict.reason === 'no_secret' ? 'Webhook secret not configured' : 'Invalid webhook signature');
  }
  let json: unknown;
  try {
    json = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new DomainError('BAD_REQUEST', 'Malformed JSON body');
  }
  const parsed = ResendWebhookEvent.safeParse(json);
  // Correctly signed but not an event we understand: a 4xx would only make
  // the provider redeliver the same bytes for days.
  if (!parsed.success) {
    deps.log.warn({ event: 'resend_webhook_unreadable', svixId: headers.id }, 'signed provider-A body is not an event');
    return { status: 200, body: { ok: true, warning: 'not an event' } };
  }
  const mapped = mapResendWebhookEvent(parsed.data);
  if (mapped.kind === 'ignore') return { status: 200, body: { ok: true, ignored: parsed.data.type } };
  if (mapped.kind === 'no_email_id') {
    deps.log.warn({ event: 'resend_webhook_no_email_id', type: parsed.data.type, svixId: headers.id }, 'signed provider-A event without an email id');
    return { status: 200, body: { ok: true, warning: 'no email id' } };
  }
  if (mapped.input.event === 'bounced' && !mapped.input.suppress) {
    deps.log.warn(
      {
        event: 'email_bounce_not_suppressed',
        providerMessageId: mapped.input.providerMessageId,
        reason: mapped.input.error,
        recipients: mapped.recipients.length,
      },
      'provider-A bounce recorded without suppression',
    );
  }
  const recorded = await recordEmailEvent(deps.db, mapped.input);
  deps.metrics?.emailEvents.inc({ provider: 'provider_a', event: mapped.input.event });
  if (!recorded.alert) return { status: 200, body: { ok: true, sendId: recorded.send_id, status: recorded.status } };
  const outcome = await raiseClaimedAlert(deps, recorded.send_id, {
    type: 'email_delivery_failure',
    subject: `Email ${recorded.status}: ${mapped.input.subject ?? '(no subject)'}`,
    message: `Provider A reported ${mapped.input.event} for ${mapped.recipients.join(', ') || 'unknown recipients'}${mapped.input.error ? ` (${mapped.input.error})` : ''}.`,
    recipients: mapped.recipients,
    details: { provider: 'provider_a', providerMessageId: mapped.input.providerMessageId, event: mapped.input.event },
  });
  const body = { ok: outcome !== 'failed', sendId: recorded.send_id, status: recorded.status, alert: outcome };
  return { status: outcome === 'failed' ? 502 : 200, body };
}
