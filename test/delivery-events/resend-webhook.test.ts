import { readFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { startMessengerFake } from '../fakes/messenger.ts';
import { startResendFake } from '../fakes/resend.ts';
import { createTestClock, startTestApp } from '../helpers/app.ts';

// The Standard Webhooks / Svix public test vector (notes §5.1).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: '1614265330',
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const SECRET = VECTOR.secret;
const ALERT_INBOX = 'alerts@folio.example';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/resend/${name}.json`, import.meta.url), 'utf8');
const withData = (name: string, data: Record<string, unknown>) => {
  const event = JSON.parse(fixture(name));
  event.data = { ...event.data, ...data };
  return JSON.stringify(event);
};

const resend = await startResendFake({ apiKey: 're_events' });
const messenger = await startMessengerFake({ token: 'bot-token' });
const clock = createTestClock();
const app = await startTestApp({
  clock,
  env: {
    PROVIDER_A_API_KEY: 're_events',
    PROVIDER_A_BASE_URL: resend.url,
    PROVIDER_A_WEBHOOK_SECRET: SECRET,
    ALERT_EMAIL: ALERT_INBOX,
    MESSENGER_API_BASE_URL: messenger.url,
    MESSENGER_BOT_TOKEN: 'bot-token',
    MESSENGER_CHAT_ID: '4242',
  },
});
// The same receiver with no alert channel configured at all.
const bare = await startTestApp({ env: { PROVIDER_A_WEBHOOK_SECRET: SECRET } });
afterAll(async () => {
  await resend.close();
  await messenger.close();
});

const db = app.database.db;
beforeEach(async () => {
  clock.set(new Date());
  resend.reset();
  messenger.reset();
  await db.query(sql.type(AnyRow)`truncate email_log, email_suppressions, admin_notification_settings`);
});

const Row = z.object({
  id: z.uuid(),
  status: z.string(),
  category: z.string(),
  last_event: z.string().nullable(),
  error: z.string().nullable(),
  alerted_at: z.date().nullable(),
  to_addresses: z.array(z.string()),
});
const rows = (database = db) =>
  database.any(sql.type(Row)`select id, status, category, last_event, error, alerted_at, to_addresses from email_log order by created_at`);
const alertOutcomes = (database = db) =>
  database.anyFirst(sql.type(z.object({ outcome: z.string().nullable() }))`
    select alert_outcome as outcome from email_log where category <> 'alert' order by created_at`);
const suppressions = () => db.any(sql.type(z.object({ email: z.string(), reason: z.string() }))`select email, reason from email_suppressions order by email`);

async function post(body: string, headers: Record<string, string>, baseUrl = app.baseUrl) {
  const response = await fetch(`${baseUrl}/api/webhooks/resend-events`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

function signed(body: string, options: { at?: Date; library?: 'standardwebhooks' | 'svix' } = {}) {
  const id = `msg_${randomUUID().replaceAll('-', '')}`;
  const at = options.at ?? clock.now();
  const signature = options.library === 'svix' ? new SvixWebhook(SECRET).sign(id, at, body) : new StandardWebhook(SECRET).sign(id, at, body);
  return { 'svix-id': id, 'svix-timestamp': String(Math.floor(at.getTime() / 1000)), 'svix-signature': signature };
}

describe('POST /api/webhooks/resend-events: signature', () => {
  it('accepts the Standard Webhooks test vector at its own time', async () => {
    clock.set(new Date(Number(VECTOR.timestamp) * 1000 + 60_000));
    const answer = await post(VECTOR.body, {
      'svix-id': VECTOR.id,
      'svix-timestamp': VECTOR.timestamp,
      'svix-signature': `v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc= ${VECTOR.signature}`,
    });
    expect(answer.status).toBe(200);
    expect(await rows()).toEqual([]);
  });

  it('refuses the vector with a changed body, a truncated signature or the wrong version', async () => {
    clock.set(new Date(Number(VECTOR.timestamp) * 1000));
    const headers = { 'svix-id': VECTOR.id, 'svix-timestamp': VECTOR.timestamp };
    expect((await post('{"test": 2432232315}', { ...headers, 'svix-signature': VECTOR.signature })).status).toBe(400);
    expect((await post(VECTOR.body, { ...headers, 'svix-signature': VECTOR.signature.slice(0, -4) })).status).toBe(400);
    expect((await post(VECTOR.body, { ...headers, 'svix-signature': VECTOR.signature.replace('v1,', 'v2,') })).status).toBe(400);
    expect((await post(VECTOR.body, { ...headers, 'svix-signature': 'v1,dawfeoifkpqwoekfpqoekf' })).status).toBe(400);
  });

  for (const missing of ['svix-id', 'svix-timestamp', 'svix-signature']) {
    it(`answers 400 and records nothing without ${missing}`, async () => {
      const headers: Record<string, string> = signed(fixture('email.bounced'));
      delete headers[missing];
      const answer = await post(fixture('email.bounced'), headers);
      expect(answer.status).toBe(400);
      expect(await rows()).toEqual([]);
    });
  }

  for (const [label, offset] of [
    ['more than 5 minutes old', -301_000],
    ['more than 5 minutes ahead', 301_000],
  ] as const) {
    it(`answers 400 and records nothing for a timestamp ${label}`, async () => {
      const body = fixture('email.bounced');
      const answer = await post(body, signed(body, { at: new Date(clock.now().getTime() + offset) }));
      expect(answer.status).toBe(400);
      expect(await rows()).toEqual([]);
      expect(await suppressions()).toEqual([]);
    });
  }

  it('accepts a timestamp just inside the window', async () => {
    const body = fixture('email.delivered');
    expect((await post(body, signed(body, { at: new Date(clock.now().getTime() - 290_000) }))).status).toBe(200);
  });

  it('answers 400 for a signature made with another secret', async () => {
    const body = fixture('email.bounced');
    const id = 'msg_other';
    const at = clock.now();
    const signature = new StandardWebhook(`whsec_${Buffer.from('another secret of 24 by').toString('base64')}`).sign(id, at, body);
    const answer = await post(body, { 'svix-id': id, 'svix-timestamp': String(Math.floor(at.getTime() / 1000)), 'svix-signature': signature });
    expect(answer.status).toBe(400);
    expect(await rows()).toEqual([]);
  });
});

describe('POST /api/webhooks/resend-events: events', () => {
  it('records a Permanent bounce signed by standardwebhooks, suppresses the recipient and alerts by email and messenger', async () => {
    const body = fixture('email.bounced');
    const answer = await post(body, signed(body));
    expect(answer).toMatchObject({ status: 200, body: { status: 'bounced', alert: 'delivered' } });
    const [row] = await rows();
    expect(row).toMatchObject({ status: 'bounced', category: 'unknown', last_event: 'bounced', to_addresses: ['delivered@resend.dev'] });
    expect(row?.error).toMatch(/^Permanent: Suppressed/);
    expect(row?.alerted_at).toBeInstanceOf(Date);
    expect(await suppressions()).toEqual([{ email: 'delivered@resend.dev', reason: 'hard_bounce' }]);
    expect(messenger.messages).toHaveLength(1);
    expect(messenger.messages[0]).toMatchObject({ chatId: '4242' });
    expect(resend.delivered.map((m) => m.body.to)).toEqual([[ALERT_INBOX]]);
  });

  it('alerts once for a redelivered event', async () => {
    const body = fixture('email.bounced');
    await post(body, signed(body));
    const again = await post(body, signed(body));
    expect(again.status).toBe(200);
    expect(messenger.messages).toHaveLength(1);
  });

  it('records a complaint signed by svix and suppresses the complainant', async () => {
    const body = fixture('email.complained');
    const answer = await post(body, signed(body, { library: 'svix' }));
    expect(answer.status).toBe(200);
    expect((await rows())[0]?.status).toBe('complained');
    expect(await suppressions()).toEqual([{ email: 'delivered@resend.dev', reason: 'complaint' }]);
  });

  it('records a Transient bounce as bounced and alerts without suppressing', async () => {
    const body = fixture('email.bounced.transient');
    const answer = await post(body, signed(body));
    expect(answer.body).toMatchObject({ status: 'bounced', alert: 'delivered' });
    expect(await suppressions()).toEqual([]);
  });

  it('never suppresses multi-recipient mail', async () => {
    const body = withData('email.bounced', { email_id: randomUUID(), to: ['a@example.com', 'b@example.com'] });
    await post(body, signed(body));
    expect(await suppressions()).toEqual([]);
    expect((await rows())[0]?.status).toBe('bounced');
  });

  it('maps email.suppressed to status suppressed and email.failed to failed, with their reasons', async () => {
    const suppressed = withData('email.suppressed', { email_id: randomUUID() });
    const failed = withData('email.failed', { email_id: randomUUID() });
    await post(suppressed, signed(suppressed));
    await post(failed, signed(failed));
    // the alert emails the two failures raised are rows of their own (category alert)
    const all = (await rows()).filter((r) => r.category === 'unknown');
    expect(all.map((r) => [r.status, r.error])).toEqual([
      ['suppressed', expect.stringContaining('account-level suppression list')],
      ['failed', 'reached_daily_quota'],
    ]);
  });

  it('strips the email. prefix for moving events and keeps the later delivered', async () => {
    for (const name of ['email.sent', 'email.delivery_delayed', 'email.delivered']) {
      const body = fixture(name);
      expect((await post(body, signed(body))).status).toBe(200);
    }
    expect(await rows()).toMatchObject([{ status: 'delivered', last_event: 'delivered', alerted_at: null }]);
    expect(messenger.messages).toEqual([]);
  });

  it('never moves provider-A mail to opened or clicked (outreach configuration only): the status stays delivered, last_event follows', async () => {
    for (const name of ['email.delivered', 'email.clicked']) {
      const body = fixture(name);
      expect((await post(body, signed(body))).status).toBe(200);
    }
    expect(await rows()).toMatchObject([{ status: 'delivered', last_event: 'clicked', alerted_at: null }]);
  });

  for (const name of ['email.received', 'contact.created']) {
    it(`acknowledges and ignores ${name}`, async () => {
      const body = fixture(name);
      const answer = await post(body, signed(body));
      expect(answer.status).toBe(200);
      expect(await rows()).toEqual([]);
    });
  }

  it('answers 200 with a warning for a signed email event without an email id', async () => {
    const event = JSON.parse(fixture('email.delivered'));
    delete event.data.email_id;
    const body = JSON.stringify(event);
    const answer = await post(body, signed(body));
    expect(answer).toMatchObject({ status: 200, body: { warning: 'no email id' } });
    expect(await rows()).toEqual([]);
  });

  it('answers 502 and releases the claim when the alert fails, so the redelivery alerts again', async () => {
    await db.query(sql.type(AnyRow)`insert into admin_notification_settings (alert_type, channels) values ('email_delivery_failure', '{messenger}')`);
    messenger.failNext(1);
    const body = fixture('email.bounced');
    const failed = await post(body, signed(body));
    expect(failed).toMatchObject({ status: 502, body: { alert: 'failed' } });
    expect((await rows())[0]?.alerted_at).toBeNull();
    expect(await alertOutcomes()).toEqual(['failed']);
    const redelivered = await post(body, signed(body));
    expect(redelivered).toMatchObject({ status: 200, body: { alert: 'delivered' } });
    expect(messenger.messages).toHaveLength(1);
    expect((await rows())[0]?.alerted_at).toBeInstanceOf(Date);
    expect(await alertOutcomes()).toEqual(['delivered']);
  });

  it('answers 200, records not_configured and releases the claim when no alert channel is configured', async () => {
    const body = fixture('email.bounced');
    const answer = await post(body, signed(body), bare.baseUrl);
    expect(answer).toMatchObject({ status: 200, body: { alert: 'unconfigured' } });
    const [row] = await rows(bare.database.db);
    expect(row).toMatchObject({ status: 'bounced', alerted_at: null });
    expect(await alertOutcomes(bare.database.db)).toEqual(['not_configured']);
  });

  it('answers 200 with no alert when the alert type is muted, and keeps the claim', async () => {
    await db.query(sql.type(AnyRow)`insert into admin_notification_settings (alert_type, enabled) values ('email_delivery_failure', false)`);
    const body = fixture('email.bounced');
    const answer = await post(body, signed(body));
    expect(answer).toMatchObject({ status: 200, body: { alert: 'disabled' } });
    expect(messenger.messages).toEqual([]);
    expect((await rows())[0]?.alerted_at).toBeInstanceOf(Date);
  });
});
