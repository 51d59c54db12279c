import { afterAll, describe, expect, it } from 'vitest';
import { AnyRow, sql } from '../../server/db/database.ts';
import { createTestClock, startTestApp } from '../helpers/app.ts';
import { startResendFake } from '../fakes/resend.ts';

const resend = await startResendFake({ apiKey: 're_promo_limit' });
afterAll(() => resend.close());
const clock = createTestClock(new Date('2026-03-01T10:00:00Z'));
const app = await startTestApp({
  clock,
  env: {
    PROVIDER_A_API_KEY: 're_promo_limit',
    PROVIDER_A_BASE_URL: resend.url,
    EMAIL_SENDER_DOMAIN: 'folio.example',
    PUBLIC_BASE_URL: 'https://folio.example',
  },
});
await app.database.db.query(sql.type(AnyRow)`insert into promos (slug, title) values ('spring', 'Spring pages')`);

/** A claim as it arrives through the local proxy, from `ip`. */
function claim(email: string, ip: string) {
  return fetch(`${app.baseUrl}/api/promo/spring/claim`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
    body: JSON.stringify({ email }),
  });
}

describe('POST /api/promo/:slug/claim is rate limited in PostgreSQL', () => {
  it('mails one address at most 3 times an hour: 40 claims send 3 links, the rest are 429 with Retry-After', async () => {
    const statuses: number[] = [];
    let refused: Response | undefined;
    for (let n = 0; n < 40; n++) {
      const response = await claim('victim@example.com', `198.51.100.${n + 1}`);
      statuses.push(response.status);
      if (response.status === 429) refused ??= response;
      else await response.body?.cancel();
    }
    expect(statuses.filter((status) => status === 200)).toHaveLength(3);
    expect(statuses.filter((status) => status === 429)).toHaveLength(37);
    expect(resend.delivered).toHaveLength(3);
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused!.json()).toMatchObject({ code: 'TOO_MANY_REQUESTS' });
    // an hour on, the inbox may get a link again
    clock.advance(60 * 60 * 1000 + 1000);
    expect((await claim('victim@example.com', '198.51.100.200')).status).toBe(200);
  });

  it('lets one IP make 20 claims an hour, whatever addresses it names', async () => {
    const statuses: number[] = [];
    for (let n = 0; n < 22; n++) {
      const response = await claim(`reader${n}@example.com`, '203.0.113.9');
      statuses.push(response.status);
      await response.body?.cancel();
    }
    expect(statuses.slice(0, 20).every((status) => status === 200)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429]);
    expect((await claim('someone-else@example.com', '203.0.113.10')).status).toBe(200);
  });
});
