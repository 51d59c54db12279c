import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { sendShareEmails } from '../../server/sharing/send-share-emails.ts';
import { sendTeamInvite } from '../../server/sharing/send-team-invite.ts';
import { startTestApp, TEST_JWT_SECRET, TEST_PROXY_SECRET } from '../helpers/app.ts';
import { createTokenVerifier } from '../../server/auth/tokens.ts';
import { startResendFake } from '../fakes/resend.ts';
import { startSesFake } from '../fakes/ses.ts';

const resend = await startResendFake({ apiKey: 're_routes' });
const ses = await startSesFake();
afterAll(async () => {
  await Promise.all([resend.close(), ses.close()]);
});
const app = await startTestApp({
  env: {
    PROVIDER_A_API_KEY: 're_routes',
    PROVIDER_A_BASE_URL: resend.url,
    PROVIDER_B_ENDPOINT: ses.url,
    CLOUD_ACCESS_KEY_ID: 'AKIAROUTES',
    CLOUD_SECRET_ACCESS_KEY: 'secret',
    EMAIL_SENDER_DOMAIN: 'folio.example',
    PUBLIC_BASE_URL: 'https://folio.example',
  },
});
const db = app.database.db;
const email = app.deps.email;

beforeEach(async () => {
  resend.reset();
  ses.reset();
  await db.query(sql.type(AnyRow)`truncate email_log, email_suppressions, promo_claims, promos cascade`);
});

async function post(path: string, body: unknown, secret: string | null = TEST_PROXY_SECRET) {
  const response = await fetch(`${app.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(secret ? { 'x-proxy-secret': secret } : {}) },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const relayBody = {
  to: 'reader@example.com',
  subject: 'Weekly audit digest',
  html: '<p>All good</p>',
  category: 'notification',
  source: 'cron:audit-digest',
  tags: [{ name: 'cadence', value: 'weekly' }],
};

describe.each(['/api/send-email', '/internal/send-email'])('POST %s', (path) => {
  it('answers 403 without the right x-proxy-secret and sends nothing', async () => {
    expect((await post(path, relayBody, null)).status).toBe(403);
    expect((await post(path, relayBody, 'wrong')).status).toBe(403);
    expect(resend.requests).toHaveLength(0);
  });

  it('answers 200 with the library result', async () => {
    const { status, body } = await post(path, { ...relayBody, idempotencyKey: 'digest/1' });
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'sent', ok: true, id: expect.any(String), provider: 'provider_a' });
    expect(resend.requests[0]!.headers['idempotency-key']).toBe('digest/1');
    const row = await db.one(
      sql.type(z.object({ source: z.string(), category: z.string() }))`select source, category from email_log where id = ${body.id as string}`,
    );
    expect(row).toEqual({ source: 'cron:audit-digest', category: 'notification' });
  });

  it('passes the provider pin and configuration set through', async () => {
    const { body } = await post(path, { ...relayBody, provider: 'provider_b', cloudConfigurationSet: 'outreach' });
    expect(body).toMatchObject({ status: 'sent', provider: 'provider_b' });
    expect(ses.requests[0]!.json).toMatchObject({ ConfigurationSetName: 'outreach' });
  });

  it('answers 422 EMAIL_SUPPRESSED when every To is suppressed', async () => {
    await db.query(sql.type(AnyRow)`insert into email_suppressions (email, reason) values ('reader@example.com', 'hard_bounce')`);
    const { status, body } = await post(path, relayBody);
    expect(status).toBe(422);
    expect(body).toMatchObject({ code: 'EMAIL_SUPPRESSED', message: 'Recipient suppressed: hard bounce' });
  });

  it('answers 500 EMAIL_FAILED when the send failed', async () => {
    resend.next({ kind: 'error', status: 422 });
    const { status, body } = await post(path, relayBody);
    expect(status).toBe(500);
    expect(body).toMatchObject({ code: 'EMAIL_FAILED' });
  });

  it('answers 400 to a body without subject or content', async () => {
    expect((await post(path, { to: 'a@example.com', category: 'notification', subject: 'x' })).status).toBe(400);
    expect((await post(path, { to: 'a@example.com', category: 'nonsense', subject: 'x', text: 'y' })).status).toBe(400);
    expect(resend.requests).toHaveLength(0);
  });
});

describe('POST /api/promo/:promoSlug/claim', () => {
  beforeEach(async () => {
    await db.query(sql.type(AnyRow)`insert into promos (slug, title) values ('spring', 'Spring pages')`);
  });

  it('mails a one-hour magic sign-in link through the library', async () => {
    const { status, body } = await post('/api/promo/spring/claim', { email: 'New.User@Example.com' }, null);
    expect(status).toBe(200);
    expect(body).toEqual({ ok: true, status: 'sent', message: expect.stringContaining('inbox') });
    const sent = resend.delivered[0]!.body as { to: string[]; text: string; tags: Array<{ name: string; value: string }> };
    expect(sent.to).toEqual(['new.user@example.com']);
    expect(sent.tags).toContainEqual({ name: 'promo', value: 'spring' });
    const token = /https:\/\/folio\.example\/promo\/spring\?token=([\w.-]+)/.exec(sent.text)![1]!;
    const claims = await createTokenVerifier({ secret: TEST_JWT_SECRET })(token);
    expect(claims.email).toBe('new.user@example.com');
    const category = await db.oneFirst(sql.type(z.object({ category: z.string() }))`select category from email_log`);
    expect(category).toBe('auth');
    const claim = await db.one(
      sql.type(z.object({ claims: z.number(), last_send_status: z.string() }))`select claims, last_send_status from promo_claims where promo_slug = 'spring'`,
    );
    expect(claim).toEqual({ claims: 1, last_send_status: 'sent' });
  });

  it('tells the user to request a link themselves when the email did not go out', async () => {
    resend.next({ kind: 'error', status: 422 });
    const { status, body } = await post('/api/promo/spring/claim', { email: 'someone@example.com' }, null);
    expect(status).toBe(200);
    expect(body).toMatchObject({ ok: false, status: 'failed', message: expect.stringContaining('request a sign-in link yourself') });
    await db.query(sql.type(AnyRow)`insert into email_suppressions (email, reason) values ('blocked@example.com', 'manual')`);
    expect((await post('/api/promo/spring/claim', { email: 'blocked@example.com' }, null)).body).toMatchObject({ ok: false, status: 'suppressed' });
  });

  it('answers 404 for an unknown or inactive promo', async () => {
    await db.query(sql.type(AnyRow)`insert into promos (slug, title, active) values ('over', 'Over', false)`);
    expect((await post('/api/promo/nope/claim', { email: 'a@example.com' }, null)).status).toBe(404);
    expect((await post('/api/promo/over/claim', { email: 'a@example.com' }, null)).status).toBe(404);
    expect(resend.requests).toHaveLength(0);
  });
});

describe('share and team-invite helpers', () => {
  it('counts only the share emails that went out and lists the rest as unsent', async () => {
    await db.query(sql.type(AnyRow)`insert into email_suppressions (email, reason) values ('gone@example.com', 'hard_bounce')`);
    resend.next({ kind: 'error', status: 422 });
    const result = await sendShareEmails(email, {
      sharedBy: 'Ada',
      itemName: 'Annual report.pdf',
      link: 'https://folio.example/s/abc',
      recipients: ['first@example.com', 'gone@example.com', 'ok@example.com', 'OK@example.com'],
    });
    // One provider refusal (whichever send reached the fake first) and one suppression: two unsent of three distinct addresses.
    expect(result.recipients).toBe(1);
    expect(result.unsentRecipients).toHaveLength(2);
    expect(result.unsentRecipients).toContainEqual({ email: 'gone@example.com', status: 'suppressed', reason: 'Recipient suppressed: hard bounce' });
    expect(result.unsentRecipients.filter((unsent) => unsent.status === 'failed')).toHaveLength(1);
    expect(resend.delivered).toHaveLength(1);
  });

  it('reports inviteSent only when the send was ok', async () => {
    const invite = { teamName: 'Acme', invitedBy: 'Ada', inviteeEmail: 'new@example.com', acceptUrl: 'https://folio.example/invite/x' };
    expect(await sendTeamInvite(email, invite)).toEqual({ inviteSent: true, status: 'sent' });
    await db.query(sql.type(AnyRow)`insert into email_suppressions (email, reason) values ('new@example.com', 'complaint')`);
    expect(await sendTeamInvite(email, invite)).toEqual({ inviteSent: false, status: 'suppressed', error: 'Recipient suppressed: complaint' });
    resend.next({ kind: 'error', status: 403, name: 'validation_error', message: 'domain not verified' });
    expect(await sendTeamInvite(email, { ...invite, inviteeEmail: 'other@example.com' })).toMatchObject({ inviteSent: false, status: 'failed' });
  });
});
