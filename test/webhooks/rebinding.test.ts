import { describe, expect, it } from 'vitest';
import { attemptWebhookDeliveries } from '../../server/webhooks/deliver-webhook.ts';
import { dispatchOutboxEvents } from '../../server/webhooks/dispatch-outbox-events.ts';
import { webhookDeps } from '../../server/webhooks/webhook-runtime.ts';
import { callJson, createFile, createUser, deliveries, emitConversionEvent, startWebhookHarness } from './harness.ts';

/**
 * Production rules (the test-only loopback switch off): a host that resolved
 * to a public address when the endpoint was created and resolves to loopback
 * at delivery time is refused before any connection is made.
 */
const { app, receiver, dns } = await startWebhookHarness({ allowLoopback: false });
const deps = webhookDeps(app.deps);
const owner = await createUser(app, 'owner@example.com');

describe('DNS rebinding', () => {
  it('checks the address again at delivery and refuses loopback, even next to a public address', async () => {
    expect(app.config.webhooks.allowLoopbackReceiver).toBe(false);
    dns.set('hooks.rebind.example', ['93.184.215.14']);
    const url = `https://hooks.rebind.example:${receiver.port}/hook`;
    const created = await callJson<{ id: string }>(app, owner.token, 'POST', '/api/webhooks', { url });
    expect(created.status).toBe(200);

    dns.set('hooks.rebind.example', ['127.0.0.1']);
    await emitConversionEvent(app, await createFile(app, owner.id));
    await dispatchOutboxEvents(deps);
    const [delivery] = await deliveries(app, created.body.id);
    const [outcome] = await attemptWebhookDeliveries(deps, [{ deliveryId: delivery!.id, attempt: 1 }]);
    expect(outcome).toEqual({ status: 'fulfilled', value: 'retrying' });
    const [after] = await deliveries(app, created.body.id);
    expect(after).toMatchObject({ lastHttpStatus: null, lastError: expect.stringMatching(/^refused: hooks\.rebind\.example resolves to 127\.0\.0\.1/) });

    dns.set('hooks.rebind.example', ['93.184.215.14', '127.0.0.1']);
    const [second] = await attemptWebhookDeliveries(deps, [{ deliveryId: delivery!.id, attempt: 2 }]);
    expect(second).toEqual({ status: 'fulfilled', value: 'retrying' });
    const tested = await callJson(app, owner.token, 'POST', `/api/webhooks/${created.body.id}/test`);
    expect(tested.body).toMatchObject({ delivered: false, httpStatus: null, error: expect.stringMatching(/^refused: /) });

    expect(receiver.requests).toEqual([]);
  });

  it('refuses a loopback receiver outright without the test-only switch', async () => {
    const created = await callJson(app, owner.token, 'POST', '/api/webhooks', { url: receiver.url() });
    expect(created).toMatchObject({ status: 422, body: { code: 'WEBHOOK_URL_REJECTED' } });
  });
});
