import { randomUUID } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnyRow, createDatabase, sql } from '../../server/db/database.ts';
import { recordEmailSend, recordEmailSends, type SendLogEntry } from '../../server/email/email.queries.ts';
import { createTestDatabase } from '../helpers/database.ts';

const { db, url } = await createTestDatabase();
beforeEach(async () => {
  await db.query(sql.type(AnyRow)`truncate email_log`);
});

const Row = z.object({
  id: z.uuid(),
  status: z.string(),
  category: z.string(),
  source: z.string().nullable(),
  provider_message_id: z.string().nullable(),
  to_addresses: z.array(z.string()),
  from_address: z.string().nullable(),
  subject: z.string().nullable(),
  idempotency_key: z.string().nullable(),
  failed_over: z.boolean(),
  attempt: z.number(),
  tags: z.record(z.string(), z.string()).nullable(),
  last_event: z.string().nullable(),
  last_event_at: z.date().nullable(),
  alerted_at: z.date().nullable(),
  raw: z.unknown(),
  error: z.string().nullable(),
  cost_usd: z.string().nullable(),
});
const rows = () => db.any(sql.type(Row)`select *, cost_usd::text as cost_usd from email_log order by created_at`);

function entry(fields: Partial<SendLogEntry> = {}): SendLogEntry {
  return {
    id: randomUUID(),
    status: 'sent',
    category: 'transactional',
    source: 'api:test',
    provider: 'provider_a',
    provider_message_id: `msg-${randomUUID()}`,
    failed_over: false,
    idempotency_key: 'key-1',
    attempt: 1,
    to: ['Reader@Example.com'],
    cc: [],
    bcc: [],
    from: 'Folio <no-reply@folio.example>',
    subject: 'Hello',
    tags: { folio_log_id: 'x' },
    cost_usd: 0.0004,
    ...fields,
  };
}

/** A row as the delivery-event writer (issue 6) creates it when its event beats the library's write. */
async function eventRow(status: string, messageId: string, fields: { error?: string; id?: string } = {}) {
  return db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into email_log (id, status, category, provider, provider_message_id, to_addresses, last_event, last_event_at, raw, alerted_at, error)
    values (${fields.id ?? randomUUID()}, ${status}, 'unknown', 'provider_a', ${messageId}, '{reader@example.com}', ${status}, now(), ${sql.jsonb({ type: `email.${status}` })},
            ${status === 'bounced' ? sql.fragment`now()` : null}, ${fields.error ?? null})
    returning id`);
}

describe('email status rank', () => {
  it('orders the moving statuses, puts the terminal ones above them, and knows nothing else', async () => {
    const Ranks = z.object({ status: z.string(), rank: z.number().nullable(), terminal: z.boolean() });
    const result = await db.any(sql.type(Ranks)`
      select s as status, email_status_rank(s) as rank, email_status_is_terminal(s) as terminal
      from unnest(array['deferred','sent','delivery_delayed','delivered','opened','clicked','suppressed','failed','bounced','complained','queued']) s`);
    expect(result.map((row) => [row.status, row.rank, row.terminal])).toEqual([
      ['deferred', 1, false],
      ['sent', 2, false],
      ['delivery_delayed', 3, false],
      ['delivered', 4, false],
      ['opened', 5, false],
      ['clicked', 6, false],
      ['suppressed', 100, true],
      ['failed', 100, true],
      ['bounced', 100, true],
      ['complained', 100, true],
      ['queued', null, false],
    ]);
  });
});

describe('record_email_send', () => {
  it('inserts one row with bare lowercase recipients and returns its id', async () => {
    const sent = entry();
    expect(await recordEmailSend(db, sent)).toBe(sent.id);
    expect(await rows()).toEqual([
      expect.objectContaining({ id: sent.id, status: 'sent', to_addresses: ['reader@example.com'], cost_usd: '0.000400', attempt: 1 }),
    ]);
  });

  it('is idempotent for the same id (a rerun of the same attempt)', async () => {
    const sent = entry();
    await recordEmailSend(db, sent);
    await recordEmailSend(db, sent);
    expect(await rows()).toHaveLength(1);
  });

  it('fills the send fields into a row an event created first, keeping the event status and fields', async () => {
    const messageId = 'msg-delivered-first';
    const eventId = await eventRow('delivered', messageId);
    const sent = entry({ provider_message_id: messageId, failed_over: true });
    expect(await recordEmailSend(db, sent)).toBe(eventId);
    const [row] = await rows();
    expect(row).toMatchObject({
      id: eventId,
      status: 'delivered',
      category: 'transactional',
      source: 'api:test',
      from_address: 'Folio <no-reply@folio.example>',
      subject: 'Hello',
      idempotency_key: 'key-1',
      failed_over: true,
      cost_usd: '0.000400',
      last_event: 'delivered',
      raw: { type: 'email.delivered' },
    });
    expect(row!.last_event_at).toBeInstanceOf(Date);
  });

  it('never lets the library overwrite a terminal event status or its error', async () => {
    const messageId = 'msg-bounced-first';
    await eventRow('bounced', messageId, { error: 'Permanent/General' });
    await recordEmailSend(db, entry({ provider_message_id: messageId }));
    expect((await rows())[0]).toMatchObject({ status: 'bounced', error: 'Permanent/General', category: 'transactional' });
    expect((await rows())[0]!.alerted_at).toBeInstanceOf(Date);
  });

  it('moves an event status up when the library reports a higher one, and a library terminal status wins over a moving one', async () => {
    await eventRow('deferred', 'msg-a');
    await recordEmailSend(db, entry({ provider_message_id: 'msg-a', status: 'sent' }));
    const logId = randomUUID();
    await eventRow('sent', 'msg-b', { id: logId });
    await recordEmailSend(db, entry({ id: logId, provider_message_id: undefined, status: 'failed', error: 'provider_a boom' }));
    const byMessage = Object.fromEntries((await rows()).map((row) => [row.provider_message_id, row]));
    expect(byMessage['msg-a']).toMatchObject({ status: 'sent' });
    expect(byMessage['msg-b']).toMatchObject({ status: 'failed', error: 'provider_a boom' });
  });

  it('finds a row an event created under the folio_log_id it read from the tags', async () => {
    const logId = randomUUID();
    await eventRow('delivered', 'msg-tagged', { id: logId });
    expect(await recordEmailSend(db, entry({ id: logId, provider_message_id: 'msg-tagged' }))).toBe(logId);
    expect(await rows()).toHaveLength(1);
  });

  it('keeps one row when many writers race on the same provider message', async () => {
    const ids = await Promise.all(Array.from({ length: 12 }, () => recordEmailSend(db, entry({ provider_message_id: 'msg-race' }))));
    expect(new Set(ids).size).toBe(1);
    expect(await rows()).toHaveLength(1);
  });

  it('writes a batch in one call, ids in entry order, merging entries of the same message', async () => {
    const [a, b, c] = [entry(), entry({ provider_message_id: 'msg-twice' }), entry({ provider_message_id: 'msg-twice', status: 'failed', error: 'late' })];
    const ids = await recordEmailSends(db, [a, b, c]);
    expect(ids).toEqual([a.id, b.id, b.id]);
    expect(await rows()).toHaveLength(2);
    expect((await rows()).find((row) => row.id === b.id)).toMatchObject({ status: 'failed', error: 'late' });
  });

  it('commits without waiting for the flush only in its own statement: the pooled connection keeps synchronous commits', async () => {
    const single = await createDatabase(url, { maximumPoolSize: 1 });
    try {
      const written = entry();
      expect(await recordEmailSends(single, [written])).toEqual([written.id]);
      expect(await single.oneFirst(sql.type(z.object({ synchronous_commit: z.string() }))`show synchronous_commit`)).toBe('on');
      expect((await rows()).map((row) => row.id)).toEqual([written.id]);
    } finally {
      await single.end();
    }
  });

  it('refuses a status it does not know', async () => {
    await expect(recordEmailSend(db, entry({ status: 'queued' as never }))).rejects.toThrow(/unknown status/);
  });
});
