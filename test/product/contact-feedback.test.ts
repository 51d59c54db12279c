import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { seedConvertedFile, startProductHarness } from './harness.ts';

const { app, resend, call, signIn } = await startProductHarness();
const db = app.database.db;

type Mail = { to: string[]; reply_to?: string[]; subject: string; text: string };
const mails = () => resend.delivered.map((message) => message.body as Mail);
const from = (ip: string) => ({ 'x-forwarded-for': ip });

describe('POST /api/contact', () => {
  it('notifies the team address with Reply-To on the sender, and keeps the message', async () => {
    const answer = await call('POST', '/api/contact', {
      headers: from('198.51.100.1'),
      body: { email: 'Visitor@Example.com', name: 'Ada <script>', message: 'Do you convert\nscanned PDFs?' },
    });
    expect(answer).toMatchObject({ status: 200, body: { received: true, notified: true } });
    expect(mails()).toHaveLength(1);
    expect(mails()[0]).toMatchObject({ to: ['team@folio.example'], reply_to: ['visitor@example.com'], subject: 'Contact: Ada <script>' });
    expect(mails()[0]!.text).toContain('Do you convert\nscanned PDFs?');
    expect((resend.delivered[0]!.body as { html: string }).html).toContain('Ada &lt;script&gt;');
    const row = await db.one(sql.type(z.object({ email: z.string(), remote_address: z.string(), send_status: z.string() }))`
      select email, remote_address, send_status from contact_messages`);
    expect(row).toEqual({ email: 'visitor@example.com', remote_address: '198.51.100.1', send_status: 'sent' });
    const log = await db.one(
      sql.type(z.object({ category: z.string(), source: z.string() }))`select category, source from email_log where source = 'api:contact'`,
    );
    expect(log.category).toBe('notification');
  });

  it('answers a filled honeypot like a success and keeps and sends nothing', async () => {
    const before = await db.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from contact_messages`);
    const answer = await call('POST', '/api/contact', {
      headers: from('198.51.100.2'),
      body: { email: 'bot@example.com', name: 'Bot', message: 'Buy now', website: 'https://spam.example' },
    });
    expect(answer).toMatchObject({ status: 200, body: { received: true } });
    expect(resend.requests).toHaveLength(0);
    expect(await db.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from contact_messages`)).toBe(before);
  });

  it('allows 5 messages per IP per hour, then 429 with Retry-After; another IP is not held back', async () => {
    const body = { email: 'eager@example.com', name: 'Eager', message: 'Hello' };
    for (let i = 0; i < 5; i++) expect((await call('POST', '/api/contact', { headers: from('198.51.100.3'), body })).status).toBe(200);
    const refused = await call('POST', '/api/contact', { headers: from('198.51.100.3'), body });
    expect(refused).toMatchObject({ status: 429, body: { code: 'TOO_MANY_REQUESTS' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await call('POST', '/api/contact', { headers: from('198.51.100.4'), body })).status).toBe(200);
    expect(resend.delivered).toHaveLength(6);
  });

  it('keeps the message and says notified false when the team mail fails; refuses bad input', async () => {
    resend.next({ kind: 'error', status: 422, name: 'validation_error', message: 'Invalid `to` field.' });
    const answer = await call('POST', '/api/contact', { headers: from('198.51.100.5'), body: { email: 'x@example.com', name: 'X', message: 'Lost?' } });
    expect(answer).toMatchObject({ status: 200, body: { received: true, notified: false } });
    expect(await db.oneFirst(sql.type(z.object({ s: z.string() }))`select send_status as s from contact_messages where message = 'Lost?'`)).toBe('failed');
    for (const body of [
      { email: 'not-an-address', name: 'X', message: 'Hi' },
      { email: 'x@example.com', name: '', message: 'Hi' },
      { email: 'x@example.com', name: 'X', message: 'a'.repeat(5001) },
    ]) {
      expect((await call('POST', '/api/contact', { headers: from('198.51.100.6'), body })).status).toBe(400);
    }
  });
});

describe('POST /api/feedback', () => {
  it('keeps the rating with the job and its report verdict and notifies the team, Reply-To the user', async () => {
    const owner = await signIn('rater@example.com');
    const { fileId, jobId } = await seedConvertedFile(app, owner.id, { name: 'Brochure.pdf', wcagStatus: 'failed' });
    const answer = await call('POST', '/api/feedback', { token: owner.token, body: { fileId, rating: 2, comment: 'The table lost its headers' } });
    expect(answer).toMatchObject({ status: 200, body: { notified: true } });
    const row = await db.one(sql.type(z.object({ job_id: z.uuid(), rating: z.number(), wcag_status: z.string(), send_status: z.string() }))`
      select job_id, rating, wcag_status, send_status from conversion_feedback where id = ${answer.body.feedbackId}`);
    expect(row).toEqual({ job_id: jobId, rating: 2, wcag_status: 'failed', send_status: 'sent' });
    expect(mails()[0]).toMatchObject({ to: ['team@folio.example'], reply_to: ['rater@example.com'], subject: 'Feedback 2/5 from rater@example.com' });
    expect(mails()[0]!.text).toContain(`File: Brochure.pdf (${fileId})`);
    expect(mails()[0]!.text).toContain('Report: WCAG failed, 0 findings, 2 pages');
    expect(mails()[0]!.text).toContain('The table lost its headers');
  });

  it('is for the owner of a converted file, with a rating from 1 to 5', async () => {
    const owner = await signIn('rater2@example.com');
    const stranger = await signIn('nosy@example.com');
    const { fileId } = await seedConvertedFile(app, owner.id);
    expect((await call('POST', '/api/feedback', { body: { fileId, rating: 5 } })).status).toBe(401);
    expect((await call('POST', '/api/feedback', { token: stranger.token, body: { fileId, rating: 5 } })).status).toBe(404);
    for (const rating of [0, 6, 2.5]) expect((await call('POST', '/api/feedback', { token: owner.token, body: { fileId, rating } })).status).toBe(400);
    await db.query(sql.type(AnyRow)`update files set status = 'uploaded' where id = ${fileId}`);
    expect((await call('POST', '/api/feedback', { token: owner.token, body: { fileId, rating: 5 } })).status).toBe(409);
    expect(resend.requests).toHaveLength(0);
  });
});
