import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { AnyRow, sql } from '../../server/db/database.ts';
import { AUDIT_DIGEST_QUEUES, registerAuditDigestJobs } from '../../jobs/audit-digest/audit-digest.worker.ts';
import { startTestApp } from '../helpers/app.ts';

const keys: string[] = [];
const relay = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    keys.push(String(JSON.parse(Buffer.concat(chunks).toString('utf8')).idempotencyKey));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('{"status":"sent","ok":true}');
  });
});
await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
afterAll(() => new Promise((resolve) => relay.close(resolve)));
const app = await startTestApp({
  workers: true,
  env: { INTERNAL_SEND_EMAIL_URL: `http://127.0.0.1:${(relay.address() as AddressInfo).port}/internal/send-email` },
});

async function runJob(queue: string) {
  const id = await app.boss.send(queue, {});
  if (!id) throw new Error('job not queued');
  const deadline = Date.now() + 20_000;
  for (;;) {
    const job = await app.boss.getJobById(queue, id);
    if (job?.state === 'completed') return;
    if (job?.state === 'failed' || Date.now() > deadline) throw new Error(`digest job ${job?.state}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('audit digest workers', () => {
  it('are scheduled daily and on Mondays at 14:00 UTC', async () => {
    await registerAuditDigestJobs(app.deps);
    const schedules = await app.boss.getSchedules();
    expect(schedules.find((s) => s.name === AUDIT_DIGEST_QUEUES.daily)).toMatchObject({ cron: '0 14 * * *', timezone: 'UTC' });
    expect(schedules.find((s) => s.name === AUDIT_DIGEST_QUEUES.weekly)).toMatchObject({ cron: '0 14 * * 1', timezone: 'UTC' });
  });

  it('run twice with the same idempotency keys, so the relay sends each digest once', async () => {
    await app.database.db.query(
      sql.type(AnyRow)`insert into audit_digest_subscriptions (email, cadence) values ('a@folio.example', 'daily'), ('b@folio.example', 'daily')`,
    );
    await runJob(AUDIT_DIGEST_QUEUES.daily);
    const first = [...keys].sort();
    expect(first).toHaveLength(2);
    keys.length = 0;
    await runJob(AUDIT_DIGEST_QUEUES.daily);
    expect([...keys].sort()).toEqual(first);
  });
});
