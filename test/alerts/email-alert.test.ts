import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { startMessengerFake } from '../fakes/messenger.ts';
import { startResendFake } from '../fakes/resend.ts';
import { startTestApp, TEST_PROXY_SECRET } from '../helpers/app.ts';

const ALERT_INBOX = 'alerts@folio.example';
const resend = await startResendFake({ apiKey: 're_alerts' });
const messenger = await startMessengerFake({ token: 'bot-token' });
const app = await startTestApp({
  env: {
    PROVIDER_A_API_KEY: 're_alerts',
    PROVIDER_A_BASE_URL: resend.url,
    ALERT_EMAIL: ALERT_INBOX,
    MESSENGER_API_BASE_URL: messenger.url,
    MESSENGER_BOT_TOKEN: 'bot-token',
    MESSENGER_CHAT_ID: '4242',
  },
});
// Email configured, messenger not: the inbox escalation has nowhere to go.
const noMessenger = await startTestApp({ env: { PROVIDER_A_API_KEY: 're_alerts', PROVIDER_A_BASE_URL: resend.url, ALERT_EMAIL: ALERT_INBOX } });
const nothing = await startTestApp({ env: {} });
afterAll(async () => {
  await resend.close();
  await messenger.close();
});

beforeEach(async () => {
  resend.reset();
  messenger.reset();
  await app.database.db.query(sql.type(AnyRow)`truncate admin_notification_settings, email_log`);
});

const alert = {
  type: 'email_delivery_failure',
  subject: 'Email bounced: Your invoice',
  message: 'Provider A reported bounced',
  recipients: ['reader@example.com'],
};

async function postAlert(body: unknown, options: { baseUrl?: string; secret?: string | null } = {}) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (options.secret !== null) headers['x-proxy-secret'] = options.secret ?? TEST_PROXY_SECRET;
  const response = await fetch(`${options.baseUrl ?? app.baseUrl}/internal/email-alert`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function settings(fields: { enabled?: boolean; channels?: string[]; emailTo?: string }) {
  await app.database.db.query(sql.type(AnyRow)`
    insert into admin_notification_settings (alert_type, enabled, channels, email_to)
    values ('email_delivery_failure', ${fields.enabled ?? true}, ${sql.array(fields.channels ?? ['email', 'messenger'], 'text')}, ${fields.emailTo ?? null})`);
}

describe('POST /internal/email-alert', () => {
  it('refuses a missing or wrong x-proxy-secret', async () => {
    expect((await postAlert(alert, { secret: null })).status).toBe(403);
    expect((await postAlert(alert, { secret: 'nope' })).status).toBe(403);
    expect(messenger.messages).toEqual([]);
  });

  it('answers 400 for a body without a subject', async () => {
    expect((await postAlert({ type: 'email_delivery_failure' })).status).toBe(400);
  });

  it('delivered: 200 when the channels succeed; email goes through the library with category alert', async () => {
    const answer = await postAlert(alert);
    expect(answer).toEqual({ status: 200, body: { success: true, delivery: 'delivered' } });
    expect(messenger.messages).toHaveLength(1);
    expect(messenger.messages[0]?.text).toContain('Email bounced: Your invoice');
    expect(resend.delivered.map((m) => m.body.to)).toEqual([[ALERT_INBOX]]);
    const category = await app.database.db.oneFirst(sql.type(z.object({ category: z.string() }))`select category from email_log`);
    expect(category).toBe('alert');
  });

  it('delivered: 200 when one channel of two succeeds', async () => {
    messenger.failNext(1);
    expect((await postAlert(alert)).body).toEqual({ success: true, delivery: 'delivered' });
    expect(resend.delivered).toHaveLength(1);
  });

  it('disabled: 200 and nothing sent when the alert type is muted', async () => {
    await settings({ enabled: false });
    expect(await postAlert(alert)).toEqual({ status: 200, body: { success: true, delivery: 'disabled' } });
    expect(messenger.messages).toEqual([]);
    expect(resend.delivered).toEqual([]);
  });

  it('reroutes: email to the settings address and only the wanted channels', async () => {
    await settings({ channels: ['email'], emailTo: 'oncall@folio.example' });
    expect((await postAlert(alert)).status).toBe(200);
    expect(resend.delivered.map((m) => m.body.to)).toEqual([['oncall@folio.example']]);
    expect(messenger.messages).toEqual([]);
  });

  it('unconfigured: 503 ALERT_CHANNEL_UNCONFIGURED when no wanted channel has its configuration', async () => {
    const answer = await postAlert(alert, { baseUrl: nothing.baseUrl });
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ code: 'ALERT_CHANNEL_UNCONFIGURED', success: false });
  });

  it('failed: 502 when every channel was attempted and failed', async () => {
    await settings({ channels: ['messenger'] });
    messenger.failNext(1);
    const answer = await postAlert(alert);
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({ success: false, delivery: 'failed' });
  });

  it('escalates to the messenger when the alert inbox itself is the failing recipient, skipping email', async () => {
    await settings({ channels: ['email'] });
    const answer = await postAlert({ ...alert, recipients: ['Alerts@Folio.example'] });
    expect(answer).toEqual({ status: 200, body: { success: true, delivery: 'delivered', escalated: 'messenger' } });
    expect(resend.delivered).toEqual([]);
    expect(messenger.messages).toHaveLength(1);
  });

  it('escalation that fails answers 502', async () => {
    messenger.failNext(1);
    const answer = await postAlert({ ...alert, recipients: [ALERT_INBOX] });
    expect(answer.status).toBe(502);
    expect(answer.body).toMatchObject({ escalated: 'messenger', success: false });
    expect(resend.delivered).toEqual([]);
  });

  it('escalation with no messenger configured answers 503', async () => {
    const answer = await postAlert({ ...alert, recipients: [ALERT_INBOX] }, { baseUrl: noMessenger.baseUrl });
    expect(answer.status).toBe(503);
    expect(answer.body).toMatchObject({ code: 'ALERT_CHANNEL_UNCONFIGURED', escalated: 'messenger' });
    expect(resend.delivered).toEqual([]);
  });
});
