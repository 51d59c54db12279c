import { Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from '../../server/db/database.ts';
import { loadConfig } from '../../server/config.ts';
import { createLog } from '../../server/log.ts';
import { createFatalAlertTransport, fatalAlertsFor } from '../../server/out-of-band/fatal-alert-transport.ts';
import { createOutOfBandSender, outOfBandSettings } from '../../server/out-of-band/out-of-band-sender.ts';
import { startResendFake, type ResendFake } from '../fakes/resend.ts';
import { startTestApp } from '../helpers/app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { until } from '../helpers/wait.ts';

const KEY = 're_test_out_of_band';
let resend: ResendFake;
let database: TestDatabase;

beforeAll(async () => {
  resend = await startResendFake({ apiKey: KEY });
  database = await createTestDatabase();
});
afterAll(() => resend.close());

function config(env: Record<string, string> = {}) {
  return loadConfig({
    NODE_ENV: 'test',
    DATABASE_URL: database.url,
    PROVIDER_A_API_KEY: KEY,
    PROVIDER_A_BASE_URL: resend.url,
    ALERT_EMAIL: 'ops@example.com',
    EMAIL_DEFAULT_FROM: 'Folio <alerts@folio.example>',
    ...env,
  });
}

/** Stops the database for good: every connection is cut and the database is dropped. */
async function stopDatabase() {
  const admin = new URL(database.url);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`drop database ${database.name} with (force)`);
  await client.end();
  await expect(database.db.query(sql.unsafe`select 1`)).rejects.toThrow();
}

describe('out-of-band senders', () => {
  it('answer unconfigured, sending nothing, without ALERT_EMAIL or a provider-A key', async () => {
    resend.reset();
    const noRecipient = createOutOfBandSender(outOfBandSettings(config({ ALERT_EMAIL: '' })));
    const noKey = createOutOfBandSender(outOfBandSettings(config({ PROVIDER_A_API_KEY: '' })));
    const mail = { source: 'test', subject: 's', text: 't', key: 'k-unconfigured' };
    expect(await noRecipient.send(mail)).toMatchObject({ ok: false, kind: 'unconfigured' });
    expect(await noKey.send(mail)).toMatchObject({ ok: false, kind: 'unconfigured' });
    expect(resend.requests).toHaveLength(0);
  });

  it('report provider A failures with their kind', async () => {
    resend.reset();
    resend.next({ kind: 'error', status: 503 });
    const sender = createOutOfBandSender(outOfBandSettings(config()));
    expect(await sender.send({ source: 'test', subject: 's', text: 't', key: 'k-503' })).toMatchObject({ ok: false, kind: 'unavailable' });
  });

  it('dedupe fatal lines by message within the window and rate-limit them per hour', async () => {
    resend.reset();
    let now = Date.parse('2026-11-26T10:00:00Z');
    const transport = createFatalAlertTransport(createOutOfBandSender(outOfBandSettings(config())), {
      maxPerHour: 2,
      dedupeMs: 10 * 60 * 1000,
      now: () => now,
    });
    await transport({ message: 'database unreachable', error: 'Error: ECONNREFUSED' });
    await transport({ message: 'database unreachable', error: 'Error: ECONNREFUSED' });
    expect(resend.delivered).toHaveLength(1);
    await transport({ message: 'queue stopped' });
    await transport({ message: 'third distinct line' }); // over 2 an hour: counted, not sent
    expect(resend.delivered.map((mail) => mail.body.subject)).toEqual(['Folio fatal: database unreachable', 'Folio fatal: queue stopped']);
    now += 61 * 60 * 1000;
    await transport({ message: 'database unreachable', error: 'Error: ECONNREFUSED' });
    expect(resend.delivered).toHaveLength(3);
    expect(String(resend.delivered[2]!.body.text)).toContain('1 earlier fatal lines were not mailed');
  });

  it('reach the send log only through delivery events, as category unknown', async () => {
    resend.reset();
    const secret = `whsec_${Buffer.from('out-of-band test secret!').toString('base64')}`;
    const app = await startTestApp({
      env: { PROVIDER_A_API_KEY: KEY, PROVIDER_A_BASE_URL: resend.url, PROVIDER_A_WEBHOOK_SECRET: secret, ALERT_EMAIL: 'ops@example.com' },
    });
    const sent = await app.deps.outOfBand.send({ source: 'cost_spike', subject: 'Cost spike', text: 'spend', key: 'spike:1' });
    expect(sent.ok).toBe(true);
    const log = () =>
      app.deps.db.any(sql.type(z.object({ category: z.string(), status: z.string(), providerMessageId: z.string().nullable() }))`
      select category, status, provider_message_id as "providerMessageId" from email_log`);
    expect(await log()).toEqual([]);

    const messageId = (sent as { messageId: string }).messageId;
    const event = JSON.stringify({
      type: 'email.delivered',
      created_at: new Date().toISOString(),
      data: {
        created_at: new Date().toISOString(),
        email_id: messageId,
        from: 'Folio <alerts@folio.example>',
        to: ['ops@example.com'],
        subject: 'Cost spike',
        tags: { oob: 'cost_spike' },
      },
    });
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    const at = new Date();
    const response = await fetch(`${app.baseUrl}/api/webhooks/resend-events`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'svix-id': id,
        'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
        'svix-signature': new StandardWebhook(secret).sign(id, at, event),
      },
      body: event,
    });
    expect(response.status).toBe(200);
    expect(await log()).toEqual([{ category: 'unknown', status: 'delivered', providerMessageId: messageId }]);
  });

  it('send with the database stopped: the direct sender and the logger fatal transport', async () => {
    resend.reset();
    const settings = config();
    await stopDatabase();

    const sender = createOutOfBandSender(outOfBandSettings(settings));
    const sent = await sender.send({ source: 'model_budget', subject: 'Model budget reached', text: 'paused', key: 'budget:test' });
    expect(sent).toMatchObject({ ok: true });

    const lines: string[] = [];
    const destination = new Writable({ write: (chunk, _encoding, done) => done(void lines.push(String(chunk))) });
    const log = createLog({ level: 'info', destination, onFatal: fatalAlertsFor(settings) });
    log.fatal({ err: new Error('connection terminated') }, 'the database is gone');
    await until(
      async () => resend.delivered.length,
      (count) => count === 2,
      10_000,
      'the fatal mail',
    );

    expect(lines.some((line) => line.includes('the database is gone'))).toBe(true);
    const [budget, fatal] = resend.delivered;
    expect(budget!.idempotencyKey).toBe('budget:test');
    expect(budget!.body).toMatchObject({ from: 'Folio <alerts@folio.example>', to: ['ops@example.com'], subject: 'Model budget reached', text: 'paused' });
    expect(fatal!.body).toMatchObject({ to: ['ops@example.com'], subject: 'Folio fatal: the database is gone' });
    expect(String(fatal!.body.text)).toContain('Error: connection terminated');
    // No folio_log_id: delivery events for these mails land in the send log as category unknown.
    for (const mail of resend.delivered) {
      expect(JSON.stringify(mail.body)).not.toContain('folio_log_id');
      expect(mail.body.tags).toEqual([{ name: 'oob', value: expect.any(String) }]);
    }
  });
});
