import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sql } from '../../server/db/database.ts';
import { startProductHarness } from './harness.ts';

const { app, resend, call, signIn } = await startProductHarness({ env: { ALERT_EMAIL: 'alerts@folio.example' } });
const db = app.database.db;

const alert = { type: 'email_delivery_failure', subject: 'Email bounced: Your invoice', message: 'bounced', recipients: ['reader@example.com'] };
const raise = () => call('POST', '/internal/email-alert', { proxy: true, body: alert });

describe('admin alert settings', () => {
  it('lists every alert type with its defaults until changed', async () => {
    const admin = await signIn('admin@folio.example');
    const answer = await call('GET', '/api/admin/alert-settings', { token: admin.token });
    expect(answer.status).toBe(200);
    expect(answer.body.settings).toEqual([
      { alertType: 'email_delivery_failure', enabled: true, channels: ['email', 'messenger'], emailTo: null, customised: false, updatedAt: null },
      { alertType: 'monitoring_alarm', enabled: true, channels: ['email', 'messenger'], emailTo: null, customised: false, updatedAt: null },
    ]);
  });

  it('reroutes, mutes and restores an alert type, each change in the audit log, and the alert route follows', async () => {
    const admin = await signIn('admin@folio.example');
    expect(await raise()).toMatchObject({ status: 200, body: { delivery: 'delivered' } });
    expect((resend.delivered.at(-1)!.body as { to: string[] }).to).toEqual(['alerts@folio.example']);

    const rerouted = await call('PATCH', '/api/admin/alert-settings/email_delivery_failure', {
      token: admin.token,
      body: { emailTo: 'Oncall@Folio.example', channels: ['email'] },
    });
    expect(rerouted.body).toMatchObject({ enabled: true, channels: ['email'], emailTo: 'oncall@folio.example', customised: true });
    expect(await raise()).toMatchObject({ status: 200, body: { delivery: 'delivered' } });
    expect((resend.delivered.at(-1)!.body as { to: string[] }).to).toEqual(['oncall@folio.example']);

    const sent = resend.delivered.length;
    expect((await call('PATCH', '/api/admin/alert-settings/email_delivery_failure', { token: admin.token, body: { enabled: false } })).body).toMatchObject({
      enabled: false,
      channels: ['email'],
      emailTo: 'oncall@folio.example',
    });
    expect(await raise()).toMatchObject({ status: 200, body: { delivery: 'disabled' } });
    expect(resend.delivered).toHaveLength(sent);

    await call('PATCH', '/api/admin/alert-settings/email_delivery_failure', { token: admin.token, body: { enabled: true, emailTo: null } });
    expect(await raise()).toMatchObject({ status: 200, body: { delivery: 'delivered' } });
    expect((resend.delivered.at(-1)!.body as { to: string[] }).to).toEqual(['alerts@folio.example']);

    const audit = await db.any(sql.type(z.object({ subject: z.string(), details: z.object({ before: z.unknown(), after: z.unknown() }) }))`
      select subject, details from admin_audit_log where action = 'alert_settings_update' and actor_id = ${admin.id} order by id`);
    expect(audit).toHaveLength(3);
    expect(audit[0]).toEqual({
      subject: 'email_delivery_failure',
      details: {
        before: { enabled: true, channels: ['email', 'messenger'], emailTo: null },
        after: { enabled: true, channels: ['email'], emailTo: 'oncall@folio.example' },
      },
    });
  });

  it('is for admins only and refuses settings that would make no sense', async () => {
    const admin = await signIn('admin@folio.example');
    const plain = await signIn('plain@example.com');
    expect((await call('GET', '/api/admin/alert-settings', { token: plain.token })).status).toBe(403);
    expect((await call('PATCH', '/api/admin/alert-settings/monitoring_alarm', { token: plain.token, body: { enabled: false } })).status).toBe(403);
    for (const [type, body] of [
      ['monitoring_alarm', { channels: [] }],
      ['monitoring_alarm', { channels: ['sms'] }],
      ['monitoring_alarm', { channels: ['email', 'email'] }],
      ['monitoring_alarm', { enabled: 'no' }],
      ['monitoring_alarm', { emailTo: 'nobody' }],
      ['monitoring_alarm', {}],
      ['no_such_alert', { enabled: false }],
    ] as const) {
      expect((await call('PATCH', `/api/admin/alert-settings/${type}`, { token: admin.token, body })).status, JSON.stringify(body)).toBe(400);
    }
    expect(
      await db.oneFirst(
        sql.type(z.object({ n: z.number() }))`select count(*)::int as n from admin_notification_settings where alert_type = 'monitoring_alarm'`,
      ),
    ).toBe(0);
  });
});
