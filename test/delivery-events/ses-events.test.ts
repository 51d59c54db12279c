import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { startMessengerFake } from '../fakes/messenger.ts';
import { startTestApp } from '../helpers/app.ts';

const SECRET = 'bus-secret-1234';
const messenger = await startMessengerFake({ token: 'bot-token' });
const app = await startTestApp({
  env: {
    CLOUD_WEBHOOK_SECRET: SECRET,
    CLOUD_CONFIGURATION_SET: 'outreach',
    MESSENGER_API_BASE_URL: messenger.url,
    MESSENGER_BOT_TOKEN: 'bot-token',
    MESSENGER_CHAT_ID: '7',
  },
});
afterAll(() => messenger.close());
const db = app.database.db;
beforeEach(async () => {
  messenger.reset();
  await db.query(sql.type(AnyRow)`truncate email_log, email_suppressions, email_sends, prospects, unsubscribes, admin_notification_settings`);
});

type Envelope = { detail: { mail: { messageId: string; destination: string[]; tags: Record<string, string[]> } } & Record<string, unknown> } & Record<
  string,
  unknown
>;
function fixture(name: string, options: { messageId?: string; configurationSet?: string; to?: string[] } = {}): Envelope {
  const event = JSON.parse(readFileSync(new URL(`../fixtures/ses/${name}.json`, import.meta.url), 'utf8')) as Envelope;
  if (options.messageId) event.detail.mail.messageId = options.messageId;
  if (options.configurationSet) event.detail.mail.tags['ses:configuration-set'] = [options.configurationSet];
  if (options.to) event.detail.mail.destination = options.to;
  return event;
}

async function post(body: unknown, secret: string | null = SECRET) {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
  if (secret !== null) headers['x-webhook-secret'] = secret;
  const response = await fetch(`${app.baseUrl}/api/webhooks/ses-events`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const Row = z.object({
  status: z.string(),
  category: z.string(),
  last_event: z.string().nullable(),
  error: z.string().nullable(),
  alerted_at: z.date().nullable(),
  configuration_set: z.string().nullable(),
});
const rows = () => db.any(sql.type(Row)`select status, category, last_event, error, alerted_at, configuration_set from email_log order by created_at`);
const suppressions = () => db.any(sql.type(z.object({ email: z.string(), reason: z.string() }))`select email, reason from email_suppressions order by email`);

describe('POST /api/webhooks/ses-events: authentication', () => {
  it('refuses a missing or wrong X-Webhook-Secret and records nothing', async () => {
    expect((await post(fixture('bounce.permanent'), null)).status).toBe(401);
    expect((await post(fixture('bounce.permanent'), 'bus-secret-1235')).status).toBe(401);
    expect(await rows()).toEqual([]);
  });

  it('answers 400 for a body that is not an SES event', async () => {
    expect((await post({ hello: 'world' })).status).toBe(400);
  });
});

describe('POST /api/webhooks/ses-events: provider-B table', () => {
  const moving: [string, string][] = [
    ['send', 'sent'],
    ['delivery', 'delivered'],
    ['delivery-delay', 'delivery_delayed'],
  ];
  for (const [name, status] of moving) {
    it(`${name} -> ${status}, no alert, no suppression`, async () => {
      expect((await post(fixture(name))).status).toBe(200);
      expect(await rows()).toMatchObject([{ status, category: 'unknown', alerted_at: null }]);
      expect(await suppressions()).toEqual([]);
    });
  }

  it('Bounce Permanent -> bounced, suppresses the bounced recipients, alerts once', async () => {
    const answer = await post(fixture('bounce.permanent'));
    expect(answer.body).toMatchObject({ recorded: 1, alerts: 1 });
    expect(await rows()).toMatchObject([{ status: 'bounced', error: 'Permanent: General', last_event: 'Bounce' }]);
    expect(await suppressions()).toEqual([{ email: 'recipient@example.com', reason: 'hard_bounce' }]);
    expect(messenger.messages).toHaveLength(1);
    await post(fixture('bounce.permanent'));
    expect(messenger.messages).toHaveLength(1);
  });

  it('Bounce Transient -> bounce_transient: status unchanged, no alert, no suppression', async () => {
    await post(fixture('delivery'));
    const answer = await post(fixture('bounce.transient'));
    expect(answer.body).toMatchObject({ recorded: 1, alerts: 0 });
    expect(await rows()).toMatchObject([{ status: 'delivered', alerted_at: null }]);
    expect(await suppressions()).toEqual([]);
  });

  it('Complaint -> complained, suppresses the complainants', async () => {
    await post(fixture('complaint'));
    expect(await rows()).toMatchObject([{ status: 'complained' }]);
    expect(await suppressions()).toEqual([{ email: 'recipient@example.com', reason: 'complaint' }]);
  });

  for (const name of ['reject', 'rendering-failure']) {
    it(`${name} -> failed with an alert and no suppression`, async () => {
      const answer = await post(fixture(name));
      expect(answer.body).toMatchObject({ alerts: 1 });
      expect(await rows()).toMatchObject([{ status: 'failed' }]);
      expect(await suppressions()).toEqual([]);
    });
  }

  it('ignores Open and Click for mail outside the outreach configuration set', async () => {
    const answer = await post([fixture('open'), fixture('click')]);
    expect(answer.body).toMatchObject({ recorded: 0, ignored: 2 });
  });

  it('outreach: opens and clicks move the status, a bounce suppresses and updates the bookkeeping but never alerts', async () => {
    const messageId = `out-${randomUUID()}`;
    const to = ['Prospect@Example.com'];
    await post([
      fixture('send', { messageId, configurationSet: 'outreach', to }),
      fixture('open', { messageId, configurationSet: 'outreach', to }),
      fixture('click', { messageId, configurationSet: 'outreach', to }),
    ]);
    expect(await rows()).toMatchObject([{ status: 'clicked', configuration_set: 'outreach' }]);
    const bounced = `out-${randomUUID()}`;
    const event = fixture('bounce.permanent', { messageId: bounced, configurationSet: 'outreach', to });
    (event.detail as unknown as { bounce: { bouncedRecipients: { emailAddress: string }[] } }).bounce.bouncedRecipients = [
      { emailAddress: 'Prospect@Example.com' },
    ];
    const answer = await post(event);
    expect(answer.body).toMatchObject({ alerts: 0 });
    expect(messenger.messages).toEqual([]);
    expect(await suppressions()).toEqual([{ email: 'prospect@example.com', reason: 'hard_bounce' }]);
    const sends = await db.any(sql.type(z.object({ provider_message_id: z.string(), status: z.string(), opened: z.boolean(), clicked: z.boolean() }))`
      select provider_message_id, status, opened_at is not null as opened, clicked_at is not null as clicked from email_sends order by status`);
    expect(sends).toEqual([
      { provider_message_id: bounced, status: 'bounced', opened: false, clicked: false },
      { provider_message_id: messageId, status: 'clicked', opened: true, clicked: true },
    ]);
    expect(await db.oneFirst(sql.type(z.object({ status: z.string() }))`select status from prospects where email = 'prospect@example.com'`)).toBe('bounced');
  });

  it('outreach complaint adds an unsubscribe', async () => {
    const to = ['Prospect@Example.com'];
    const event = fixture('complaint', { configurationSet: 'outreach', to });
    (event.detail as unknown as { complaint: { complainedRecipients: { emailAddress: string }[] } }).complaint.complainedRecipients = [
      { emailAddress: 'prospect@example.com' },
    ];
    await post(event);
    expect(await db.anyFirst(sql.type(z.object({ email: z.string() }))`select email from unsubscribes`)).toEqual(['prospect@example.com']);
  });

  it('answers 500 when recording fails, so the bus retries', async () => {
    await db.query(sql.type(AnyRow)`alter table email_log add constraint email_log_test_block check (provider_message_id <> 'BLOCKED') not valid`);
    try {
      const answer = await post(fixture('delivery', { messageId: 'BLOCKED' }));
      expect(answer.status).toBe(500);
    } finally {
      await db.query(sql.type(AnyRow)`alter table email_log drop constraint email_log_test_block`);
    }
  });
});
