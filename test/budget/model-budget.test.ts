import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { checkModelBudget } from '../../server/budget/check-model-budget.ts';
import type { SpendView } from '../../server/budget/read-spend.ts';
import type { ConversionEngine } from '../../server/conversion/engine.ts';
import type { PageResult } from '../../server/conversion/model.ts';
import { lazyEngine, type EngineProvider } from '../../server/conversion-jobs/engine-provider.ts';
import { sql } from '../../server/db/database.ts';
import { startResendFake, type ResendFake } from '../fakes/resend.ts';
import { createTestClock, startTestApp, type TestApp } from '../helpers/app.ts';
import { api, balance, jobState, makePaid, uploadPdf } from '../service/harness.ts';
import { until } from '../helpers/wait.ts';

const KEY = 're_test_budget';
const ADMIN = 'admin@example.com';
let resend: ResendFake;
let app: TestApp;
let engine: ReturnType<typeof steppedEngine>;
const clock = createTestClock();

/**
 * The real engine, one page at a time. While stepping, each converted page is
 * held "in flight" until the test releases it; a page starts only while the
 * run's signal has not aborted, as the engine checks it between pages.
 */
function steppedEngine(config: TestApp['config'], log: TestApp['deps']['log']) {
  const real = lazyEngine({ config, log });
  let stepping = false;
  const releasedPages = new Set<number>();
  const waiting = new Map<number, () => void>();
  const started: number[] = [];
  let lastSignal: AbortSignal | undefined;
  const provider: EngineProvider = async () => {
    const inner = await real();
    const wrapped: ConversionEngine = {
      ...inner,
      async convertPages(pdf, input) {
        lastSignal = input.signal;
        const results: PageResult[] = [];
        for (const page of input.pages) {
          if (input.signal?.aborted) throw input.signal.reason ?? new Error('aborted');
          started.push(page);
          const [result] = await inner.convertPages(pdf, { ...input, pages: [page], onPage: undefined });
          if (stepping && !releasedPages.has(page)) await new Promise<void>((resolve) => waiting.set(page, resolve));
          results.push(result!);
          await input.onPage?.(result!);
        }
        return results;
      },
    };
    return wrapped;
  };
  afterAll(() => real.close());
  return {
    provider,
    started,
    aborted: () => lastSignal?.aborted === true,
    /** pages converted and held in flight, waiting for their release */
    held: () => [...waiting.keys()],
    step: () => {
      stepping = true;
      releasedPages.clear();
    },
    release: (page: number) => {
      releasedPages.add(page);
      waiting.get(page)?.();
      waiting.delete(page);
    },
    run: () => {
      stepping = false;
      for (const resolve of waiting.values()) resolve();
      waiting.clear();
    },
  };
}

beforeAll(async () => {
  resend = await startResendFake({ apiKey: KEY });
  app = await startTestApp({
    env: {
      CHUNK_PAGES: '3',
      CHUNK_CONCURRENCY: '2',
      CHUNK_HEARTBEAT_INTERVAL_MS: '100',
      CONVERSION_POOL_SIZE: '1',
      MODEL_BUDGET_DAILY_USD: '10',
      MODEL_BUDGET_MONTHLY_USD: '1000',
      PROVIDER_A_API_KEY: KEY,
      PROVIDER_A_BASE_URL: resend.url,
      ALERT_EMAIL: 'ops@example.com',
      ADMIN_EMAILS: ADMIN,
    },
    clock,
    workers: true,
    engine: (core) => (engine = steppedEngine(core.config, core.log)).provider,
  });
  await registerConversionJobs(app.deps, { schedule: false });
}, 120_000);
afterAll(() => resend.close());

/** A synthetic ledger row at the clock's time (or `at`). */
async function book(usd: number, at = clock.now(), backend = 'chunked-vision') {
  await app.deps.db.query(sql.unsafe`
    insert into cost_ledger (source, cost_usd, backend, created_at) values ('test', ${usd}, ${backend}, ${at.toISOString()}::timestamptz)`);
}

async function adminToken() {
  const token = await app.token(ADMIN);
  await api(app, token, 'GET', '/api/me');
  return token;
}

async function paidUser(email: string) {
  const token = await app.token(email);
  await api(app, token, 'GET', '/api/me');
  await makePaid(app, email, 100);
  return token;
}

async function setBudget(dailyUsd: number | null, monthlyUsd: number | null = null) {
  const response = await api(app, await adminToken(), 'PUT', '/api/admin/budget', { dailyUsd, monthlyUsd });
  const body = (await response.json()) as Record<string, unknown>;
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

const subjects = () => resend.delivered.map((mail) => String(mail.body.subject));

function ledgerOutcomes(jobId: string) {
  return app.deps.db.any(sql.type(z.object({ outcome: z.string(), pages: z.number(), backend: z.string().nullable() }))`
    select coalesce(metadata->>'outcome', 'completed') as outcome, (metadata->>'pages')::int as pages, backend
      from cost_ledger where job_id = ${jobId} order by id`);
}

describe('model budget', () => {
  it('mails the 80% warning once per period, and again the next day', async () => {
    clock.set(new Date('2026-03-10T09:00:00Z'));
    resend.reset();
    await book(7.9);
    expect((await checkModelBudget(app.deps)).state).toBe('ok');
    await book(0.6);
    const first = await checkModelBudget(app.deps);
    expect(first).toMatchObject({ state: 'warning', daily: { spendUsd: 8.5, limitUsd: 10 }, paused: 0 });
    await book(0.5);
    clock.advance(60_000);
    expect((await checkModelBudget(app.deps)).state).toBe('warning');
    expect(subjects()).toEqual(['Model budget at 85%: $8.50 of $10.00']);
    expect(resend.delivered[0]!.idempotencyKey).toBe('model-budget:daily:2026-03-10:warning');
    expect(resend.delivered[0]!.body.to).toEqual(['ops@example.com']);

    // The next UTC day starts at zero; its own 80% is a new warning.
    clock.set(new Date('2026-03-11T00:30:00Z'));
    expect((await checkModelBudget(app.deps)).state).toBe('ok');
    await book(8);
    await checkModelBudget(app.deps);
    expect(subjects()).toHaveLength(2);
    expect(resend.delivered[1]!.idempotencyKey).toBe('model-budget:daily:2026-03-11:warning');
  });

  it('at 100% pauses a running job after the page in flight, and resumes it when an admin raises the budget', async () => {
    clock.set(new Date());
    resend.reset();
    await setBudget(null); // the environment's $10 a day
    const token = await paidUser('pause@example.com');
    const fileId = await uploadPdf(app, token);
    engine.step();
    const started = await api(app, token, 'POST', `/api/convert/${fileId}`, {});
    expect(started.status).toBe(200);
    const { jobId } = (await started.json()) as { jobId: string };

    // Page 1 done, page 2 in flight: the budget runs out. In flight is converted and held: a page still converting
    // when the run is told to stop is stopped with it (on a loaded machine the real page took long enough for that)
    engine.release(1);
    await until(
      () => Promise.resolve(engine.held()),
      (pages) => pages.includes(2),
      60_000,
      'page 2 in flight',
    );
    await book(10.25);
    const check = await checkModelBudget(app.deps);
    expect(check).toMatchObject({ state: 'paused', paused: 1 });
    expect(await jobState(app, fileId)).toMatchObject({ status: 'paused_budget', chunks: ['pending'], fileStatus: 'processing' });
    // The run's next heartbeat matches no row: it stops, but the page in flight finishes first.
    await until(() => Promise.resolve(engine.aborted()), Boolean, 60_000, 'the run told to stop');
    engine.release(2);

    // Booked at the page boundary: two pages spent, page 3 never started.
    const aborted = await until(
      () => ledgerOutcomes(jobId),
      (rows) => rows.length === 1,
      60_000,
      'the aborted run booked',
    );
    expect(aborted).toEqual([{ outcome: 'aborted', pages: 2, backend: 'local' }]);
    expect(engine.started).toEqual([1, 2]);
    expect(subjects()).toEqual(['Model budget reached: conversions paused ($10.25 of $10.00)']);

    // Still paused on the next checks: nothing starts, no second kill-switch mail.
    engine.run();
    clock.advance(60_000);
    expect((await checkModelBudget(app.deps)).state).toBe('paused');
    const spend = (await (await api(app, await adminToken(), 'GET', '/api/admin/spend')).json()) as SpendView;
    expect(spend.budget).toMatchObject({ state: 'paused', pausedJobs: 1, dailyUsd: 10, source: { daily: 'env', monthly: 'env' } });
    expect(spend.today.spendUsd).toBeCloseTo(10.25, 6);
    expect(spend.byBackend).toContainEqual({ backend: 'chunked-vision', todayUsd: 10.25, monthUsd: 10.25 });
    expect(engine.started).toEqual([1, 2]);
    expect(subjects()).toHaveLength(1);

    // An admin raises the budget: the job resumes and completes; the credit hold was kept all along.
    const raised = await setBudget(50);
    expect(raised).toMatchObject({ state: 'ok', dailyUsd: 50, pausedAt: null, pausedJobs: 0, source: { daily: 'admin' } });
    const done = await until(
      () => jobState(app, fileId),
      (job) => job?.status === 'completed',
      120_000,
      'the resumed job',
    );
    expect(done).toMatchObject({ chunks: ['completed'], holdStatus: 'settled', fileStatus: 'completed' });
    expect(await balance(app, 'pause@example.com')).toMatchObject({ credits: 97, held: 0 });
    expect((await ledgerOutcomes(jobId)).map((row) => row.outcome)).toEqual(['aborted', 'completed']);
    expect(subjects()[1]).toBe('Model budget: 1 paused conversion(s) resumed');

    // The raise re-armed the kill-switch: spending through the new limit the same day pauses and mails again.
    await book(40);
    expect((await checkModelBudget(app.deps)).state).toBe('paused');
    expect(subjects()).toHaveLength(3);
    expect(subjects()[2]).toBe('Model budget reached: conversions paused ($50.25 of $50.00)');
    expect(new Set(resend.delivered.map((mail) => mail.idempotencyKey)).size).toBe(3);
    await setBudget(null);
  }, 240_000);

  it('pauses jobs started while the budget is spent, cancels a paused one, and resumes the rest oldest first', async () => {
    clock.set(new Date());
    await setBudget(5); // today's $10.25 is over it
    expect((await checkModelBudget(app.deps)).state).toBe('paused');
    engine.run();
    const token = await paidUser('queue@example.com');
    const files = [await uploadPdf(app, token), await uploadPdf(app, token), await uploadPdf(app, token)];
    const jobs: string[] = [];
    for (const fileId of files) {
      const response = await api(app, token, 'POST', `/api/convert/${fileId}`, {});
      expect(response.status).toBe(200);
      jobs.push(((await response.json()) as { jobId: string }).jobId);
    }
    // The chunk claims find the budget spent: each job waits in paused_budget, no page converted.
    for (const fileId of files)
      await until(
        () => jobState(app, fileId),
        (job) => job?.status === 'paused_budget',
        60_000,
        'paused at claim',
      );
    expect(await balance(app, 'queue@example.com')).toMatchObject({ credits: 100, held: 9 });

    // Cancel works on paused_budget: cancelled, hold released, file back to uploaded, nothing charged.
    const cancel = await api(app, token, 'POST', `/api/v1/files/${files[1]}/cancel`);
    expect(cancel.status).toBe(200);
    expect(await jobState(app, files[1]!)).toMatchObject({ status: 'cancelled', chunks: ['cancelled'], holdOutcome: 'cancelled', fileStatus: 'uploaded' });
    expect(await balance(app, 'queue@example.com')).toMatchObject({ credits: 100, held: 6 });

    const resumedAt = new Date();
    await setBudget(100);
    // Queue jobs of the resumed chunks: the older conversion's first.
    const queued = await app.deps.db.any(sql.type(z.object({ jobId: z.string(), state: z.string(), createdOn: z.string() }))`
      select data->>'jobId' as "jobId", state, created_on::text as "createdOn" from pgboss.job
       where name = 'conversion.chunk' and created_on >= ${resumedAt.toISOString()}::timestamptz
       order by created_on`);
    expect(queued.map((row) => row.jobId)).toEqual([jobs[0], jobs[2]]);
    for (const fileId of [files[0]!, files[2]!]) {
      await until(
        () => jobState(app, fileId),
        (job) => job?.status === 'completed',
        120_000,
        'resumed job completed',
      );
    }
    expect(await jobState(app, files[1]!)).toMatchObject({ status: 'cancelled' });
    expect(await balance(app, 'queue@example.com')).toMatchObject({ credits: 94, held: 0 });
    await setBudget(null);
  }, 240_000);

  it('resumes paused work by itself when the UTC day rolls over', async () => {
    clock.set(new Date('2026-04-10T23:50:00Z'));
    resend.reset();
    engine.run();
    await book(11);
    expect(await checkModelBudget(app.deps)).toMatchObject({ state: 'paused' });
    const token = await paidUser('midnight@example.com');
    const fileId = await uploadPdf(app, token);
    expect((await api(app, token, 'POST', `/api/convert/${fileId}`, {})).status).toBe(200);
    await until(
      () => jobState(app, fileId),
      (job) => job?.status === 'paused_budget',
      60_000,
      'paused at claim',
    );
    clock.advance(5 * 60_000);
    expect(await checkModelBudget(app.deps)).toMatchObject({ state: 'paused', resumed: 0 });

    clock.set(new Date('2026-04-11T00:01:00Z'));
    expect(await checkModelBudget(app.deps)).toMatchObject({ state: 'ok', resumed: 1, daily: { spendUsd: 0 } });
    await until(
      () => jobState(app, fileId),
      (job) => job?.status === 'completed',
      120_000,
      'completed after midnight',
    );
    expect(subjects()).toEqual(['Model budget reached: conversions paused ($11.00 of $10.00)', 'Model budget: 1 paused conversion(s) resumed']);
  }, 240_000);

  it('refuses the settings to non-admins and bad limits with 4xx', async () => {
    const user = await paidUser('nosy@example.com');
    expect((await api(app, user, 'GET', '/api/admin/spend')).status).toBe(403);
    expect((await api(app, user, 'PUT', '/api/admin/budget', { dailyUsd: 1, monthlyUsd: null })).status).toBe(403);
    const admin = await adminToken();
    for (const body of [{ dailyUsd: -1, monthlyUsd: null }, { dailyUsd: 'ten', monthlyUsd: null }, { dailyUsd: 1e9, monthlyUsd: null }, {}]) {
      expect((await api(app, admin, 'PUT', '/api/admin/budget', body)).status).toBe(400);
    }
  });
});
