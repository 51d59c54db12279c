import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { verifyWebhook } from '../../client-sdk/index.ts';
import { AnyRow, createDatabase, sql } from '../../server/db/database.ts';
import { attemptWebhookDeliveries } from '../../server/webhooks/deliver-webhook.ts';
import { dispatchOutboxEvents } from '../../server/webhooks/dispatch-outbox-events.ts';
import { sendDisabledNotice } from '../../server/webhooks/send-webhook-notices.ts';
import { webhookDeps } from '../../server/webhooks/webhook-runtime.ts';
import { NOTICE_QUEUE, NoticeJob } from '../../server/webhooks/webhooks.jobs.ts';
import { createTestClock } from '../helpers/app.ts';
import { callJson, createFile, createUser, deliveries, emitConversionEvent, queuedAttempts, startWebhookHarness } from './harness.ts';

/**
 * The delivery rules, driven step by step: the test dispatches and runs each
 * attempt itself (as the queue would), and reads the queue for the schedule.
 */
const clock = createTestClock();
const { app, receiver, resend } = await startWebhookHarness({ clock });
const deps = webhookDeps(app.deps, { policy: { timeoutMs: 1_000 } });

type Created = { id: string; secret: string };
const owner = await createUser(app, 'owner@example.com');

async function createEndpoint(path: string) {
  const created = await callJson<Created>(app, owner.token, 'POST', '/api/webhooks', { url: receiver.url(path) });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body;
}

/** Commits one conversion event and dispatches it; the endpoint's new delivery. */
async function newDelivery(endpointId: string, type: 'conversion.completed' | 'conversion.failed' = 'conversion.completed') {
  const before = (await deliveries(app, endpointId)).length;
  await emitConversionEvent(app, await createFile(app, owner.id), type);
  await dispatchOutboxEvents(deps);
  const rows = await deliveries(app, endpointId);
  expect(rows).toHaveLength(before + 1);
  return rows.at(-1)!;
}

async function attempt(deliveryId: string, number: number) {
  const [result] = await attemptWebhookDeliveries(deps, [{ deliveryId, attempt: number }]);
  if (result!.status === 'rejected') throw result!.reason;
  return result!.value;
}

const endpointState = (id: string) =>
  app.deps.db.one(sql.type(z.object({ enabled: z.boolean(), failures: z.number(), reason: z.string().nullable() }))`
    select enabled, consecutive_failures as failures, disabled_reason as reason from webhook_endpoints where id = ${id}`);

beforeEach(async () => {
  receiver.reset();
  resend.reset();
  await app.deps.db.query(sql.type(AnyRow)`delete from webhook_endpoints`);
  await app.deps.db.query(sql.type(AnyRow)`delete from pgboss.job where name like 'webhooks.%'`);
  await app.deps.db.query(sql.type(AnyRow)`delete from rate_limit_hits`);
});

describe('the retry schedule', () => {
  it('is immediate, +1 minute, +5 minutes; success on the third attempt ends it; a job run twice sends once', async () => {
    expect(webhookDeps(app.deps).policy).toMatchObject({ timeoutMs: 10_000, retryDelaysSeconds: [60, 300], disableAfterFailures: 10 });
    const endpoint = await createEndpoint('/schedule');
    const delivery = await newDelivery(endpoint.id);
    expect(await queuedAttempts(app, delivery.id)).toEqual([{ attempt: 1, delaySeconds: 0, state: 'created' }]);

    receiver.next({ kind: 'status', status: 500 }, { kind: 'status', status: 502 });
    expect(await attempt(delivery.id, 1)).toBe('retrying');
    expect((await queuedAttempts(app, delivery.id)).find((job) => job.attempt === 2)).toMatchObject({ delaySeconds: 60 });
    expect(await attempt(delivery.id, 2)).toBe('retrying');
    expect((await queuedAttempts(app, delivery.id)).find((job) => job.attempt === 3)).toMatchObject({ delaySeconds: 300 });
    expect(await attempt(delivery.id, 3)).toBe('delivered');
    expect(receiver.requests.map((request) => request.path)).toEqual(['/schedule', '/schedule', '/schedule']);

    // the same jobs received again: nothing is sent, nothing changes
    expect(await attempt(delivery.id, 3)).toBe('skipped');
    expect(await attempt(delivery.id, 1)).toBe('skipped');
    expect(receiver.requests).toHaveLength(3);
    expect((await deliveries(app, endpoint.id)).at(-1)).toMatchObject({ status: 'delivered', attempts: 3 });
    // a dispatch run again finds nothing to do
    expect(await dispatchOutboxEvents(deps)).toEqual({ events: 0, queued: 0 });
  });

  it('fails a delivery after its third failed attempt', async () => {
    const endpoint = await createEndpoint('/down');
    receiver.always({ kind: 'status', status: 503 });
    const delivery = await newDelivery(endpoint.id);
    expect([await attempt(delivery.id, 1), await attempt(delivery.id, 2), await attempt(delivery.id, 3)]).toEqual(['retrying', 'retrying', 'failed']);
    expect((await queuedAttempts(app, delivery.id)).map((job) => job.attempt)).toEqual([1, 2, 3]);
    expect(await endpointState(endpoint.id)).toEqual({ enabled: true, failures: 1, reason: null });
  });

  it('honours a 429’s Retry-After within the schedule', async () => {
    const endpoint = await createEndpoint('/busy');
    const delivery = await newDelivery(endpoint.id);
    receiver.next({ kind: 'status', status: 429, headers: { 'retry-after': '120' } }, { kind: 'status', status: 429, headers: { 'retry-after': '86400' } });
    await attempt(delivery.id, 1);
    await attempt(delivery.id, 2);
    const jobs = await queuedAttempts(app, delivery.id);
    // 120 s is later than the scheduled minute: honoured; a day is capped at the schedule's longest wait
    expect(jobs.map((job) => [job.attempt, job.delaySeconds])).toEqual([
      [1, 0],
      [2, 120],
      [3, 300],
    ]);
    receiver.next({ kind: 'status', status: 429, headers: { 'retry-after': '5' } });
    const early = await newDelivery(endpoint.id);
    await attempt(early.id, 1);
    expect((await queuedAttempts(app, early.id)).find((job) => job.attempt === 2)).toMatchObject({ delaySeconds: 60 });
  });

  it('410 Gone disables the endpoint at once and tells its owner', async () => {
    const endpoint = await createEndpoint('/gone');
    const delivery = await newDelivery(endpoint.id);
    receiver.next({ kind: 'status', status: 410, body: 'no such hook' });
    expect(await attempt(delivery.id, 1)).toBe('failed');
    expect(await endpointState(endpoint.id)).toEqual({ enabled: false, failures: 0, reason: 'gone' });
    expect((await queuedAttempts(app, delivery.id)).map((job) => job.attempt)).toEqual([1]);
    const [notice] = await app.boss.fetch(NOTICE_QUEUE);
    expect(NoticeJob.parse(notice!.data)).toMatchObject({ kind: 'disabled', endpointId: endpoint.id, reason: 'gone' });
    await sendDisabledNotice({ ...deps, email: app.deps.email }, NoticeJob.parse(notice!.data), notice!.id);
    expect(resend.delivered.map((message) => [message.body.to, message.body.subject])).toEqual([
      [['owner@example.com'], 'Your Folio webhook endpoint was disabled'],
    ]);
    expect(String(resend.delivered[0]!.body.text)).toContain('410 Gone');
  });

  it('treats a redirect as a failure and never follows it', async () => {
    const endpoint = await createEndpoint('/moved');
    const delivery = await newDelivery(endpoint.id);
    receiver.next({ kind: 'status', status: 302, headers: { location: receiver.url('/elsewhere') } });
    expect(await attempt(delivery.id, 1)).toBe('retrying');
    expect(receiver.requests.map((request) => request.path)).toEqual(['/moved']);
    expect((await deliveries(app, endpoint.id)).at(-1)).toMatchObject({ lastHttpStatus: 302, lastError: 'HTTP 302: redirects are not followed' });
  });

  it('gives a receiver the timeout and no more (1 s here, 10 s in production)', async () => {
    const endpoint = await createEndpoint('/slow');
    const delivery = await newDelivery(endpoint.id);
    receiver.next({ kind: 'delay', ms: 3_000 });
    const started = performance.now();
    expect(await attempt(delivery.id, 1)).toBe('retrying');
    expect(performance.now() - started).toBeLessThan(2_500);
    expect((await deliveries(app, endpoint.id)).at(-1)).toMatchObject({ lastHttpStatus: null, lastError: 'timeout: no answer within 1000 ms' });
  });

  it('stores at most 1 KB of the response body, cut on a character boundary', async () => {
    const endpoint = await createEndpoint('/chatty');
    const delivery = await newDelivery(endpoint.id);
    receiver.next({ kind: 'status', status: 500, body: 'é'.repeat(5_000) });
    await attempt(delivery.id, 1);
    const stored = (await deliveries(app, endpoint.id)).at(-1)!.lastResponseBody!;
    expect(stored).toBe('é'.repeat(512));
    expect(Buffer.byteLength(stored)).toBeLessThanOrEqual(1024);
  });
});

describe('auto-disable', () => {
  it('disables after 10 consecutive exhausted deliveries, emails the owner once; a success resets the count; re-enabling resets it', async () => {
    const endpoint = await createEndpoint('/flaky');
    receiver.always({ kind: 'status', status: 500 });
    const exhaust = async () => {
      const delivery = await newDelivery(endpoint.id);
      for (const number of [1, 2, 3]) await attempt(delivery.id, number);
    };
    for (let i = 0; i < 5; i++) await exhaust();
    expect(await endpointState(endpoint.id)).toEqual({ enabled: true, failures: 5, reason: null });
    receiver.always(undefined);
    await attempt((await newDelivery(endpoint.id)).id, 1);
    expect(await endpointState(endpoint.id)).toMatchObject({ failures: 0 });

    receiver.always({ kind: 'status', status: 500 });
    for (let i = 0; i < 9; i++) await exhaust();
    expect(await endpointState(endpoint.id)).toEqual({ enabled: true, failures: 9, reason: null });
    // a delivery already queued when the tenth fails is not sent to a disabled endpoint
    const queued = await newDelivery(endpoint.id);
    await exhaust();
    expect(await endpointState(endpoint.id)).toEqual({ enabled: false, failures: 10, reason: 'consecutive_failures' });
    const sent = receiver.requests.length;
    expect(await attempt(queued.id, 1)).toBe('failed');
    expect(receiver.requests).toHaveLength(sent);
    expect((await deliveries(app, endpoint.id)).find((row) => row.id === queued.id)).toMatchObject({ status: 'failed', attempts: 0 });

    const notices = await app.boss.fetch(NOTICE_QUEUE, { batchSize: 10 });
    expect(notices).toHaveLength(1);
    await sendDisabledNotice({ ...deps, email: app.deps.email }, NoticeJob.parse(notices[0]!.data), notices[0]!.id);
    await sendDisabledNotice({ ...deps, email: app.deps.email }, NoticeJob.parse(notices[0]!.data), notices[0]!.id);
    // a notice job received twice mails once (claimed on the endpoint)
    expect(resend.delivered).toHaveLength(1);
    expect(String(resend.delivered[0]!.body.text)).toContain('10 deliveries in a row failed');

    // new events no longer reach it
    await emitConversionEvent(app, await createFile(app, owner.id));
    await dispatchOutboxEvents(deps);
    expect((await deliveries(app, endpoint.id)).filter((row) => row.status === 'pending')).toEqual([]);

    const enabled = await callJson(app, owner.token, 'PATCH', `/api/webhooks/${endpoint.id}`, { enabled: true });
    expect(enabled.body).toMatchObject({ enabled: true, consecutiveFailures: 0 });
    receiver.always(undefined);
    expect(await attempt((await newDelivery(endpoint.id)).id, 1)).toBe('delivered');
  });
});

describe('secret rotation', () => {
  it('signs with both secrets for an hour, so receivers holding either accept; then with the new one only', async () => {
    const endpoint = await createEndpoint('/rotating');
    const rotated = (await callJson<Created>(app, owner.token, 'POST', `/api/webhooks/${endpoint.id}/rotate-secret`)).body;
    const oldHolder = (request: (typeof receiver.requests)[number]) => verifyWebhook(request.body, request.headers, endpoint.secret, { now: clock.now() });
    const newHolder = (request: (typeof receiver.requests)[number]) => verifyWebhook(request.body, request.headers, rotated.secret, { now: clock.now() });

    // the receiver answers 200; the two holders check each delivery on the test's clock
    expect(await attempt((await newDelivery(endpoint.id)).id, 1)).toBe('delivered');
    const during = receiver.requests.at(-1)!;
    expect(String(during.headers['x-webhook-signature']).split(',')).toHaveLength(2);
    expect((await oldHolder(during)).ok).toBe(true);
    expect((await newHolder(during)).ok).toBe(true);

    clock.advance(60 * 60 * 1000 + 1_000);
    expect(await attempt((await newDelivery(endpoint.id)).id, 1)).toBe('delivered');
    const after = receiver.requests.at(-1)!;
    expect(String(after.headers['x-webhook-signature']).split(',')).toHaveLength(1);
    expect((await oldHolder(after)).ok).toBe(false);
    expect((await newHolder(after)).ok).toBe(true);
  });
});

describe('dispatch', () => {
  it('two dispatchers deliver each event to each endpoint exactly once and mark every event dispatched', async () => {
    const endpoints = [await createEndpoint('/a'), await createEndpoint('/b'), await createEndpoint('/c')];
    const files = await Promise.all(Array.from({ length: 60 }, () => createFile(app, owner.id)));
    for (const fileId of files) await emitConversionEvent(app, fileId);
    const otherPool = await createDatabase(app.database.url, { maximumPoolSize: 4 });
    afterAll(() => otherPool.end());
    const drain = async (dispatcherDeps: typeof deps) => {
      let claimed = 0;
      for (;;) {
        const { events } = await dispatchOutboxEvents(dispatcherDeps, { batchSize: 7 });
        if (events === 0) return claimed;
        claimed += events;
      }
    };
    // limits lifted: this is about claiming, not about the hourly limits (overflow.test.ts)
    const lifted = webhookDeps(app.deps, { policy: { limits: { endpointPerHour: Infinity, userPerHour: Infinity, tenantPerHour: Infinity } } });
    const [first, second] = await Promise.all([drain(lifted), drain({ ...lifted, db: otherPool })]);
    expect(first + second).toBe(60);
    const rows = await deliveries(app);
    expect(rows).toHaveLength(180);
    expect(new Set(rows.map((row) => `${row.eventId}:${row.endpointId}`)).size).toBe(180);
    expect(new Set(rows.map((row) => row.endpointId))).toEqual(new Set(endpoints.map((endpoint) => endpoint.id)));
    // first attempts are queued in groups: every delivery named by exactly one job
    const queued = await app.deps.db.one(sql.type(z.object({ jobs: z.number(), named: z.number(), distinct: z.number() }))`
      select count(distinct j.id)::int as jobs, count(*)::int as named, count(distinct d.id)::int as distinct
        from pgboss.job j cross join lateral jsonb_array_elements_text(j.data->'deliveryIds') d(id)
       where j.name = 'webhooks.deliver' and (j.data->>'attempt')::int = 1`);
    expect(queued).toMatchObject({ named: 180, distinct: 180 });
    expect(queued.jobs).toBeLessThan(180);
    const undispatched = await app.deps.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from outbox_events where dispatched_at is null`);
    expect(undispatched).toBe(0);
  });

  it('marks events nobody hears (other types, deleted files) dispatched without deliveries', async () => {
    await createEndpoint('/quiet');
    const fileId = await createFile(app, owner.id);
    await emitConversionEvent(app, fileId);
    await app.deps.db.query(sql.type(AnyRow)`delete from files where id = ${fileId}`);
    await app.deps.db.query(sql.type(AnyRow)`insert into outbox_events (type, aggregate_id, payload) values ('credits.charged', null, '{}')`);
    expect(await dispatchOutboxEvents(deps)).toEqual({ events: 2, queued: 0 });
    expect(await deliveries(app)).toEqual([]);
  });
});
