import { z } from 'zod';
import type { EmailEvent, EmailEventInput } from './delivery-events.queries.ts';

const Recipient = z.object({ emailAddress: z.string() }).passthrough();

/** The SES event record inside an EventBridge envelope (the fields we read; the rest stays in raw). */
const SesEventDetail = z
  .object({
    eventType: z.string(),
    mail: z
      .object({
        timestamp: z.string().optional(),
        messageId: z.string(),
        source: z.string().optional(),
        destination: z.array(z.string()).default([]),
        commonHeaders: z.object({ subject: z.string().optional() }).passthrough().optional(),
        tags: z.record(z.string(), z.array(z.string())).default({}),
      })
      .passthrough(),
    bounce: z
      .object({
        bounceType: z.string(),
        bounceSubType: z.string().optional(),
        bouncedRecipients: z.array(Recipient).default([]),
        timestamp: z.string().optional(),
      })
      .passthrough()
      .optional(),
    complaint: z
      .object({ complainedRecipients: z.array(Recipient).default([]), complaintFeedbackType: z.string().optional(), timestamp: z.string().optional() })
      .passthrough()
      .optional(),
    delivery: z.object({ timestamp: z.string().optional() }).passthrough().optional(),
    deliveryDelay: z.object({ timestamp: z.string().optional(), delayType: z.string().optional() }).passthrough().optional(),
    reject: z.object({ reason: z.string().optional() }).passthrough().optional(),
    failure: z.object({ errorMessage: z.string().optional() }).passthrough().optional(),
    open: z.object({ timestamp: z.string().optional() }).passthrough().optional(),
    click: z.object({ timestamp: z.string().optional(), link: z.string().optional() }).passthrough().optional(),
  })
  .passthrough();

export const EventBridgeEnvelope = z
  .object({
    id: z.string().optional(),
    'detail-type': z.string().optional(),
    source: z.string().optional(),
    time: z.string().optional(),
    detail: SesEventDetail,
  })
  .passthrough();
export type EventBridgeEnvelope = z.infer<typeof EventBridgeEnvelope>;

export type SesMapping = { kind: 'ignore'; reason: string } | { kind: 'record'; input: EmailEventInput; outreach: boolean; recipients: string[] };

function time(...values: (string | undefined)[]) {
  for (const value of values) {
    if (!value) continue;
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date;
  }
  return undefined;
}

/**
 * Maps one SES event onto the recording function ("Provider-B delivery
 * events"): Send/Delivery/DeliveryDelay move the status; a Permanent bounce
 * is bounced and suppresses the bounced recipients; Transient/Undetermined is
 * bounce_transient (recorded, unranked, no alert); a complaint suppresses the
 * complainants; Reject and Rendering Failure are failed; Open/Click count only
 * for outreach mail. Outreach never alerts but still suppresses.
 */
export function mapSesEvent(envelope: EventBridgeEnvelope, outreachConfigurationSet: string): SesMapping {
  const detail = envelope.detail;
  const mail = detail.mail;
  const configurationSet = mail.tags['ses:configuration-set']?.[0];
  const outreach = configurationSet !== undefined && configurationSet === outreachConfigurationSet;
  let event: EmailEvent;
  let error: string | undefined;
  let suppress: EmailEventInput['suppress'];
  let at: Date | undefined;
  switch (detail.eventType) {
    case 'Send':
      event = 'sent';
      at = time(mail.timestamp);
      break;
    case 'Delivery':
      event = 'delivered';
      at = time(detail.delivery?.timestamp);
      break;
    case 'DeliveryDelay':
      event = 'delivery_delayed';
      at = time(detail.deliveryDelay?.timestamp);
      break;
    case 'Bounce': {
      const bounce = detail.bounce;
      at = time(bounce?.timestamp);
      if (bounce?.bounceType === 'Permanent') {
        event = 'bounced';
        error = ['Permanent', bounce.bounceSubType].filter(Boolean).join(': ');
        suppress = { addresses: bounce.bouncedRecipients.map((r) => r.emailAddress), reason: 'hard_bounce' };
      } else {
        event = 'bounce_transient';
      }
      break;
    }
    case 'Complaint':
      event = 'complained';
      at = time(detail.complaint?.timestamp);
      error = `complaint${detail.complaint?.complaintFeedbackType ? `: ${detail.complaint.complaintFeedbackType}` : ''}`;
      suppress = { addresses: (detail.complaint?.complainedRecipients ?? []).map((r) => r.emailAddress), reason: 'complaint' };
      break;
    case 'Reject':
      event = 'failed';
      error = `rejected: ${detail.reject?.reason ?? 'unknown'}`;
      break;
    case 'Rendering Failure':
      event = 'failed';
      error = `rendering failure: ${detail.failure?.errorMessage ?? 'unknown'}`;
      break;
    case 'Open':
    case 'Click':
      if (!outreach) return { kind: 'ignore', reason: `${detail.eventType} counts only for outreach mail` };
      event = detail.eventType === 'Open' ? 'opened' : 'clicked';
      at = time(detail.open?.timestamp, detail.click?.timestamp);
      break;
    default:
      return { kind: 'ignore', reason: `${detail.eventType} is not a delivery event` };
  }
  const tags = Object.fromEntries(Object.entries(mail.tags).flatMap(([name, values]) => (values[0] !== undefined ? [[name, values[0]]] : [])));
  const recipients = mail.destination.map((address) => address.trim().toLowerCase());
  return {
    kind: 'record',
    outreach,
    recipients,
    input: {
      provider: 'provider_b',
      providerMessageId: mail.messageId,
      event,
      occurredAt: at ?? time(envelope.time),
      raw: envelope,
      lastEvent: detail.eventType,
      error,
      to: recipients,
      from: mail.source,
      subject: mail.commonHeaders?.subject,
      configurationSet,
      tags,
      logId: tags.folio_log_id,
      suppress: suppress && suppress.addresses.length > 0 ? suppress : undefined,
      alert: !outreach,
    },
  };
}
