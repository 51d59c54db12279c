import { beforeEach, describe, expect, it } from 'vitest';
import { registerWebhookJobs } from '../../jobs/webhooks/webhooks.worker.ts';
import { AnyRow, sql } from '../../server/db/database.ts';
import { dispatchOutboxEvents } from '../../server/webhooks/dispatch-outbox-events.ts';
import { drainWebhookOverflow } from '../../server/webhooks/drain-webhook-overflow.ts';
import { sendDropNotices } from '../../server/webhooks/send-webhook-notices.ts';
import { webhookDeps } from '../../server/webhooks/webhook-runtime.ts';
import { DRAIN_QUEUE } from '../../server/webhooks/webhooks.jobs.ts';

import { createTestClock } from '../helpers/app.ts';
import { callJson, createFile, createTenant, createUser, deliveries, emitConversionEvent, startWebhookHarness } from './harness.ts';
import { until } from '../helpers/wait.ts';

/**
 * Hourly limits (small here so a test can reach them), the overflow queue,
 * its minute drain, and the email that reports drops. The delivery worker
 * runs; the test dispatches and drains by hand, moving the clock.
 */
const clock = createTestClock();
const { app, receiver, resend } = await startWebhookHarness({ clock, workers: true });
const HOUR = 60 * 60 * 1000;
const policy = { limits: { endpointPerHour: 2, userPerHour: Infinity, tenantPerHour: Infinity }, overflowCap: 3 };
const workers = await registerWebhookJobs(app.deps, { dispatcher: false, overrides: { policy } });
const deps = workers.deps;
const noticeDeps = { ...deps, email: app.deps.email };

const owner = await createUser(app, 'owner@example.com');
type Created = { id: string; secret: string };
const createEndpoint = async (token: string, body: Record<string, unknown>) => (await callJson<Created>(app, token, 'POST', '/api/webhooks', body)).body;

async function emit(userId: string, count: number, name = 'doc') {
  for (let index = 0; index < count; index++) await emitConversionEvent(app, await createFile(app, userId, `${name}-${index + 1}.pdf`));
  await dispatchOutboxEvents(deps);
}

const statuses = async (endpointId: string) => (await deliveries(app, endpointId)).map((row) => row.status);
const names = (rows: Array<{ body: string }>) => rows.map((row) => JSON.parse(row.body).data.originalName as string);

beforeEach(async () => {
  receiver.reset();
  resend.reset();
  clock.advance(2 * HOUR);
  await app.deps.db.query(sql.type(AnyRow)`delete from webhook_endpoints`);
});

describe('rate limits and the overflow queue', () => {
  it('holds deliveries over the endpoint limit in overflow, in order, and the drain sends them when the window frees', async () => {
    const endpoint = await createEndpoint(owner.token, { url: receiver.url('/limited') });
    await emit(owner.id, 3);
    expect((await statuses(endpoint.id))[2]).toBe('overflow');
    await until(
      () => statuses(endpoint.id),
      (list) => list.join() === 'delivered,delivered,overflow',
      10_000,
      'the first two delivered',
    );

    expect(await drainWebhookOverflow(deps)).toEqual({ released: 0, failed: 0 });
    clock.advance(HOUR + 1_000);
    // the window has room again, but new deliveries queue behind the one already waiting
    await emit(owner.id, 2, 'late');
    expect(await statuses(endpoint.id)).toEqual(['delivered', 'delivered', 'overflow', 'overflow', 'overflow']);
    const history = await callJson<{ deliveries: Array<{ status: string }> }>(
      app,
      owner.token,
      'GET',
      `/api/webhooks/${endpoint.id}/deliveries?status=overflow`,
    );
    expect(history.body.deliveries).toHaveLength(3);

    // two free places: the two oldest go
    expect(await drainWebhookOverflow(deps)).toEqual({ released: 2, failed: 0 });
    const received = await receiver.waitFor(4);
    expect(
      received
        .slice(2)
        .map((request) => JSON.parse(request.body).data.originalName)
        .sort(),
    ).toEqual(['doc-3.pdf', 'late-1.pdf']);
    await until(
      () => statuses(endpoint.id),
      (list) => list.join() === 'delivered,delivered,delivered,delivered,overflow',
      10_000,
      'the released two delivered',
    );
  });

  it('counts a user’s and a tenant’s deliveries across all their endpoints', async () => {
    const byUser = webhookDeps(app.deps, { policy: { limits: { endpointPerHour: Infinity, userPerHour: 3, tenantPerHour: Infinity } } });
    const first = await createEndpoint(owner.token, { url: receiver.url('/one') });
    const second = await createEndpoint(owner.token, { url: receiver.url('/two') });
    await emitConversionEvent(app, await createFile(app, owner.id));
    await emitConversionEvent(app, await createFile(app, owner.id));
    await dispatchOutboxEvents(byUser);
    expect([...(await statuses(first.id)), ...(await statuses(second.id))].sort()).toEqual(['overflow', 'pending', 'pending', 'pending']);

    const tenantId = await createTenant(app, 'Acme');
    const admin = await createUser(app, 'admin@acme.example', { id: tenantId, admin: true });
    const member = await createUser(app, 'member@acme.example', { id: tenantId });
    const tenantHook = await createEndpoint(admin.token, { url: receiver.url('/acme'), tenantId });
    const memberHook = await createEndpoint(member.token, { url: receiver.url('/member') });
    const byTenant = webhookDeps(app.deps, { policy: { limits: { endpointPerHour: Infinity, userPerHour: Infinity, tenantPerHour: 3 } } });
    await emitConversionEvent(app, await createFile(app, member.id));
    await emitConversionEvent(app, await createFile(app, member.id));
    await dispatchOutboxEvents(byTenant);
    expect([...(await statuses(tenantHook.id)), ...(await statuses(memberHook.id))].sort()).toEqual(['overflow', 'pending', 'pending', 'pending']);
  });

  it('drops beyond the cap of the overflow queue and emails the owner the affected download links, once', async () => {
    const endpoint = await createEndpoint(owner.token, { url: receiver.url('/flooded') });
    await emit(owner.id, 7);
    // 2 within the limit, 3 waiting (the cap here), 2 dropped
    expect((await statuses(endpoint.id)).slice(2)).toEqual(['overflow', 'overflow', 'overflow', 'dropped', 'dropped']);
    const dropped = (await deliveries(app, endpoint.id)).filter((row) => row.status === 'dropped');
    expect(names(dropped)).toEqual(['doc-6.pdf', 'doc-7.pdf']);
    expect(dropped[0]!.lastError).toMatch(/overflow queue of this endpoint was full/);

    // the email provider refuses once: the drops stay unreported and are tried again
    resend.next({ kind: 'error', status: 422 });
    expect(await sendDropNotices(noticeDeps)).toBe(0);
    expect(resend.delivered).toHaveLength(0);

    // the minute drain job (as the schedule fires it) reports them
    await app.boss.send(DRAIN_QUEUE, {});
    await until(
      async () => resend.delivered.length,
      (count) => count === 1,
      10_000,
      'the drop email',
    );
    const [email] = resend.delivered;
    expect(email!.body).toMatchObject({ to: ['owner@example.com'], subject: '2 webhook events were dropped' });
    const text = String(email!.body.text);
    for (const row of dropped) expect(text).toContain(JSON.parse(row.body).data.zipUrl);
    for (const row of (await deliveries(app, endpoint.id)).filter((delivery) => delivery.status !== 'dropped')) {
      expect(text).not.toContain(JSON.parse(row.body).data.zipUrl);
    }
    expect(await sendDropNotices(noticeDeps)).toBe(0);
    expect(resend.delivered).toHaveLength(1);
    expect(await app.boss.getSchedules()).toEqual(expect.arrayContaining([expect.objectContaining({ name: DRAIN_QUEUE, cron: '* * * * *' })]));
  });

  it('fails what waits in overflow when its endpoint is disabled', async () => {
    const endpoint = await createEndpoint(owner.token, { url: receiver.url('/paused') });
    await emit(owner.id, 4);
    await callJson(app, owner.token, 'PATCH', `/api/webhooks/${endpoint.id}`, { enabled: false });
    clock.advance(HOUR + 1_000);
    expect(await drainWebhookOverflow(deps)).toEqual({ released: 0, failed: 2 });
    const waited = (await deliveries(app, endpoint.id)).slice(2);
    expect(waited.map((row) => [row.status, row.lastError])).toEqual([
      ['failed', 'the endpoint was disabled while this delivery waited in the overflow queue'],
      ['failed', 'the endpoint was disabled while this delivery waited in the overflow queue'],
    ]);
  });
});
