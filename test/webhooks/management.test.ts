import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { callJson, createTenant, createUser, startWebhookHarness } from './harness.ts';

const { app, receiver, dns } = await startWebhookHarness();
dns.set('hooks.customer.example', ['93.184.215.14']);
dns.set('intranet.customer.example', ['10.1.2.3']);

type Endpoint = {
  id: string;
  url: string;
  events: string[];
  enabled: boolean;
  secret?: string;
  tenantId: string | null;
  consecutiveFailures: number;
  rotatingUntil: string | null;
};

const alice = await createUser(app, 'alice@example.com');
const bob = await createUser(app, 'bob@example.com');
const tenantId = await createTenant(app, 'Acme');
const otherTenantId = await createTenant(app, 'Globex');
const acmeAdmin = await createUser(app, 'admin@acme.example', { id: tenantId, admin: true });
const acmeAdmin2 = await createUser(app, 'admin2@acme.example', { id: tenantId, admin: true });
const acmeMember = await createUser(app, 'member@acme.example', { id: tenantId });
const globexAdmin = await createUser(app, 'admin@globex.example', { id: otherTenantId, admin: true });

beforeEach(async () => {
  receiver.reset();
  await app.deps.db.query(sql.type(AnyRow)`delete from webhook_endpoints`);
  await app.deps.db.query(sql.type(AnyRow)`delete from rate_limit_hits`);
});

const create = (token: string, body: Record<string, unknown>) => callJson<Endpoint>(app, token, 'POST', '/api/webhooks', body);

describe('webhook management', () => {
  it('creates an endpoint and shows its secret once; lists, updates and deletes it', async () => {
    const created = await create(alice.token, { url: 'https://hooks.customer.example/folio', description: 'prod' });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      url: 'https://hooks.customer.example/folio',
      events: ['conversion.completed', 'conversion.failed'],
      enabled: true,
      tenantId: null,
      secret: expect.stringMatching(/^whsec_/),
    });
    const listed = await callJson<{ endpoints: Endpoint[] }>(app, alice.token, 'GET', '/api/webhooks');
    expect(listed.body.endpoints.map((endpoint) => endpoint.id)).toEqual([created.body.id]);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.secret);

    // at rest the secret is ciphertext only
    const stored = await app.deps.db.one(sql.type(z.object({ secret: z.string() }))`
      select secret_ciphertext as secret from webhook_endpoints where id = ${created.body.id}`);
    expect(stored.secret).not.toContain(created.body.secret!.slice(6));

    const updated = await callJson<Endpoint>(app, alice.token, 'PATCH', `/api/webhooks/${created.body.id}`, {
      events: ['conversion.failed'],
      description: null,
      enabled: false,
    });
    expect(updated.body).toMatchObject({ events: ['conversion.failed'], enabled: false, disabledReason: 'manual' });

    expect((await callJson(app, bob.token, 'GET', `/api/webhooks/${created.body.id}/deliveries`)).status).toBe(404);
    expect((await callJson(app, bob.token, 'DELETE', `/api/webhooks/${created.body.id}`)).status).toBe(404);
    expect((await callJson(app, alice.token, 'DELETE', `/api/webhooks/${created.body.id}`)).body).toEqual({ deleted: true, id: created.body.id });
    expect((await callJson<{ endpoints: Endpoint[] }>(app, alice.token, 'GET', '/api/webhooks')).body.endpoints).toEqual([]);
  });

  it('re-enabling resets the failure counter', async () => {
    const created = await create(alice.token, { url: 'https://hooks.customer.example/folio' });
    await app.deps.db.query(sql.type(AnyRow)`
      update webhook_endpoints set enabled = false, disabled_reason = 'consecutive_failures', disabled_at = now(), consecutive_failures = 10
       where id = ${created.body.id}`);
    const enabled = await callJson<Endpoint>(app, alice.token, 'PATCH', `/api/webhooks/${created.body.id}`, { enabled: true });
    expect(enabled.body).toMatchObject({ enabled: true, consecutiveFailures: 0, disabledReason: null, disabledAt: null });
  });

  it('rejects URLs that are not public HTTPS, at creation and on update, with the reason', async () => {
    for (const url of [
      'http://hooks.customer.example/x',
      'https://127.0.0.1.nip.io.localhost/',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::ffff:10.0.0.1]/',
      'https://intranet.customer.example/hook',
      'https://unknown-host.customer.example/hook',
      'https://user@hooks.customer.example/',
    ]) {
      const response = await create(alice.token, { url });
      expect(response.status, url).toBe(422);
      expect(response.body, url).toMatchObject({ code: 'WEBHOOK_URL_REJECTED', message: expect.stringMatching(/^Webhook URL rejected: /) });
    }
    const created = await create(alice.token, { url: 'https://hooks.customer.example/folio' });
    const moved = await callJson(app, alice.token, 'PATCH', `/api/webhooks/${created.body.id}`, { url: 'https://intranet.customer.example/hook' });
    expect(moved).toMatchObject({ status: 422, body: { code: 'WEBHOOK_URL_REJECTED' } });
    expect((await create(alice.token, { url: 'https://hooks.customer.example/x', events: ['conversion.started'] })).status).toBe(400);
  });

  it('bounds the endpoints a user may have', async () => {
    await app.deps.db.query(sql.type(AnyRow)`
      insert into webhook_endpoints (owner_id, url, events, secret_ciphertext)
      select ${alice.id}, 'https://hooks.customer.example/' || n, array['conversion.completed'], 'v1.x.y.z' from generate_series(1, 20) n`);
    expect(await create(alice.token, { url: 'https://hooks.customer.example/21' })).toMatchObject({
      status: 409,
      body: { code: 'TOO_MANY_WEBHOOK_ENDPOINTS' },
    });
    expect((await create(bob.token, { url: 'https://hooks.customer.example/1' })).status).toBe(200);
  });

  it('tenant endpoints are created and managed by that tenant’s admins only, and nobody else sees them', async () => {
    expect(await create(acmeMember.token, { url: 'https://hooks.customer.example/acme', tenantId })).toMatchObject({ status: 403 });
    expect(await create(globexAdmin.token, { url: 'https://hooks.customer.example/acme', tenantId })).toMatchObject({ status: 403 });
    const created = await create(acmeAdmin.token, { url: 'https://hooks.customer.example/acme', tenantId });
    expect(created.body).toMatchObject({ tenantId });
    const id = created.body.id;

    // another admin of the tenant manages it too
    expect((await callJson<{ endpoints: Endpoint[] }>(app, acmeAdmin2.token, 'GET', '/api/webhooks')).body.endpoints.map((e) => e.id)).toEqual([id]);
    expect((await callJson(app, acmeAdmin2.token, 'PATCH', `/api/webhooks/${id}`, { description: 'ops' })).status).toBe(200);
    for (const outsider of [acmeMember, globexAdmin, alice]) {
      expect((await callJson<{ endpoints: Endpoint[] }>(app, outsider.token, 'GET', '/api/webhooks')).body.endpoints).toEqual([]);
      for (const [method, route] of [
        ['PATCH', `/api/webhooks/${id}`],
        ['DELETE', `/api/webhooks/${id}`],
        ['POST', `/api/webhooks/${id}/rotate-secret`],
        ['GET', `/api/webhooks/${id}/deliveries`],
        ['POST', `/api/webhooks/${id}/test`],
      ] as const) {
        const response = await callJson(app, outsider.token, method, route, method === 'PATCH' ? { enabled: false } : undefined);
        expect(response.status, `${outsider.email} ${method} ${route}`).toBe(404);
      }
    }
    // the creator loses access when no longer a tenant admin
    await app.deps.db.query(sql.type(AnyRow)`update users set is_tenant_admin = false where id = ${acmeAdmin.id}`);
    expect((await callJson(app, acmeAdmin.token, 'DELETE', `/api/webhooks/${id}`)).status).toBe(404);
    await app.deps.db.query(sql.type(AnyRow)`update users set is_tenant_admin = true where id = ${acmeAdmin.id}`);
  });

  it('rotates the secret: a new one at once, the old one valid for an hour', async () => {
    const created = await create(alice.token, { url: 'https://hooks.customer.example/folio' });
    const rotated = await callJson<Endpoint>(app, alice.token, 'POST', `/api/webhooks/${created.body.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    const window = Date.parse(rotated.body.rotatingUntil!) - Date.now();
    expect(window).toBeGreaterThan(59 * 60 * 1000);
    expect(window).toBeLessThanOrEqual(60 * 60 * 1000);
  });

  it('test fires a signed ping, reports the answer and records it in the history', async () => {
    const created = await create(alice.token, { url: receiver.url('/ping') });
    receiver.setSecrets([created.body.secret!]);
    const tested = await callJson<{ delivered: boolean; httpStatus: number; deliveryId: string; responseBody: string }>(
      app,
      alice.token,
      'POST',
      `/api/webhooks/${created.body.id}/test`,
    );
    expect(tested.body).toMatchObject({ delivered: true, httpStatus: 200, responseBody: '{"received":true}', error: null });
    const [ping] = receiver.requests;
    expect(ping?.verification).toMatchObject({ ok: true, endpointId: created.body.id, payload: { event: 'ping', fileId: null, userId: alice.id } });
    expect(ping?.headers).toMatchObject({ 'content-type': 'application/json', 'x-webhook-id': created.body.id, 'x-webhook-event': 'ping' });

    receiver.next({ kind: 'status', status: 503, body: 'maintenance' });
    const failed = await callJson(app, alice.token, 'POST', `/api/webhooks/${created.body.id}/test`);
    expect(failed.body).toMatchObject({ delivered: false, httpStatus: 503, responseBody: 'maintenance', error: 'HTTP 503' });

    const history = await callJson<{ deliveries: Array<Record<string, unknown>> }>(app, alice.token, 'GET', `/api/webhooks/${created.body.id}/deliveries`);
    expect(history.body.deliveries).toMatchObject([
      { event: 'ping', status: 'failed', attempt: 1, httpStatus: 503, responseBody: 'maintenance', attempts: [{ attempt: 1, httpStatus: 503 }] },
      { id: tested.body.deliveryId, event: 'ping', status: 'delivered', attempt: 1, httpStatus: 200, latencyMs: expect.any(Number) },
    ]);
    // a failing test never counts toward disabling the endpoint
    expect((await callJson<{ endpoints: Endpoint[] }>(app, alice.token, 'GET', '/api/webhooks')).body.endpoints[0]).toMatchObject({ consecutiveFailures: 0 });
  });

  it('pages the delivery history newest first without skipping or repeating', async () => {
    const created = await create(alice.token, { url: 'https://hooks.customer.example/folio' });
    await app.deps.db.query(sql.type(AnyRow)`
      insert into webhook_deliveries (endpoint_id, event, body, status, created_at)
      select ${created.body.id}, 'ping', '{}', 'delivered', now() - make_interval(secs => n) from generate_series(1, 25) n`);
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=10&cursor=${cursor}` : '?limit=10';
      const page = await callJson<{ deliveries: Array<{ id: string; createdAt: string }>; nextCursor: string | null }>(
        app,
        alice.token,
        'GET',
        `/api/webhooks/${created.body.id}/deliveries${query}`,
      );
      expect(page.status).toBe(200);
      seen.push(...page.body.deliveries.map((delivery) => delivery.id));
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(25);
    expect((await callJson(app, alice.token, 'GET', `/api/webhooks/${created.body.id}/deliveries?cursor=garbage`)).status).toBe(400);
  });

  it('needs a Bearer token', async () => {
    expect((await fetch(`${app.baseUrl}/api/webhooks`)).status).toBe(401);
  });
});
