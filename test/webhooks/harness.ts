import { afterAll } from 'vitest';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { startDnsFake, type DnsFake } from '../fakes/dns.ts';
import { startResendFake, type ResendFake } from '../fakes/resend.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../fakes/webhook-receiver.ts';
import type { Clock } from '../../server/deps.ts';

const RESEND_KEY = 're_webhooks';

export type WebhookHarness = { app: TestApp; receiver: WebhookReceiver; dns: DnsFake; resend: ResendFake };

/**
 * The real app over its own database, a loopback HTTPS receiver (allowed by
 * the test-only switch unless `allowLoopback: false`), a DNS server the test
 * controls, and a Resend fake for the owner emails.
 */
export async function startWebhookHarness(
  options: { allowLoopback?: boolean; clock?: Clock; env?: Record<string, string>; workers?: boolean } = {},
): Promise<WebhookHarness> {
  const dns = await startDnsFake();
  const resend = await startResendFake({ apiKey: RESEND_KEY });
  const receiver = await startWebhookReceiver();
  const app = await startTestApp({
    clock: options.clock,
    workers: options.workers,
    env: {
      WEBHOOK_DNS_SERVERS: dns.server,
      WEBHOOK_TEST_ALLOW_LOOPBACK: options.allowLoopback === false ? undefined : 'true',
      PROVIDER_A_API_KEY: RESEND_KEY,
      PROVIDER_A_BASE_URL: resend.url,
      PUBLIC_BASE_URL: 'https://folio.example.com',
      ...options.env,
    },
  });
  afterAll(async () => {
    await receiver.close();
    await resend.close();
    await dns.close();
  });
  return { app, receiver, dns, resend };
}

function call(app: TestApp, token: string, method: string, route: string, body?: unknown) {
  return fetch(`${app.baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

export async function callJson<T = Record<string, unknown>>(app: TestApp, token: string, method: string, route: string, body?: unknown) {
  const response = await call(app, token, method, route, body);
  return { status: response.status, headers: response.headers, body: (await response.json()) as T };
}

export type TestUser = { id: string; email: string; token: string };

/** A signed-in user (created through the API), optionally in a tenant and its admin. */
export async function createUser(app: TestApp, email: string, tenant?: { id: string; admin?: boolean }): Promise<TestUser> {
  const token = await app.token(email);
  const me = await callJson<{ id: string }>(app, token, 'GET', '/api/me');
  if (tenant) {
    await app.deps.db.query(sql.type(AnyRow)`
      update users set tenant_id = ${tenant.id}, is_tenant_admin = ${tenant.admin ?? false} where id = ${me.body.id}`);
  }
  return { id: me.body.id, email, token };
}

export async function createTenant(app: TestApp, name: string): Promise<string> {
  return app.deps.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`insert into tenants (name) values (${name}) returning id`);
}

/** A file row of this user, as an upload leaves it. */
export async function createFile(app: TestApp, ownerId: string, name = 'report.pdf'): Promise<string> {
  return app.deps.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into files (owner_id, original_name, content_type, size_bytes, page_count, status)
    values (${ownerId}, ${name}, 'application/pdf', 1000, 3, 'completed') returning id`);
}

/** What the conversion paths commit to the outbox when a conversion ends. */
export async function emitConversionEvent(
  app: TestApp,
  fileId: string,
  type: 'conversion.completed' | 'conversion.failed' = 'conversion.completed',
  payload: Record<string, unknown> = {},
): Promise<number> {
  const body =
    type === 'conversion.completed'
      ? { fileId, jobId: null, pages: 3, credits: 3, wcagStatus: 'passed', backend: 'chunked-vision', ...payload }
      : { fileId, jobId: null, code: 'PDF_MALFORMED', message: 'The PDF is damaged', ...payload };
  return app.deps.db.oneFirst(sql.type(z.object({ id: z.coerce.number() }))`
    insert into outbox_events (type, aggregate_id, payload) values (${type}, ${fileId}, ${sql.jsonb(body as never)}) returning id`);
}

const DeliveryRow = z.object({
  id: z.uuid(),
  endpointId: z.uuid(),
  eventId: z.coerce.number().nullable(),
  status: z.string(),
  attempts: z.number(),
  lastError: z.string().nullable(),
  lastHttpStatus: z.number().nullable(),
  lastResponseBody: z.string().nullable(),
  body: z.string(),
});

export function deliveries(app: TestApp, endpointId?: string) {
  return app.deps.db.any(sql.type(DeliveryRow)`
    select id, endpoint_id as "endpointId", event_id as "eventId", status, attempts, last_error as "lastError",
           last_http_status as "lastHttpStatus", last_response_body as "lastResponseBody", body
      from webhook_deliveries ${endpointId ? sql.fragment`where endpoint_id = ${endpointId}` : sql.fragment``}
     order by created_at, event_id, id`);
}

/** Queued attempt jobs of a delivery, with how long after their creation they may start. */
export function queuedAttempts(app: TestApp, deliveryId: string) {
  return app.deps.db.any(sql.type(z.object({ attempt: z.number(), delaySeconds: z.number(), state: z.string() }))`
    select (data->>'attempt')::int as attempt, round(extract(epoch from (start_after - created_on)))::int as "delaySeconds", state::text as state
      from pgboss.job where name = 'webhooks.deliver' and data->'deliveryIds' ? ${deliveryId}
     order by (data->>'attempt')::int`);
}
