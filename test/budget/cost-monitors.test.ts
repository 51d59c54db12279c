import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerBudgetJobs } from '../../jobs/budget/budget.worker.ts';
import { BUDGET_CHECK_QUEUE, COST_MONITORS_QUEUE, SPEND_DIGEST_QUEUE } from '../../server/budget/budget.jobs.ts';
import { checkCostSpike, checkCostTrickle } from '../../server/budget/cost-monitors.ts';
import { readSpendDigest, sendSpendDigest } from '../../server/budget/send-spend-digest.ts';
import { sql } from '../../server/db/database.ts';
import { startResendFake, type ResendFake } from '../fakes/resend.ts';
import { createTestClock, startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';

const KEY = 're_test_monitors';
const HOUR = 3_600_000;
let resend: ResendFake;
let app: TestApp;
const clock = createTestClock();

beforeAll(async () => {
  resend = await startResendFake({ apiKey: KEY });
  app = await startTestApp({
    env: {
      PROVIDER_A_API_KEY: KEY,
      PROVIDER_A_BASE_URL: resend.url,
      ALERT_EMAIL: 'ops@example.com',
      COST_SPIKE_FACTOR: '3',
      COST_SPIKE_MIN_USD: '1',
      COST_TRICKLE_HOURS: '4',
    },
    clock,
  });
}, 60_000);
afterAll(() => resend.close());

async function book(usd: number, at: Date, options: { backend?: string; jobId?: string; metadata?: Record<string, unknown> } = {}) {
  await app.deps.db.query(sql.unsafe`
    insert into cost_ledger (source, job_id, cost_usd, backend, metadata, created_at)
    values ('test', ${options.jobId ?? null}, ${usd}, ${options.backend ?? 'chunked-vision'}, ${sql.jsonb((options.metadata ?? {}) as never)}, ${at.toISOString()}::timestamptz)`);
}

const subjects = () => resend.delivered.map((mail) => String(mail.body.subject));

/** A customer with one conversion job (status and finish time given), for attributing spend and for "completed". */
async function conversionJob(email: string, status: string, finishedAt: Date | null) {
  return app.deps.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    with c as (insert into customers (email, plan_type, credits_remaining) values (${email}, 'paid', 10) returning id),
         u as (insert into users (email, customer_id) select ${email}, id from c returning id, customer_id),
         f as (insert into files (owner_id, original_name, content_type, status) select id, 'a.pdf', 'application/pdf', 'completed' from u returning id, owner_id)
    insert into large_conversion_jobs (file_id, owner_id, customer_id, status, total_pages, total_chunks, finished_at)
    select f.id, f.owner_id, u.customer_id, ${status}, 1, 1, ${finishedAt?.toISOString() ?? null}::timestamptz from f, u
    returning id`);
}

describe('cost spike monitor', () => {
  it('fires once when the last hour is over k x the 7-day hourly median, and again only after it cleared', async () => {
    resend.reset();
    const now = new Date('2026-05-20T12:10:00Z');
    clock.set(now);
    const lastHour = new Date('2026-05-20T11:00:00Z');
    // A busy week: $0.50 in 120 of its 168 hours, so the median hour is $0.50.
    for (let hour = 1; hour <= 120; hour++) await book(0.5, new Date(lastHour.getTime() - hour * HOUR + 60_000));
    await book(1.2, new Date(lastHour.getTime() + 5 * 60_000));
    expect(await checkCostSpike(app.deps)).toMatchObject({ firing: false, detail: { lastHourUsd: 1.2, medianUsd: 0.5 } });

    await book(1, new Date(lastHour.getTime() + 50 * 60_000));
    expect(await checkCostSpike(app.deps)).toMatchObject({ firing: true, alerted: true, detail: { lastHourUsd: 2.2 } });
    clock.advance(20 * 60_000);
    expect(await checkCostSpike(app.deps)).toMatchObject({ firing: true, alerted: false });
    expect(subjects()).toEqual(['Cost spike: $2.20 of model spend in the last hour']);

    // The next hour is quiet: the condition clears; a new spike the hour after is a new alert.
    clock.set(new Date('2026-05-20T13:10:00Z'));
    expect(await checkCostSpike(app.deps)).toMatchObject({ firing: false });
    await book(4, new Date('2026-05-20T13:30:00Z'));
    clock.set(new Date('2026-05-20T14:05:00Z'));
    expect(await checkCostSpike(app.deps)).toMatchObject({ firing: true, alerted: true });
    expect(subjects()).toHaveLength(2);
  });

  it('never calls a spend under COST_SPIKE_MIN_USD a spike, even after a silent week', async () => {
    resend.reset();
    clock.set(new Date('2026-06-20T12:10:00Z'));
    await book(0.9, new Date('2026-06-20T11:30:00Z'));
    expect(await checkCostSpike(app.deps)).toMatchObject({ firing: false, detail: { medianUsd: 0, lastHourUsd: 0.9 } });
    expect(resend.delivered).toHaveLength(0);
  });
});

describe('cost trickle monitor', () => {
  it('fires once when every one of the last N hours spent and no conversion completed; a completion keeps it quiet', async () => {
    resend.reset();
    clock.set(new Date('2026-07-10T10:05:00Z'));
    for (let hour = 1; hour <= 4; hour++) await book(0.05, new Date(Date.parse('2026-07-10T10:00:00Z') - hour * HOUR + 120_000));
    // 3 of 4 hours is not a trickle yet
    clock.set(new Date('2026-07-10T09:05:00Z'));
    expect(await checkCostTrickle(app.deps)).toMatchObject({ firing: false, detail: { spendingHours: 3 } });

    clock.set(new Date('2026-07-10T10:05:00Z'));
    expect(await checkCostTrickle(app.deps)).toMatchObject({ firing: true, alerted: true, detail: { hours: 4, spendingHours: 4, completed: 0 } });
    clock.advance(30 * 60_000);
    expect(await checkCostTrickle(app.deps)).toMatchObject({ firing: true, alerted: false });
    expect(subjects()).toEqual(['Cost trickle: model spend every hour for 4 hours, no conversion completed']);
    expect(String(resend.delivered[0]!.body.text)).toContain('$0.20 in all');

    // A conversion that completed inside the window: spending with something to show is no leak.
    await book(0.05, new Date('2026-07-10T10:20:00Z'));
    await conversionJob('done@example.com', 'completed', new Date('2026-07-10T08:30:00Z'));
    clock.set(new Date('2026-07-10T11:05:00Z'));
    expect(await checkCostTrickle(app.deps)).toMatchObject({ firing: false, detail: { spendingHours: 4, completed: 1 } });
    expect(resend.delivered).toHaveLength(1);
  });
});

describe('spend digest', () => {
  it("mails yesterday's spend by backend, by customer and the batch savings, once per day", async () => {
    resend.reset();
    clock.set(new Date('2026-08-02T07:00:00Z'));
    const jobA = await conversionJob('big@example.com', 'completed', new Date('2026-08-01T10:00:00Z'));
    const jobB = await conversionJob('small@example.com', 'processing', null);
    await book(3, new Date('2026-08-01T01:00:00Z'), { jobId: jobA, backend: 'chunked-vision' });
    await book(1, new Date('2026-08-01T02:00:00Z'), { jobId: jobB, backend: 'parser' });
    await book(2, new Date('2026-08-01T03:00:00Z'), { jobId: jobA, backend: 'chunked-vision', metadata: { batch: true, batchMultiplier: 0.5 } });
    await book(50, new Date('2026-08-02T01:00:00Z')); // today: not in yesterday's digest

    expect(await readSpendDigest(app.deps)).toEqual({
      day: '2026-08-01',
      totalUsd: 6,
      byBackend: [
        { backend: 'chunked-vision', usd: 5 },
        { backend: 'parser', usd: 1 },
      ],
      byCustomer: [
        { customer: 'big@example.com', usd: 5 },
        { customer: 'small@example.com', usd: 1 },
      ],
      batchSavingsUsd: 2,
    });
    const { outcome } = await sendSpendDigest(app.deps);
    expect(outcome.ok).toBe(true);
    // A retried run sends the same Idempotency-Key: provider A delivers it once.
    await sendSpendDigest(app.deps);
    expect(resend.delivered).toHaveLength(1);
    const [mail] = resend.delivered;
    expect(mail!.idempotencyKey).toBe('spend-digest:2026-08-01');
    expect(mail!.body.subject).toBe('Folio spend 2026-08-01: $6.00');
    expect(String(mail!.body.text)).toContain('chunked-vision: $5.00');
    expect(String(mail!.body.text)).toContain('big@example.com: $5.00');
    expect(String(mail!.body.text)).toContain('Batch lane savings: $2.00');
  });
});

describe('budget schedules', () => {
  it('registers the budget check, the cost monitors and the digest as pg-boss schedules, and their workers run', async () => {
    resend.reset();
    clock.set(new Date('2026-09-02T07:00:00Z'));
    await registerBudgetJobs(app.deps);
    const schedules = await app.deps.db.any(sql.type(z.object({ name: z.string(), cron: z.string(), timezone: z.string().nullable() }))`
      select name, cron, timezone from pgboss.schedule where name like 'budget.%' order by name`);
    expect(schedules).toEqual([
      { name: BUDGET_CHECK_QUEUE, cron: '* * * * *', timezone: 'UTC' },
      { name: COST_MONITORS_QUEUE, cron: '5 * * * *', timezone: 'UTC' },
      { name: SPEND_DIGEST_QUEUE, cron: '0 7 * * *', timezone: 'UTC' },
    ]);
    await app.boss.send(SPEND_DIGEST_QUEUE, {});
    await until(
      async () => subjects(),
      (sent) => sent.includes('Folio spend 2026-09-01: $0.00'),
      30_000,
      'the digest',
    );
  });
});
