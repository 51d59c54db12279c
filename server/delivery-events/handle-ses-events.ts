import { z } from 'zod';
import { raiseClaimedAlert, type RaiseAlertDeps } from '../alerts/raise-alert.ts';
import { DomainError } from '../errors.ts';
import { recordEmailEvent } from './delivery-events.queries.ts';
import { recordOutreachEvent } from './outreach.queries.ts';
import { EventBridgeEnvelope, mapSesEvent } from './ses-events.ts';

const Body = z.union([EventBridgeEnvelope, z.array(EventBridgeEnvelope).max(100)]);

export type SesEventsResult = { recorded: number; ignored: number; alerts: number };

/**
 * Records provider-B events delivered by the event bus (one EventBridge
 * envelope, or an array of them). A recording failure throws, so the route
 * answers 500 and the bus retries; the recording function is idempotent for a
 * replayed event (same status, claim already taken). Failures alert in process;
 * a claim whose alert did not go out is released.
 */
export async function handleSesEvents(deps: RaiseAlertDeps & { now: Date }, body: unknown): Promise<SesEventsResult> {
  const parsed = Body.safeParse(body);
  if (!parsed.success) throw new DomainError('VALIDATION_FAILED', 'Not an EventBridge SES event');
  const envelopes = Array.isArray(parsed.data) ? parsed.data : [parsed.data];
  const outreachSet = deps.config.email.providerB.outreachConfigurationSet;
  const result: SesEventsResult = { recorded: 0, ignored: 0, alerts: 0 };
  for (const envelope of envelopes) {
    const mapped = mapSesEvent(envelope, outreachSet);
    if (mapped.kind === 'ignore') {
      result.ignored++;
      continue;
    }
    const recorded = await recordEmailEvent(deps.db, mapped.input);
    result.recorded++;
    deps.metrics?.emailEvents.inc({ provider: 'provider_b', event: mapped.input.event });
    if (mapped.outreach) {
      await recordOutreachEvent(deps.db, {
        providerMessageId: mapped.input.providerMessageId,
        event: mapped.input.event,
        at: mapped.input.occurredAt ?? deps.now,
        recipients: mapped.recipients,
        campaign: mapped.input.tags?.campaign,
        suppressed: mapped.input.suppress?.addresses.map((a) => a.trim().toLowerCase()) ?? [],
      });
    }
    if (recorded.alert) {
      result.alerts++;
      await raiseClaimedAlert(deps, recorded.send_id, {
        type: 'email_delivery_failure',
        subject: `Email ${recorded.status}: ${mapped.input.subject ?? '(no subject)'}`,
        message: `Provider B reported ${envelope.detail.eventType} for ${mapped.recipients.join(', ') || 'unknown recipients'}${mapped.input.error ? ` (${mapped.input.error})` : ''}.`,
        recipients: mapped.recipients,
        details: { provider: 'provider_b', providerMessageId: mapped.input.providerMessageId, event: mapped.input.event },
      });
    }
  }
  return result;
}
