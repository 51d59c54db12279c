import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerOutreachJobs } from '../../jobs/outreach/outreach.worker.ts';
import { AnyRow, sql } from '../../server/db/database.ts';
import { sendOutreachBatch, unsubscribeUrl } from '../../server/outreach/send-outreach-batch.ts';
import { until } from '../helpers/wait.ts';
import { startProductHarness } from './harness.ts';

// Provider A is primary with B as fallback: outreach must still go only to B.
const { app, resend, ses, call, signIn } = await startProductHarness({
  workers: true,
  env: { EMAIL_PRIMARY: 'provider_a', EMAIL_FALLBACK: 'provider_b', CLOUD_CONFIGURATION_SET: 'folio-outreach' },
});
const db = app.database.db;
const linkDeps = { ...app.deps, linkSecret: 'test-download-secret' };

beforeAll(async () => {
  await registerOutreachJobs(app.deps);
});

const deliveries = (campaignId: string) =>
  db.any(sql.type(z.object({ email: z.string(), status: z.string(), error: z.string().nullable() }))`
    select email, status, error from outreach_deliveries where campaign_id = ${campaignId} order by email`);
const settled = (campaignId: string) =>
  until(
    () => deliveries(campaignId),
    (rows) => rows.every((row) => row.status !== 'queued' && row.status !== 'sending'),
    30_000,
    'campaign',
  );
const campaign = (recipients: string[], name = 'spring-launch') => ({
  name,
  subject: 'Accessible PDFs in minutes',
  text: 'Hello from Folio.',
  html: '<p>Hello from Folio.</p>',
  recipients,
});

describe('outreach campaigns', () => {
  it('sends over provider B only, in the outreach configuration set, with one-click unsubscribe, skipping opted-out addresses', async () => {
    const admin = await signIn('admin@folio.example');
    await db.query(sql.type(AnyRow)`insert into unsubscribes (email, reason, source) values ('left@example.com', 'unsubscribed', 'page')`);
    await db.query(sql.type(AnyRow)`insert into prospects (email, status) values ('bounced@example.com', 'bounced')`);
    const started = await call('POST', '/api/admin/outreach/campaigns', {
      token: admin.token,
      body: campaign(['Lead@Example.com', 'left@example.com', 'bounced@example.com', 'lead@example.com']),
    });
    expect(started).toMatchObject({ status: 200, body: { recipients: 3, batches: 1 } });
    expect(await settled(started.body.campaignId)).toEqual([
      { email: 'bounced@example.com', status: 'skipped', error: 'prospect bounced' },
      { email: 'lead@example.com', status: 'sent', error: null },
      { email: 'left@example.com', status: 'skipped', error: 'unsubscribed: unsubscribed' },
    ]);
    expect(resend.requests).toHaveLength(0);
    expect(ses.delivered).toHaveLength(1);
    const sent = ses.delivered[0]!.body;
    expect(sent.Destination?.ToAddresses).toEqual(['lead@example.com']);
    expect(sent.ConfigurationSetName).toBe('folio-outreach');
    expect(sent.EmailTags).toContainEqual({ Name: 'campaign', Value: 'spring-launch' });
    const headers = Object.fromEntries((sent.Content?.Simple?.Headers ?? []).map((header) => [header.Name, header.Value]));
    expect(headers['List-Unsubscribe']).toMatch(/^<https:\/\/folio\.example\/api\/unsubscribe\?token=[^>]+>$/);
    expect(headers['List-Unsubscribe-Post']).toBe('List-Unsubscribe=One-Click');
    expect(sent.Content?.Simple?.Body?.Text?.Data).toContain('Unsubscribe: https://folio.example/api/unsubscribe?token=');

    const log = await db.one(sql.type(z.object({ provider: z.string(), category: z.string(), configuration_set: z.string() }))`
      select provider, category, configuration_set from email_log where source = 'outreach:spring-launch'`);
    expect(log).toEqual({ provider: 'provider_b', category: 'marketing', configuration_set: 'folio-outreach' });
    const send = await db.one(sql.type(z.object({ campaign: z.string(), prospect_email: z.string() }))`select campaign, prospect_email from email_sends`);
    expect(send).toEqual({ campaign: 'spring-launch', prospect_email: 'lead@example.com' });
    const view = await call('GET', `/api/admin/outreach/campaigns/${started.body.campaignId}`, { token: admin.token });
    expect(view.body.deliveries).toEqual({ sent: 1, skipped: 2 });
  });

  it('never fails over to provider A, even when provider B is unavailable', async () => {
    const admin = await signIn('admin@folio.example');
    ses.always({ kind: 'error', type: 'TooManyRequestsException' });
    try {
      const started = await call('POST', '/api/admin/outreach/campaigns', { token: admin.token, body: campaign(['busy@example.com'], 'pinned') });
      const [row] = await settled(started.body.campaignId);
      expect(row).toMatchObject({ status: 'failed' });
      expect(resend.requests).toHaveLength(0);
    } finally {
      ses.always(undefined);
    }
  });

  it('a batch run twice mails each address once', async () => {
    const admin = await signIn('admin@folio.example');
    // Queued rows without their job: this test runs the batch itself.
    const campaignId = await db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into outreach_campaigns (name, subject, text, created_by, recipients) values ('twice', 'Hi', 'Hello', ${admin.id}, 2) returning id`);
    await db.query(
      sql.type(AnyRow)`insert into outreach_deliveries (campaign_id, email) values (${campaignId}, 'a@example.com'), (${campaignId}, 'b@example.com')`,
    );
    const job = { campaignId, emails: ['a@example.com', 'b@example.com'] };
    const [first, second] = await Promise.all([sendOutreachBatch(linkDeps, job), sendOutreachBatch(linkDeps, job)]);
    expect((first.sent ?? 0) + (second.sent ?? 0)).toBe(2);
    expect(await sendOutreachBatch(linkDeps, job)).toEqual({ taken: 2 });
    expect(ses.delivered).toHaveLength(2);
  });

  it('refuses bad campaigns and non-admins', async () => {
    const admin = await signIn('admin@folio.example');
    const plain = await signIn('plain@example.com');
    expect((await call('POST', '/api/admin/outreach/campaigns', { token: plain.token, body: campaign(['x@example.com']) })).status).toBe(403);
    for (const body of [
      campaign([]),
      campaign(['not an address']),
      campaign(['x@example.com'], 'has space'),
      { ...campaign(['x@example.com']), html: undefined, text: undefined },
      campaign(Array.from({ length: 10_001 }, (_, i) => `p${i}@example.com`)),
    ]) {
      expect((await call('POST', '/api/admin/outreach/campaigns', { token: admin.token, body })).status).toBe(400);
    }
    expect(ses.requests).toHaveLength(0);
  });
});

describe('one-click unsubscribe', () => {
  it('works once and forever: the page never unsubscribes by itself, the POST does, again and again, and later campaigns skip the address', async () => {
    const link = new URL(unsubscribeUrl(linkDeps, 'reader@example.com'));
    const path = `${link.pathname}${link.search}`;
    const page = await call('GET', path);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<form method="post"');
    expect(await db.maybeOne(sql.type(AnyRow)`select 1 from unsubscribes where email = 'reader@example.com'`)).toBeNull();

    const oneClick = () => call('POST', path, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
    expect((await oneClick()).status).toBe(200);
    expect((await oneClick()).status).toBe(200);
    expect((await call('POST', path)).status).toBe(200);
    const row = await db.one(
      sql.type(z.object({ reason: z.string(), source: z.string() }))`select reason, source from unsubscribes where email = 'reader@example.com'`,
    );
    expect(row).toEqual({ reason: 'unsubscribed', source: 'one-click' });

    const tampered = path.replace(/token=([^&]{5})/, 'token=AAAAA');
    expect(
      (await call('POST', tampered, { body: 'List-Unsubscribe=One-Click', headers: { 'content-type': 'application/x-www-form-urlencoded' } })).status,
    ).toBe(404);
    expect((await call('GET', '/api/unsubscribe')).status).toBe(404);

    const admin = await signIn('admin@folio.example');
    const started = await call('POST', '/api/admin/outreach/campaigns', { token: admin.token, body: campaign(['reader@example.com'], 'after') });
    expect(await settled(started.body.campaignId)).toEqual([{ email: 'reader@example.com', status: 'skipped', error: 'unsubscribed: unsubscribed' }]);
    expect(ses.requests).toHaveLength(0);
  });
});
