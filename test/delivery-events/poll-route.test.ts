import { describe, expect, it } from 'vitest';
import { startTestApp, TEST_PROXY_SECRET } from '../helpers/app.ts';

const app = await startTestApp({ env: {} });

describe('POST /internal/email-events/poll as a cron job calls it', () => {
  it('accepts a POST with no body and no content type', async () => {
    const response = await fetch(`${app.baseUrl}/internal/email-events/poll`, { method: 'POST', headers: { 'x-proxy-secret': TEST_PROXY_SECRET } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ ok: false, error: 'provider A is not configured' });
  });
});
