import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sql } from '../../server/db/database.ts';
import { POLL_EVENTS_QUEUE, registerDeliveryEventJobs } from '../../jobs/delivery-events/poll.worker.ts';
import { startMessengerFake } from '../fakes/messenger.ts';
import { startResendFake } from '../fakes/resend.ts';
import { startTestApp } from '../helpers/app.ts';

const resend = await startResendFake({ apiKey: 're_worker' });
const messenger = await startMessengerFake({ token: 'bot-token' });
const app = await startTestApp({
  workers: true,
  env: {
    PROVIDER_A_API_KEY: 're_worker',
    PROVIDER_A_BASE_URL: resend.url,
    MESSENGER_API_BASE_URL: messenger.url,
    MESSENGER_BOT_TOKEN: 'bot-token',
    MESSENGER_CHAT_ID: '1',
  },
});
afterAll(async () => {
  await resend.close();
  await messenger.close();
});

async function runJob() {
  const id = await app.boss.send(POLL_EVENTS_QUEUE, {});
  if (!id) throw new Error('job not queued');
  const deadline = Date.now() + 20_000;
  for (;;) {
    const job = await app.boss.getJobById(POLL_EVENTS_QUEUE, id);
    if (job?.state === 'completed') return;
    if (job?.state === 'failed') throw new Error('poll job failed');
    if (Date.now() > deadline) throw new Error(`poll job still ${job?.state}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('email-events.poll worker', () => {
  it('is scheduled every 15 minutes', async () => {
    await registerDeliveryEventJobs(app.deps);
    const schedules = await app.boss.getSchedules();
    expect(schedules.find((s) => s.name === POLL_EVENTS_QUEUE)).toMatchObject({ cron: '*/15 * * * *' });
  });

  it('runs twice with the same result: one row per email, one alert per failure', async () => {
    const now = new Date().toISOString().replace('T', ' ').replace('Z', '000+00');
    const base = { from: 'Folio <no-reply@folio.example>', created_at: now, bcc: null, cc: null, reply_to: null, scheduled_at: null };
    resend.listed.push(
      { ...base, id: randomUUID(), to: ['a@example.com'], subject: 'A', last_event: 'delivered' },
      { ...base, id: randomUUID(), to: ['b@example.com'], subject: 'B', last_event: 'bounced' },
    );
    await runJob();
    const snapshot = () =>
      app.database.db.any(sql.type(z.object({ provider_message_id: z.string(), status: z.string(), claimed: z.boolean() }))`
      select provider_message_id, status, alerted_at is not null as claimed from email_log order by provider_message_id`);
    const first = await snapshot();
    expect(first).toHaveLength(2);
    expect(messenger.messages).toHaveLength(1);
    await runJob();
    expect(await snapshot()).toEqual(first);
    expect(messenger.messages).toHaveLength(1);
  });
});
