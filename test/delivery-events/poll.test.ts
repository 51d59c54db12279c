import { randomUUID } from 'node:crypto';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { recordEmailSend } from '../../server/email/email.queries.ts';
import { startMessengerFake } from '../fakes/messenger.ts';
import { startResendFake, type ListedEmail } from '../fakes/resend.ts';
import { createTestClock, startTestApp, TEST_PROXY_SECRET } from '../helpers/app.ts';

const resend = await startResendFake({ apiKey: 're_poll' });
const messenger = await startMessengerFake({ token: 'bot-token' });
const clock = createTestClock();
const app = await startTestApp({
  clock,
  env: {
    PROVIDER_A_API_KEY: 're_poll',
    PROVIDER_A_BASE_URL: resend.url,
    MESSENGER_API_BASE_URL: messenger.url,
    MESSENGER_BOT_TOKEN: 'bot-token',
    MESSENGER_CHAT_ID: '1',
  },
});
afterAll(async () => {
  await resend.close();
  await messenger.close();
});
const db = app.database.db;

/** Resend's list timestamp form: "2026-04-03 22:13:42.674981+00". */
const resendTime = (date: Date) => date.toISOString().replace('T', ' ').replace('Z', '000+00');

function email(minutesAgo: number, lastEvent: string, fields: Partial<ListedEmail> = {}): ListedEmail {
  return {
    id: randomUUID(),
    to: ['reader@example.com'],
    from: 'Folio <no-reply@folio.example>',
    created_at: resendTime(new Date(clock.now().getTime() - minutesAgo * 60_000)),
    subject: `Mail ${minutesAgo}`,
    bcc: null,
    cc: null,
    reply_to: null,
    last_event: lastEvent,
    scheduled_at: null,
    ...fields,
  };
}

async function poll() {
  const response = await fetch(`${app.baseUrl}/internal/email-events/poll`, {
    method: 'POST',
    headers: { 'x-proxy-secret': TEST_PROXY_SECRET, 'content-type': 'application/json' },
    body: '{}',
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const count = () => db.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from email_log where category <> 'alert'`);
const row = (id: string) =>
  db.one(
    sql.type(
      z.object({ status: z.string(), last_event: z.string().nullable(), alerted_at: z.date().nullable() }),
    )`select status, last_event, alerted_at from email_log where provider_message_id = ${id}`,
  );

beforeEach(async () => {
  clock.set(new Date());
  resend.reset();
  resend.listed.length = 0;
  messenger.reset();
  await db.query(sql.type(AnyRow)`truncate email_log, email_suppressions`);
});

describe('POST /internal/email-events/poll', () => {
  it('refuses a wrong x-proxy-secret', async () => {
    const response = await fetch(`${app.baseUrl}/internal/email-events/poll`, {
      method: 'POST',
      headers: { 'x-proxy-secret': 'nope', 'content-type': 'application/json' },
      body: '{}',
    });
    expect(response.status).toBe(403);
  });

  it('reads at most 5 pages of 700 emails and answers 200 with ok false, truncated true', async () => {
    for (let i = 0; i < 700; i++) resend.listed.push(email(i, 'delivered'));
    const answer = await poll();
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: false, truncated: true, pages: 5, seen: 500, recorded: 500 });
    expect(await count()).toBe(500);
    const lists = resend.requests.filter((r) => r.method === 'GET');
    expect(lists).toHaveLength(5);
    expect(lists.every((r) => r.path.includes('limit=100'))).toBe(true);
  });

  it('records only new emails and changed last_event, and says ok when the list ends', async () => {
    const a = email(1, 'sent');
    const b = email(2, 'delivered');
    resend.listed.push(a, b);
    expect((await poll()).body).toMatchObject({ ok: true, truncated: false, recorded: 2, unchanged: 0 });
    expect((await poll()).body).toMatchObject({ ok: true, recorded: 0, unchanged: 2 });
    a.last_event = 'delivered';
    expect((await poll()).body).toMatchObject({ recorded: 1, unchanged: 1 });
    expect(await row(a.id)).toMatchObject({ status: 'delivered', last_event: 'delivered' });
  });

  it('reads a listed opened or clicked as delivered: provider-A mail is never outreach', async () => {
    const opened = email(1, 'opened');
    const clicked = email(2, 'clicked');
    resend.listed.push(opened, clicked);
    expect((await poll()).body).toMatchObject({ ok: true, recorded: 2 });
    expect(await row(opened.id)).toMatchObject({ status: 'delivered', last_event: 'opened' });
    expect(await row(clicked.id)).toMatchObject({ status: 'delivered', last_event: 'clicked' });
    expect((await poll()).body).toMatchObject({ recorded: 0, unchanged: 2 });
  });

  it('alerts once for a failure of mail the library logged, however old, and never suppresses on a bounce', async () => {
    const old = email(600, 'bounced');
    resend.listed.push(old);
    await recordEmailSend(db, {
      id: randomUUID(),
      status: 'sent',
      category: 'transactional',
      provider: 'provider_a',
      provider_message_id: old.id,
      to: ['reader@example.com'],
      subject: 'Old',
    } as never);
    expect((await poll()).body).toMatchObject({ alerts: 1, backfilled: 0 });
    expect(messenger.messages).toHaveLength(1);
    expect((await poll()).body).toMatchObject({ alerts: 0, unchanged: 1 });
    expect(await db.anyFirst(sql.type(z.object({ email: z.string() }))`select email from email_suppressions`)).toEqual([]);
  });

  it('backfill rule: mail first seen, over an hour old and before the oldest log row, is recorded with the claim set and no alert', async () => {
    await recordEmailSend(db, {
      id: randomUUID(),
      status: 'sent',
      category: 'transactional',
      provider: 'provider_a',
      provider_message_id: 'first-logged',
      to: ['x@example.com'],
      subject: 'First',
    } as never);
    await db.query(sql.type(AnyRow)`update email_log set created_at = now() - interval '3 hours'`);
    const history = email(240, 'bounced');
    const complaintHistory = email(300, 'complained');
    const recentUnlogged = email(120, 'bounced');
    const fresh = email(10, 'failed');
    resend.listed.push(fresh, recentUnlogged, history, complaintHistory);
    const answer = await poll();
    expect(answer.body).toMatchObject({ ok: true, recorded: 4, backfilled: 2, alerts: 2 });
    expect((await row(history.id)).alerted_at).toBeInstanceOf(Date);
    expect(await db.anyFirst(sql.type(z.object({ email: z.string() }))`select email from email_suppressions`)).toEqual(['reader@example.com']);
    expect(messenger.messages).toHaveLength(2);
  });

  it('alerts again on the next poll when the claim was released', async () => {
    const failed = email(5, 'failed');
    resend.listed.push(failed);
    messenger.failNext(1);
    expect((await poll()).body).toMatchObject({ alerts: 1, alertsFailed: 1 });
    expect((await row(failed.id)).alerted_at).toBeNull();
    expect((await poll()).body).toMatchObject({ alerts: 1, alertsFailed: 0 });
    expect(messenger.messages).toHaveLength(1);
  });

  it('skips list-only states (queued, scheduled, canceled)', async () => {
    resend.listed.push(email(1, 'queued'), email(2, 'scheduled'), email(3, 'canceled'));
    expect((await poll()).body).toMatchObject({ ok: true, skipped: 3, recorded: 0 });
  });
});
