import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { recordEmailSend, type SendLogEntry } from '../../server/email/email.queries.ts';
import { recordEmailEvent, releaseAlertClaim, type EmailEvent, type EmailEventInput } from '../../server/delivery-events/delivery-events.queries.ts';
import { createTestDatabase } from '../helpers/database.ts';

const { db } = await createTestDatabase();
beforeEach(async () => {
  await db.query(sql.type(AnyRow)`truncate email_log, email_suppressions`);
});

const Row = z.object({
  id: z.uuid(),
  status: z.string(),
  category: z.string(),
  source: z.string().nullable(),
  provider_message_id: z.string().nullable(),
  to_addresses: z.array(z.string()),
  subject: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  last_event: z.string().nullable(),
  last_event_at: z.date().nullable(),
  alerted_at: z.date().nullable(),
  raw: z.unknown(),
  error: z.string().nullable(),
});
const rows = () =>
  db.any(
    sql.type(
      Row,
    )`select id, status, category, source, provider_message_id, to_addresses, subject, idempotency_key, last_event, last_event_at, alerted_at, raw, error from email_log order by created_at`,
  );
const suppressions = () => db.any(sql.type(z.object({ email: z.string(), reason: z.string() }))`select email, reason from email_suppressions order by email`);

function sendEntry(messageId: string, fields: Partial<SendLogEntry> = {}): SendLogEntry {
  return {
    id: randomUUID(),
    status: 'sent',
    category: 'transactional',
    source: 'api:test',
    provider: 'provider_a',
    provider_message_id: messageId,
    failed_over: false,
    idempotency_key: 'key-1',
    attempt: 1,
    to: ['Reader@Example.com'],
    cc: [],
    bcc: [],
    from: 'Folio <no-reply@folio.example>',
    subject: 'Hello',
    tags: {},
    ...fields,
  };
}

const t0 = Date.parse('2026-11-23T10:00:00Z');
function event(messageId: string, name: EmailEvent, minute: number, extra: Partial<EmailEventInput> = {}): EmailEventInput {
  return {
    provider: 'provider_a',
    providerMessageId: messageId,
    event: name,
    occurredAt: new Date(t0 + minute * 60_000),
    raw: { type: `email.${name}`, minute },
    ...extra,
  };
}

describe('record_email_event: send log status', () => {
  const moving: [string, EmailEvent, string][] = [
    ['deferred', 'sent', 'sent'],
    ['sent', 'delivery_delayed', 'delivery_delayed'],
    ['sent', 'delivered', 'delivered'],
    ['delivered', 'opened', 'opened'],
    ['opened', 'clicked', 'clicked'],
    ['delivered', 'sent', 'delivered'],
    ['clicked', 'delivered', 'clicked'],
    ['delivered', 'delivery_delayed', 'delivered'],
    ['sent', 'bounced', 'bounced'],
    ['delivered', 'complained', 'complained'],
    ['sent', 'failed', 'failed'],
    ['sent', 'suppressed', 'suppressed'],
    ['bounced', 'delivered', 'bounced'],
    ['complained', 'clicked', 'complained'],
    ['suppressed', 'bounced', 'suppressed'],
    ['sent', 'bounce_transient', 'sent'],
    ['delivered', 'bounce_transient', 'delivered'],
    ['bounced', 'bounce_transient', 'bounced'],
  ];
  for (const [from, incoming, expected] of moving) {
    it(`${from} + ${incoming} -> ${expected}`, async () => {
      const messageId = `m-${randomUUID()}`;
      await recordEmailSend(db, sendEntry(messageId, { status: from === 'deferred' ? 'deferred' : 'sent' }));
      if (from !== 'deferred' && from !== 'sent') await recordEmailEvent(db, event(messageId, from as EmailEvent, 1));
      const result = await recordEmailEvent(db, event(messageId, incoming, 2, { error: 'reason' }));
      expect(result.status).toBe(expected);
      const [row] = await rows();
      expect(row?.status).toBe(expected);
      // last_event keeps the latest raw event even when the status does not move
      expect(row?.last_event).toBe(incoming);
      expect(row?.raw).toEqual({ type: `email.${incoming}`, minute: 2 });
    });
  }

  it('keeps the newest event by time in last_event when events arrive out of order', async () => {
    const messageId = `m-${randomUUID()}`;
    await recordEmailEvent(db, event(messageId, 'delivered', 5));
    await recordEmailEvent(db, event(messageId, 'sent', 1));
    const [row] = await rows();
    expect(row?.status).toBe('delivered');
    expect(row?.last_event).toBe('delivered');
    expect(row?.last_event_at?.getTime()).toBe(t0 + 5 * 60_000);
  });

  it('creates a row with category unknown and bare lowercase recipients for mail the library never sent', async () => {
    const result = await recordEmailEvent(
      db,
      event('foreign-1', 'delivered', 0, { to: ['Someone <Someone@Example.COM>'.replace(/.*<|>/g, ''), ' Other@Example.com '], subject: 'Sign in' }),
    );
    const [row] = await rows();
    expect(row).toMatchObject({
      id: result.send_id,
      status: 'delivered',
      category: 'unknown',
      to_addresses: ['someone@example.com', 'other@example.com'],
      subject: 'Sign in',
    });
  });

  it('keeps the failure reason in error and never replaces it', async () => {
    const messageId = `m-${randomUUID()}`;
    await recordEmailEvent(db, event(messageId, 'bounced', 1, { error: 'Permanent: General' }));
    await recordEmailEvent(db, event(messageId, 'complained', 2, { error: 'abuse' }));
    await recordEmailEvent(db, event(messageId, 'delivered', 3, { error: 'ignored' }));
    const [row] = await rows();
    expect(row?.status).toBe('bounced');
    expect(row?.error).toBe('Permanent: General');
  });

  it('merges with record_email_send in either order without losing a field', async () => {
    const a = `m-${randomUUID()}`;
    await recordEmailEvent(db, event(a, 'delivered', 1));
    await recordEmailSend(db, sendEntry(a));
    const b = `m-${randomUUID()}`;
    await recordEmailSend(db, sendEntry(b));
    await recordEmailEvent(db, event(b, 'delivered', 1));
    const all = await rows();
    expect(all).toHaveLength(2);
    for (const row of all) {
      expect(row).toMatchObject({
        status: 'delivered',
        category: 'transactional',
        source: 'api:test',
        idempotency_key: 'key-1',
        to_addresses: ['reader@example.com'],
        subject: 'Hello',
        last_event: 'delivered',
      });
    }
  });

  it('adopts the library row through the folio_log_id tag when the row has no message id yet', async () => {
    const id = randomUUID();
    await recordEmailSend(db, sendEntry('', { id, status: 'deferred', provider_message_id: undefined }));
    const result = await recordEmailEvent(db, event('late-id', 'delivered', 1, { logId: id }));
    expect(result.send_id).toBe(id);
    const all = await rows();
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ status: 'delivered', provider_message_id: 'late-id' });
  });

  it('does not adopt a tagged row of another provider or message; the event gets a row of its own', async () => {
    const id = randomUUID();
    await recordEmailSend(db, sendEntry('', { id, status: 'deferred', provider: 'provider_a', provider_message_id: undefined }));
    const other = await recordEmailEvent(db, { ...event('b-msg', 'delivered', 1, { logId: id }), provider: 'provider_b' });
    expect(other.send_id).not.toBe(id);
    await recordEmailEvent(db, event('a-msg', 'sent', 1, { logId: id }));
    const again = await recordEmailEvent(db, event('a-msg-2', 'delivered', 2, { logId: id }));
    expect(again.send_id).not.toBe(id);
    expect((await rows()).map((r) => r.provider_message_id).sort()).toEqual(['a-msg', 'a-msg-2', 'b-msg']);
  });

  it('rejects an unknown event name', async () => {
    await expect(recordEmailEvent(db, event('x', 'exploded' as EmailEvent, 0))).rejects.toThrow(/unknown event/);
  });
});

describe('record_email_event: alert claim', () => {
  for (const failure of ['bounced', 'complained', 'failed', 'suppressed'] as const) {
    it(`claims once when a row first reaches ${failure}`, async () => {
      const messageId = `m-${randomUUID()}`;
      await recordEmailSend(db, sendEntry(messageId));
      const first = await recordEmailEvent(db, event(messageId, failure, 1));
      const again = await recordEmailEvent(db, event(messageId, failure, 2));
      expect([first.alert, again.alert]).toEqual([true, false]);
      expect((await rows())[0]?.alerted_at).toBeInstanceOf(Date);
    });
  }

  it('never alerts for moving events or bounce_transient', async () => {
    const messageId = `m-${randomUUID()}`;
    const results = [];
    for (const [i, name] of (['sent', 'delivery_delayed', 'delivered', 'opened', 'clicked', 'bounce_transient'] as const).entries()) {
      results.push(await recordEmailEvent(db, event(messageId, name, i)));
    }
    expect(results.map((r) => r.alert)).toEqual([false, false, false, false, false, false]);
    expect((await rows())[0]?.alerted_at).toBeNull();
  });

  it('a library-side failure takes no claim and raises no alert', async () => {
    await recordEmailSend(db, sendEntry('', { status: 'failed', error_kind: 'rejected', provider_message_id: undefined, error: 'validation_error' }));
    await recordEmailSend(db, sendEntry(`m-${randomUUID()}`, { status: 'failed', error_kind: 'unavailable', error: 'quota' }));
    expect((await rows()).map((r) => [r.status, r.alerted_at])).toEqual([
      ['failed', null],
      ['failed', null],
    ]);
  });

  it('alerts again after the claim is released', async () => {
    const messageId = `m-${randomUUID()}`;
    const first = await recordEmailEvent(db, event(messageId, 'bounced', 1));
    expect(await releaseAlertClaim(db, first.send_id)).toBe(true);
    expect(await releaseAlertClaim(db, first.send_id)).toBe(false);
    const again = await recordEmailEvent(db, event(messageId, 'bounced', 1));
    expect(again.alert).toBe(true);
  });

  it('gives exactly one winner to concurrent failure events', async () => {
    const messageId = `m-${randomUUID()}`;
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => recordEmailEvent(db, event(messageId, i % 2 ? 'bounced' : 'complained', i))));
    expect(results.filter((r) => r.alert)).toHaveLength(1);
    expect(new Set(results.map((r) => r.send_id)).size).toBe(1);
  });

  it('outreach (alert false) neither alerts nor claims, but still suppresses', async () => {
    const result = await recordEmailEvent(
      db,
      event('out-1', 'complained', 1, { alert: false, suppress: { addresses: ['Prospect@Example.com'], reason: 'complaint' } }),
    );
    expect(result.alert).toBe(false);
    expect((await rows())[0]?.alerted_at).toBeNull();
    expect(await suppressions()).toEqual([{ email: 'prospect@example.com', reason: 'complaint' }]);
  });

  it('backfill sets the claim with no alert on a row it creates, and is ignored for a known row', async () => {
    const fresh = await recordEmailEvent(db, event('old-1', 'bounced', 1, { backfill: true }));
    expect(fresh.alert).toBe(false);
    const [row] = await rows();
    expect(row?.alerted_at).toBeInstanceOf(Date);
    await recordEmailSend(db, sendEntry('known-1'));
    const known = await recordEmailEvent(db, event('known-1', 'bounced', 1, { backfill: true }));
    expect(known.alert).toBe(true);
  });

  it('adds suppressions with the given reason, lowercased, once', async () => {
    await recordEmailEvent(db, event('s-1', 'bounced', 1, { suppress: { addresses: ['A@Example.com'], reason: 'hard_bounce' } }));
    await recordEmailEvent(db, event('s-2', 'complained', 1, { suppress: { addresses: ['a@example.com', 'B@example.com'], reason: 'complaint' } }));
    expect(await suppressions()).toEqual([
      { email: 'a@example.com', reason: 'hard_bounce' },
      { email: 'b@example.com', reason: 'complaint' },
    ]);
  });
});

/** A small seeded generator so a failing interleaving can be replayed. */
function mulberry32(seed: number) {
  let a = seed;
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('record_email_event: property', () => {
  // Histories a single message can have: moving events in time order and at
  // most one terminal failure (an event covers the whole email).
  const histories: EmailEvent[][] = [
    ['sent', 'delivered'],
    ['sent', 'delivery_delayed', 'delivered', 'opened', 'clicked'],
    ['sent', 'bounced'],
    ['sent', 'bounce_transient', 'delivery_delayed', 'bounced'],
    ['sent', 'delivered', 'complained'],
    ['sent', 'delivered', 'opened', 'complained'],
    ['sent', 'failed'],
    ['sent', 'suppressed'],
    ['sent', 'bounce_transient', 'delivered'],
  ];

  it('any interleaving of record_email_send and the events gives the in-order row and at most one alert', async () => {
    const random = mulberry32(20261123);
    const snapshot = async (messageId: string) =>
      db.one(sql.type(Row.omit({ id: true, last_event_at: true, alerted_at: true }).extend({ claimed: z.boolean() }))`
        select status, category, source, provider_message_id, to_addresses, subject, idempotency_key, last_event, raw, error, alerted_at is not null as claimed
          from email_log where provider_message_id = ${messageId}`);
    for (let round = 0; round < 60; round++) {
      const history = histories[round % histories.length]!;
      type Step = { kind: 'send' } | { kind: 'event'; name: EmailEvent; minute: number };
      const steps: Step[] = [{ kind: 'send' }, ...history.map((name, minute): Step => ({ kind: 'event', name, minute }))];
      const run = async (messageId: string, order: Step[]) => {
        let alerts = 0;
        for (const step of order) {
          if (step.kind === 'send') await recordEmailSend(db, sendEntry(messageId));
          else if ((await recordEmailEvent(db, event(messageId, step.name, step.minute, { error: `${step.name} reason` }))).alert) alerts++;
        }
        return alerts;
      };
      const inOrderId = `in-${round}-${randomUUID()}`;
      const inOrderAlerts = await run(inOrderId, steps);
      const shuffled = [...steps];
      for (let i = shuffled.length - 1; i > 0; i--) {
        const j = Math.floor(random() * (i + 1));
        [shuffled[i], shuffled[j]] = [shuffled[j]!, shuffled[i]!];
      }
      const shuffledId = `sh-${round}-${randomUUID()}`;
      const shuffledAlerts = await run(shuffledId, shuffled);
      const expected = { ...(await snapshot(inOrderId)), provider_message_id: 'x' };
      const actual = { ...(await snapshot(shuffledId)), provider_message_id: 'x' };
      expect(actual, `round ${round}: ${shuffled.map((s) => (s.kind === 'send' ? 'send' : s.name)).join(',')}`).toEqual(expected);
      expect(shuffledAlerts).toBeLessThanOrEqual(1);
      expect(shuffledAlerts).toBe(inOrderAlerts);
    }
  });
});
