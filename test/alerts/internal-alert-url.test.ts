import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { startTestApp, TEST_PROXY_SECRET } from '../helpers/app.ts';

/** Another deployment's alert route: answers the scripted status, records what it got. */
let status = 200;
const received: { secret: unknown; body: Record<string, unknown> }[] = [];
const alertRoute = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received.push({ secret: req.headers['x-proxy-secret'], body: JSON.parse(Buffer.concat(chunks).toString('utf8')) });
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(
        status === 200
          ? { success: true, delivery: 'delivered' }
          : status === 503
            ? { code: 'ALERT_CHANNEL_UNCONFIGURED', message: 'x' }
            : { code: 'ALERT_DELIVERY_FAILED', message: 'x' },
      ),
    );
  });
});
await new Promise<void>((resolve) => alertRoute.listen(0, '127.0.0.1', resolve));
afterAll(() => new Promise((resolve) => alertRoute.close(resolve)));

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const app = await startTestApp({
  env: { PROVIDER_A_WEBHOOK_SECRET: SECRET, INTERNAL_ALERT_URL: `http://127.0.0.1:${(alertRoute.address() as AddressInfo).port}/internal/email-alert` },
});
const db = app.database.db;
beforeEach(async () => {
  status = 200;
  received.length = 0;
  await db.query(sql.type(AnyRow)`truncate email_log, email_suppressions`);
});

async function postBounce() {
  const body = readFileSync(new URL('../fixtures/resend/email.bounced.json', import.meta.url), 'utf8');
  const id = `msg_${randomUUID()}`;
  const now = new Date();
  const response = await fetch(`${app.baseUrl}/api/webhooks/resend-events`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'svix-id': id,
      'svix-timestamp': String(Math.floor(now.getTime() / 1000)),
      'svix-signature': new Webhook(SECRET).sign(id, now, body),
    },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
const claimed = () => db.oneFirst(sql.type(z.object({ claimed: z.boolean() }))`select alerted_at is not null as claimed from email_log`);

describe('alerts through INTERNAL_ALERT_URL', () => {
  it('posts the alert with x-proxy-secret and keeps the claim when it was delivered', async () => {
    expect((await postBounce()).status).toBe(200);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ secret: TEST_PROXY_SECRET, body: { type: 'email_delivery_failure', recipients: ['delivered@resend.dev'] } });
    expect(await claimed()).toBe(true);
  });

  it('a 502 from the alert route makes the webhook answer 502 and releases the claim', async () => {
    status = 502;
    expect((await postBounce()).status).toBe(502);
    expect(await claimed()).toBe(false);
  });

  it('a 503 (unconfigured) releases the claim but the webhook still answers 200', async () => {
    status = 503;
    expect(await postBounce()).toMatchObject({ status: 200, body: { alert: 'unconfigured' } });
    expect(await claimed()).toBe(false);
  });
});
