import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { recordEmailEvent } from '../../server/delivery-events/delivery-events.queries.ts';
import { recordEmailSend } from '../../server/email/email.queries.ts';
import { startTestApp } from '../helpers/app.ts';

const app = await startTestApp({ env: { ADMIN_EMAILS: 'boss@folio.example' } });
const db = app.database.db;
let adminToken = '';
let userToken = '';

async function get(path: string, token = adminToken) {
  const response = await fetch(`${app.baseUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
  // biome-ignore lint/suspicious/noExplicitAny: the tests read whatever the route answered, field by field
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

beforeAll(async () => {
  adminToken = await app.token('boss@folio.example');
  userToken = await app.token('someone@folio.example');
  const send = (fields: Record<string, unknown>) =>
    recordEmailSend(db, {
      id: randomUUID(),
      status: 'sent',
      category: 'transactional',
      source: 'test',
      provider: 'provider_a',
      provider_message_id: `m-${randomUUID()}`,
      to: ['reader@example.com'],
      subject: 'Your invoice 100%',
      ...fields,
    } as never);
  await send({});
  await send({ category: 'auth', subject: 'Sign in to Folio' });
  await send({ provider: 'provider_b', to: ['Other@Example.com'], subject: 'Weekly digest' });
  await send({ status: 'failed', error_kind: 'rejected', provider_message_id: undefined, subject: 'Broken' });
  await recordEmailEvent(db, {
    provider: 'provider_a',
    providerMessageId: 'bounced-1',
    event: 'bounced',
    to: ['gone@example.com'],
    subject: 'Welcome',
    suppress: { addresses: ['gone@example.com'], reason: 'hard_bounce' },
  });
});

describe('GET /api/admin/email-log', () => {
  it('is for admins only', async () => {
    expect((await get('/api/admin/email-log', userToken)).status).toBe(403);
    expect((await fetch(`${app.baseUrl}/api/admin/email-log`)).status).toBe(401);
  });

  it('pages newest first with a status summary', async () => {
    const first = await get('/api/admin/email-log?pageSize=2');
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ total: 5, page: 1, pageSize: 2, summary: { sent: 3, failed: 1, bounced: 1 } });
    expect(first.body.rows).toHaveLength(2);
    expect(first.body.rows[0].subject).toBe('Welcome');
    const third = await get('/api/admin/email-log?pageSize=2&page=3');
    expect(third.body.rows).toHaveLength(1);
  });

  it('filters by status, category, provider, exact recipient and subject substring', async () => {
    const subjects = async (query: string) => ((await get(`/api/admin/email-log?${query}`)).body.rows as { subject: string }[]).map((r) => r.subject).sort();
    expect(await subjects('status=bounced')).toEqual(['Welcome']);
    expect(await subjects('category=auth')).toEqual(['Sign in to Folio']);
    expect(await subjects('provider=provider_b')).toEqual(['Weekly digest']);
    expect(await subjects('recipient=OTHER@example.com')).toEqual(['Weekly digest']);
    expect(await subjects('recipient=example.com')).toEqual([]);
    expect(await subjects('subject=invoice%20100%25')).toEqual(['Your invoice 100%']);
    expect(await subjects('subject=%25')).toEqual(['Your invoice 100%']);
    const filtered = await get('/api/admin/email-log?status=sent&provider=provider_a');
    expect(filtered.body.total).toBe(2);
    // the summary ignores the status filter itself
    expect(filtered.body.summary).toEqual({ sent: 2, failed: 1, bounced: 1 });
  });

  it('answers 400 for an unknown status', async () => {
    expect((await get('/api/admin/email-log?status=lost')).status).toBe(400);
  });
});

describe('email suppressions', () => {
  it('lists the suppressions', async () => {
    const answer = await get('/api/admin/email-suppressions');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ total: 1, suppressions: [{ email: 'gone@example.com', reason: 'hard_bounce', source: 'provider_a' }] });
  });

  it('removes a suppression and writes an email_unsuppress audit entry', async () => {
    await db.query(sql.type(AnyRow)`insert into email_suppressions (email, reason) values ('manual@example.com', 'manual')`);
    const response = await fetch(`${app.baseUrl}/api/admin/email-suppressions/${encodeURIComponent('Manual@Example.com')}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    const body = await response.json();
    expect([response.status, body]).toEqual([200, { removed: true, email: 'manual@example.com', reason: 'manual' }]);
    const audit = await db.any(sql.type(z.object({ action: z.string(), subject: z.string(), details: z.unknown(), actor: z.string().nullable() }))`
      select a.action, a.subject, a.details, u.email as actor from admin_audit_log a left join users u on u.id = a.actor_id`);
    expect(audit).toEqual([{ action: 'email_unsuppress', subject: 'manual@example.com', details: { reason: 'manual' }, actor: 'boss@folio.example' }]);
    const again = await fetch(`${app.baseUrl}/api/admin/email-suppressions/manual%40example.com`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${adminToken}` },
    });
    expect(again.status).toBe(404);
  });

  it('refuses removal by a non-admin', async () => {
    const response = await fetch(`${app.baseUrl}/api/admin/email-suppressions/gone%40example.com`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${userToken}` },
    });
    expect(response.status).toBe(403);
    expect((await get('/api/admin/email-suppressions')).body.total).toBe(1);
  });
});

describe('GET /metrics', () => {
  it('serves Prometheus text with the alarm inputs', async () => {
    await fetch(`${app.baseUrl}/api/admin/email-log`, { headers: { authorization: `Bearer ${adminToken}` } });
    const response = await fetch(`${app.baseUrl}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await response.text();
    for (const name of [
      'folio_email_failovers_total',
      'folio_email_deferred_dead_letters_total',
      'folio_email_events_total',
      'folio_queue_backlog',
      'folio_http_responses_total',
    ]) {
      expect(text).toContain(`# TYPE ${name}`);
    }
    expect(text).toMatch(/folio_http_responses_total\{class="2xx"\} [1-9]/);
  });
});
