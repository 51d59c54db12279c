import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { createTestClock } from '../helpers/app.ts';
import { seedConvertedFile, startProductHarness } from './harness.ts';

const clock = createTestClock();
const { app, resend, call, signIn } = await startProductHarness({ clock });
const db = app.database.db;

const sentText = (index = 0) => (resend.delivered[index]!.body as { text: string }).text;
const linkIn = (text: string, path: string) => new RegExp(`https://folio\\.example(${path}[^\\s]+)`).exec(text)![1]!;

describe('POST /api/files/:fileId/share', () => {
  it('mails the link to each recipient and counts only the emails that went out', async () => {
    const owner = await signIn('owner@example.com');
    const { fileId } = await seedConvertedFile(app, owner.id, { html: '<!doctype html><html><body><h1>Shared words</h1></body></html>' });
    await db.query(sql.type(AnyRow)`insert into email_suppressions (email, reason) values ('gone@example.com', 'hard_bounce')`);
    // One provider refusal, whichever of the two sendable recipients reaches the fake first.
    resend.next({ kind: 'error', status: 422, name: 'validation_error', message: 'The `to` field is invalid.' });
    const answer = await call('POST', `/api/files/${fileId}/share`, {
      token: owner.token,
      body: { recipients: ['first@example.com', 'gone@example.com', 'Second@Example.com'], message: 'Have a look' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.recipients).toBe(1);
    expect(answer.body.unsentRecipients).toHaveLength(2);
    expect(answer.body.unsentRecipients).toContainEqual({ email: 'gone@example.com', status: 'suppressed', reason: 'Recipient suppressed: hard bounce' });
    expect(answer.body.unsentRecipients).toContainEqual({
      email: expect.stringMatching(/^(first|second)@example\.com$/),
      status: 'failed',
      reason: expect.stringContaining('invalid'),
    });
    expect(resend.delivered).toHaveLength(1);
    const mail = resend.delivered[0]!.body as { reply_to: string[]; subject: string; text: string };
    expect(mail.reply_to).toEqual(['owner@example.com']);
    expect(mail.subject).toBe('owner@example.com shared “Annual report” with you');
    expect(mail.text).toContain('Have a look');
    const categories = await db.anyFirst(sql.type(z.object({ category: z.string() }))`select category from email_log where source = 'api:share'`);
    expect(categories).toEqual(['notification', 'notification', 'notification']);

    const opened = await call('GET', linkIn(mail.text, '/api/shared/'));
    expect(opened.status).toBe(200);
    expect(opened.text).toContain('<h1>Shared words</h1>');
    expect(opened.headers.get('content-security-policy')).toMatch(/^sandbox/);
  });

  it('is for the owner only, and only for a converted file', async () => {
    const owner = await signIn('owner2@example.com');
    const stranger = await signIn('stranger@example.com');
    const { fileId } = await seedConvertedFile(app, owner.id);
    expect((await call('POST', `/api/files/${fileId}/share`, { token: stranger.token, body: { recipients: ['a@example.com'] } })).status).toBe(404);
    await db.query(sql.type(AnyRow)`update files set status = 'uploaded' where id = ${fileId}`);
    const unconverted = await call('POST', `/api/files/${fileId}/share`, { token: owner.token, body: { recipients: ['a@example.com'] } });
    expect(unconverted).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    expect(resend.requests).toHaveLength(0);
  });

  it('refuses more than 20 recipients and invalid addresses before sending anything', async () => {
    const owner = await signIn('owner3@example.com');
    const { fileId } = await seedConvertedFile(app, owner.id);
    const many = Array.from({ length: 21 }, (_, i) => `r${i}@example.com`);
    expect((await call('POST', `/api/files/${fileId}/share`, { token: owner.token, body: { recipients: many } })).status).toBe(400);
    expect((await call('POST', `/api/files/${fileId}/share`, { token: owner.token, body: { recipients: ['not an address'] } })).status).toBe(400);
    expect((await call('POST', `/api/files/${fileId}/share`, { token: owner.token, body: { recipients: [] } })).status).toBe(400);
    expect(resend.requests).toHaveLength(0);
  });

  it('allows 10 shares per user per hour, then answers 429 with Retry-After', async () => {
    const owner = await signIn('busy@example.com');
    const { fileId } = await seedConvertedFile(app, owner.id);
    for (let i = 0; i < 10; i++) {
      expect((await call('POST', `/api/files/${fileId}/share`, { token: owner.token, body: { recipients: [`r${i}@example.com`] } })).status).toBe(200);
    }
    const refused = await call('POST', `/api/files/${fileId}/share`, { token: owner.token, body: { recipients: ['late@example.com'] } });
    expect(refused).toMatchObject({ status: 429, body: { code: 'TOO_MANY_REQUESTS' } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(resend.delivered).toHaveLength(10);
  });

  it('serves nothing for a tampered link, a deleted file or an expired share', async () => {
    const owner = await signIn('owner4@example.com');
    const { fileId } = await seedConvertedFile(app, owner.id);
    const first = await call('POST', `/api/files/${fileId}/share`, { token: owner.token, body: { recipients: ['x@example.com'] } });
    const path = new URL(first.body.link).pathname;
    expect((await call('GET', path)).status).toBe(200);
    expect((await call('GET', `${path.slice(0, -2)}AA`)).status).toBe(404);
    clock.advance(31 * 24 * 60 * 60 * 1000);
    expect((await call('GET', path)).status).toBe(404);
    clock.set(new Date());
    await db.query(sql.type(AnyRow)`delete from files where id = ${fileId}`);
    expect((await call('GET', path)).status).toBe(404);
  });
});

describe('team invites', () => {
  async function tenantAdmin(email: string) {
    const admin = await signIn(email);
    const tenantId = await db.oneFirst(sql.type(z.object({ id: z.uuid() }))`insert into tenants (name) values ('Acme Docs') returning id`);
    await db.query(sql.type(AnyRow)`update users set tenant_id = ${tenantId}, is_tenant_admin = true where id = ${admin.id}`);
    return { ...admin, tenantId };
  }

  it('mails a signed link that joins the invitee to the tenant, once', async () => {
    const admin = await tenantAdmin('lead@acme.example');
    const invited = await call('POST', '/api/team/invites', { token: admin.token, body: { email: 'New.Member@Example.com' } });
    expect(invited.status).toBe(200);
    expect(invited.body).toMatchObject({ inviteSent: true, status: 'sent' });
    const mail = resend.delivered[0]!.body as { to: string[]; subject: string };
    expect(mail.to).toEqual(['new.member@example.com']);
    expect(mail.subject).toBe('lead@acme.example invited you to Acme Docs on Folio');
    const token = new URL(linkIn(sentText(), '/team/join'), 'https://folio.example').searchParams.get('token')!;

    const other = await signIn('someone.else@example.com');
    expect((await call('POST', '/api/team/invites/accept', { token: other.token, body: { token } })).status).toBe(403);

    const member = await signIn('new.member@example.com');
    const accepted = await call('POST', '/api/team/invites/accept', { token: member.token, body: { token } });
    expect(accepted).toMatchObject({ status: 200, body: { tenantId: admin.tenantId, joined: true } });
    expect((await call('GET', '/api/me', { token: member.token })).body.tenantId).toBe(admin.tenantId);
    // A second click is not an error; the invite stays spent.
    expect((await call('POST', '/api/team/invites/accept', { token: member.token, body: { token } })).status).toBe(200);
    expect((await call('POST', '/api/team/invites', { token: admin.token, body: { email: 'new.member@example.com' } })).status).toBe(409);
  });

  it('reports inviteSent false when the email did not go out', async () => {
    const admin = await tenantAdmin('lead2@acme.example');
    await db.query(sql.type(AnyRow)`insert into email_suppressions (email, reason) values ('blocked@example.com', 'complaint')`);
    const suppressed = await call('POST', '/api/team/invites', { token: admin.token, body: { email: 'blocked@example.com' } });
    expect(suppressed.body).toMatchObject({ inviteSent: false, status: 'suppressed', error: 'Recipient suppressed: complaint' });
    resend.next({ kind: 'error', status: 503 });
    const failed = await call('POST', '/api/team/invites', { token: admin.token, body: { email: 'later@example.com' } });
    expect(failed.body).toMatchObject({ inviteSent: false, status: 'failed' });
    const row = await db.one(sql.type(z.object({ last_send_status: z.string() }))`select last_send_status from team_invites where email = 'later@example.com'`);
    expect(row.last_send_status).toBe('failed');
  });

  it('is for tenant admins only, and an expired link joins nobody', async () => {
    const admin = await tenantAdmin('lead3@acme.example');
    const plain = await signIn('plain@example.com');
    expect((await call('POST', '/api/team/invites', { token: plain.token, body: { email: 'x@example.com' } })).status).toBe(403);
    await call('POST', '/api/team/invites', { token: admin.token, body: { email: 'slow@example.com' } });
    const token = new URL(linkIn(sentText(), '/team/join'), 'https://folio.example').searchParams.get('token')!;
    clock.advance(8 * 24 * 60 * 60 * 1000);
    const slow = await signIn('slow@example.com');
    expect((await call('POST', '/api/team/invites/accept', { token: slow.token, body: { token } })).status).toBe(404);
    clock.set(new Date());
  });
});
