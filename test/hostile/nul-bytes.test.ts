import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sql } from '../../server/db/database.ts';
import { recordEmailEvent } from '../../server/delivery-events/delivery-events.queries.ts';
import { startResendFake } from '../fakes/resend.ts';
import { startTestApp, TEST_PROXY_SECRET } from '../helpers/app.ts';

const resend = await startResendFake({ apiKey: 're_nul' });
afterAll(() => resend.close());
const app = await startTestApp({ env: { PROVIDER_A_API_KEY: 're_nul', PROVIDER_A_BASE_URL: resend.url, EMAIL_SENDER_DOMAIN: 'folio.example' } });

describe('NUL bytes and impossible dates from outside', () => {
  it('a provider event with NULs and a year-99999 date is recorded (NULs dropped, date clamped), not a 500 the provider retries forever', async () => {
    const recorded = await recordEmailEvent(app.deps.db, {
      provider: 'provider_a',
      providerMessageId: 'msg-\u0000-1',
      event: 'bounced',
      occurredAt: new Date('+099999-01-01T00:00:00Z'),
      subject: 'Hello\u0000 there',
      error: 'mailbox\u0000 full',
      raw: { note: 'a\u0000b', list: ['\u0000'] },
      to: ['x\u0000@example.com'],
    });
    expect(recorded.send_id).toBeTruthy();
    const row = await app.deps.db.one(sql.type(z.object({ subject: z.string().nullable(), at: z.date().nullable() }))`
      select subject, last_event_at as at from email_log l where id = ${recorded.send_id}`);
    expect(row.subject).toBe('Hello there');
    expect(row.at!.getTime()).toBeLessThanOrEqual(Date.now() + 24 * 60 * 60 * 1000);
  });

  it('a relayed email whose subject holds a NUL is sent and logged without it', async () => {
    const response = await fetch(`${app.baseUrl}/api/send-email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-proxy-secret': TEST_PROXY_SECRET },
      body: JSON.stringify({ to: 'reader@example.com', subject: 'Weekly\u0000 digest', html: '<p>ok</p>', category: 'notification', source: 'test' }),
    });
    expect(response.status).toBe(200);
    const subjects = await app.deps.db.anyFirst(sql.type(z.object({ subject: z.string().nullable() }))`select subject from email_log where source = 'test'`);
    expect(subjects).toEqual(['Weekly digest']);
  });

  it('a NUL in a URL (an admin filter, a path) is a 400', async () => {
    const token = await app.token('nul-admin@example.com');
    for (const route of ['/api/admin/emails?status=sent%00', '/api/files/%00/figures']) {
      const response = await fetch(`${app.baseUrl}${route}`, { headers: { authorization: `Bearer ${token}` } });
      expect(response.status, route).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'BAD_REQUEST' });
    }
  });
});
