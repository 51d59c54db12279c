import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { AnyRow, sql } from '../../server/db/database.ts';
import { startTestApp, TEST_PROXY_SECRET } from '../helpers/app.ts';

/** A relay route stand-in: records each request; answers per recipient from `answers` (default 200). */
const seen: { to: string; secret: unknown; body: Record<string, unknown> }[] = [];
const answers = new Map<string, number>();
const relay = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
    seen.push({ to: String(body.to), secret: req.headers['x-proxy-secret'], body });
    const status = answers.get(String(body.to)) ?? 200;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        status === 200
          ? { status: 'sent', ok: true }
          : status === 422
            ? { code: 'EMAIL_SUPPRESSED', message: 'suppressed' }
            : { code: 'EMAIL_FAILED', message: 'failed' },
      ),
    );
  });
});
await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
const relayUrl = `http://127.0.0.1:${(relay.address() as AddressInfo).port}/internal/send-email`;
afterAll(() => new Promise((resolve) => relay.close(resolve)));

const app = await startTestApp({ env: { INTERNAL_SEND_EMAIL_URL: relayUrl } });
const unset = await startTestApp({ env: {} });
const db = app.database.db;

async function run(cadence: string, options: { secret?: string; baseUrl?: string } = {}) {
  const response = await fetch(`${options.baseUrl ?? app.baseUrl}/internal/audit-digest?cadence=${cadence}`, {
    method: 'POST',
    headers: { 'x-proxy-secret': options.secret ?? TEST_PROXY_SECRET },
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

beforeEach(async () => {
  seen.length = 0;
  answers.clear();
  await db.query(sql.type(AnyRow)`truncate audit_digest_subscriptions, admin_audit_log`);
});

describe('POST /internal/audit-digest', () => {
  it('answers 403 on a wrong or missing secret', async () => {
    expect((await run('daily', { secret: 'nope' })).status).toBe(403);
    expect((await fetch(`${app.baseUrl}/internal/audit-digest?cadence=daily`, { method: 'POST' })).status).toBe(403);
  });

  it('answers 400 for an unknown cadence', async () => {
    expect((await run('hourly')).status).toBe(400);
  });

  it('answers 500 when INTERNAL_SEND_EMAIL_URL is unset', async () => {
    expect((await run('daily', { baseUrl: unset.baseUrl })).status).toBe(500);
  });

  it('sends nothing while nobody subscribes', async () => {
    expect(await run('daily')).toEqual({ status: 200, body: { ok: true, cadence: 'daily', entries: 0, recipients: 0, sent: 0, suppressed: 0, failed: 0 } });
    expect(seen).toEqual([]);
  });

  it('sends the cadence subscribers the window of audit entries through the relay', async () => {
    await db.query(
      sql.type(AnyRow)`insert into audit_digest_subscriptions (email, cadence) values ('a@folio.example', 'daily'), ('b@folio.example', 'weekly')`,
    );
    await db.query(
      sql.type(
        AnyRow,
      )`insert into admin_audit_log (action, subject, created_at) values ('email_unsuppress', 'x@example.com', now() - interval '2 hours'), ('email_unsuppress', 'old@example.com', now() - interval '3 days')`,
    );
    const daily = await run('daily');
    expect(daily).toMatchObject({ status: 200, body: { ok: true, entries: 1, sent: 1 } });
    expect(seen.map((s) => [s.to, s.secret])).toEqual([['a@folio.example', TEST_PROXY_SECRET]]);
    expect(String(seen[0]?.body.text)).toContain('x@example.com');
    expect(String(seen[0]?.body.text)).not.toContain('old@example.com');
    seen.length = 0;
    expect((await run('weekly')).body).toMatchObject({ ok: true, entries: 2, sent: 1 });
    expect(seen.map((s) => s.to)).toEqual(['b@folio.example']);
  });

  it('answers 502 with counts when any digest failed, counts 422 as suppressed, and keeps sending to the others', async () => {
    await db.query(
      sql.type(
        AnyRow,
      )`insert into audit_digest_subscriptions (email, cadence) values ('a@folio.example', 'daily'), ('b@folio.example', 'daily'), ('c@folio.example', 'daily')`,
    );
    answers.set('a@folio.example', 500);
    answers.set('b@folio.example', 422);
    const answer = await run('daily');
    expect(answer).toMatchObject({ status: 502, body: { ok: false, sent: 1, suppressed: 1, failed: 1 } });
    expect(seen.map((s) => s.to).sort()).toEqual(['a@folio.example', 'b@folio.example', 'c@folio.example']);
  });

  it('200 when the only non-sent recipient was suppressed', async () => {
    await db.query(sql.type(AnyRow)`insert into audit_digest_subscriptions (email, cadence) values ('a@folio.example', 'daily')`);
    answers.set('a@folio.example', 422);
    expect(await run('daily')).toMatchObject({ status: 200, body: { ok: true, suppressed: 1 } });
  });
});
