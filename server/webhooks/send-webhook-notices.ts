import { z } from 'zod';
import { AnyRow, sql } from '../db/database.ts';
import { derivedUuid } from '../email/email.jobs.ts';
import type { EmailService } from '../email/email-service.ts';
import { escapeHtml } from '../sharing/html.ts';
import type { WebhookDeps } from './webhook-runtime.ts';
import type { NoticeJob } from './webhooks.jobs.ts';

export type NoticeDeps = Pick<WebhookDeps, 'db' | 'log' | 'policy'> & { email: Pick<EmailService, 'send'> };

const Owner = z.object({ url: z.string(), email: z.string() });

/**
 * Tells an endpoint's owner it was disabled (10 deliveries in a row failed
 * after every retry, or the receiver answered 410 Gone), once per disable:
 * the notice is claimed on the endpoint first (like the send log's alert
 * claim), so a job received twice mails once; a send that fails releases
 * the claim and throws, and the queue retries it. An endpoint re-enabled
 * meanwhile gets no notice.
 */
export async function sendDisabledNotice(deps: NoticeDeps, job: NoticeJob, jobId: string): Promise<void> {
  const owner = await deps.db.maybeOne(sql.type(Owner)`
    update webhook_endpoints e set disabled_notified_at = now()
      from users u
     where e.id = ${job.endpointId} and u.id = e.owner_id and not e.enabled and e.disabled_notified_at is null
       and date_trunc('milliseconds', e.disabled_at) = ${job.disabledAt}::timestamptz
    returning e.url, u.email`);
  if (!owner) return;
  const why =
    job.reason === 'gone'
      ? 'its receiver answered 410 Gone, which means it no longer wants deliveries'
      : `${deps.policy.disableAfterFailures} deliveries in a row failed after every retry`;
  const text = [
    `Your Folio webhook endpoint ${owner.url} has been disabled: ${why}.`,
    '',
    'No further events are sent to it. Once the receiver works again, re-enable it in your webhook settings',
    '(PATCH /api/webhooks/:id with {"enabled": true}); that also resets its failure count.',
    'The delivery history (GET /api/webhooks/:id/deliveries) shows what the receiver answered.',
  ].join('\n');
  const result = await deps.email.send({
    category: 'notification',
    source: 'webhooks:disabled',
    to: owner.email,
    subject: 'Your Folio webhook endpoint was disabled',
    text,
    html: `<p>${escapeHtml(text).replaceAll('\n\n', '</p><p>').replaceAll('\n', '<br>')}</p>`,
    idempotencyKey: jobId,
  });
  if (!result.ok && result.status === 'failed') {
    await deps.db.query(sql.type(AnyRow)`update webhook_endpoints set disabled_notified_at = null where id = ${job.endpointId}`);
    throw new Error(`webhook disabled notice not sent: ${result.error}`);
  }
}

const Drop = z.object({ id: z.uuid(), body: z.string(), eventId: z.coerce.number().nullable() });

/** Drops listed in one email; the rest go in the next one a minute later. */
const DROPS_PER_EMAIL = 200;

/** What a dropped delivery was about, and where its result is. */
function describeDrop(body: string): string {
  try {
    const payload = JSON.parse(body) as {
      event?: string;
      fileId?: string;
      data?: { originalName?: string; zipUrl?: string; zipExpiresAt?: string; error?: { code?: string } };
    };
    const name = payload.data?.originalName || payload.fileId || 'a file';
    if (payload.event === 'conversion.completed') return `${name}: ${payload.data?.zipUrl} (link valid until ${payload.data?.zipExpiresAt})`;
    return `${name}: the conversion failed (${payload.data?.error?.code ?? 'error'})`;
  } catch {
    return 'an event whose body could not be read';
  }
}

/**
 * Emails each endpoint's owner the deliveries dropped because its overflow
 * queue was full, with the download links those deliveries carried. A drop
 * stays marked only when the email went out (or the address is suppressed,
 * which no retry would change); otherwise the next minute's drain tries
 * again, so no drop goes unreported. Returns how many drops were reported.
 */
export async function sendDropNotices(deps: NoticeDeps): Promise<number> {
  const endpoints = await deps.db.any(sql.type(z.object({ endpointId: z.uuid() }))`
    select distinct endpoint_id as "endpointId" from webhook_deliveries where status = 'dropped' and drop_notified_at is null`);
  let reported = 0;
  for (const { endpointId } of endpoints) {
    const owner = await deps.db.maybeOne(sql.type(Owner)`
      select e.url, u.email from webhook_endpoints e join users u on u.id = e.owner_id where e.id = ${endpointId}`);
    if (!owner) continue;
    // Claimed before the send, released if it fails: two drains never list a drop twice.
    const drops = await deps.db.any(sql.type(Drop)`
      update webhook_deliveries set drop_notified_at = now(), updated_at = now()
       where id in (select id from webhook_deliveries
                     where endpoint_id = ${endpointId} and status = 'dropped' and drop_notified_at is null
                     order by created_at, event_id, id limit ${DROPS_PER_EMAIL} for update skip locked)
      returning id, body, event_id as "eventId"`);
    if (drops.length === 0) continue;
    const lines = [...drops].sort((a, b) => (a.eventId ?? 0) - (b.eventId ?? 0)).map((drop) => `- ${describeDrop(drop.body)}`);
    const text = [
      `Folio could not deliver ${drops.length} webhook event${drops.length === 1 ? '' : 's'} to ${owner.url}:`,
      `the endpoint was over its rate limit and its overflow queue already held ${deps.policy.overflowCap} waiting deliveries.`,
      '',
      'Your conversions are not affected. Their results:',
      ...lines,
    ].join('\n');
    const result = await deps.email.send({
      category: 'notification',
      source: 'webhooks:dropped',
      to: owner.email,
      subject: `${drops.length} webhook event${drops.length === 1 ? ' was' : 's were'} dropped`,
      text,
      html: `<p>${escapeHtml(text).replaceAll('\n', '<br>')}</p>`,
      idempotencyKey: derivedUuid(`webhook-drops:${endpointId}:${drops.map((drop) => drop.id).join(',')}`),
    });
    if (!result.ok && result.status === 'failed') {
      deps.log.warn({ endpointId, error: result.error }, 'webhook drop notice not sent; trying again next minute');
      await deps.db.query(sql.type(AnyRow)`
        update webhook_deliveries set drop_notified_at = null where id = any(${sql.array(
          drops.map((drop) => drop.id),
          'uuid',
        )})`);
      continue;
    }
    reported += drops.length;
  }
  return reported;
}
