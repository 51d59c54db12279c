import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { registerFlyerJobs } from '../../jobs/flyers/flyers.worker.ts';
import { runFlyer } from '../../server/flyers/request-flyer.ts';
import type { ObjectStore } from '../../server/storage/storage.ts';
import { AnyRow, sql } from '../../server/db/database.ts';
import { jobState, uploadPdf } from '../service/harness.ts';
import { until } from '../helpers/wait.ts';
import { startProductHarness } from './harness.ts';

const { app, call, signIn } = await startProductHarness({
  workers: true,
  env: { CHUNK_PAGES: '3', CHUNK_CONCURRENCY: '1', CONVERSION_POOL_SIZE: '1' },
});
const db = app.database.db;

beforeAll(async () => {
  await registerConversionJobs(app.deps, { schedule: false });
  await registerFlyerJobs(app.deps);
}, 60_000);

const Balance = z.object({ credits: z.number(), freeUsed: z.number() });
const balance = (customerId: string) =>
  db.one(sql.type(Balance)`select credits_remaining as credits, lifetime_free_pages_used as "freeUsed" from customers where id = ${customerId}`);

async function flyer(user: { id: string; customerId: string }, fields: { fileId?: string; status: string; credits?: number; claimId?: string }) {
  return db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into flyer_jobs (file_id, owner_id, customer_id, status, credits_charged, claim_id)
    values (${fields.fileId ?? null}, ${user.id}, ${user.customerId}, ${fields.status}, ${fields.credits ?? 0}, ${fields.claimId ?? null}) returning id`);
}

describe('Preserve Formatting cancel', () => {
  it('fails the job with a cancellation message, refunds it, and a running worker loses its claim', async () => {
    const owner = await signIn('flyer-owner@example.com');
    await db.query(sql.type(AnyRow)`update customers set plan_type = 'paid', credits_remaining = 10 where id = ${owner.customerId}`);
    const claimId = crypto.randomUUID();
    const id = await flyer(owner, { status: 'processing', credits: 3, claimId });
    const stranger = await signIn('flyer-stranger@example.com');
    expect((await call('POST', `/api/flyers/${id}/cancel`, { token: stranger.token })).status).toBe(404);

    const cancelled = await call('POST', `/api/flyers/${id}/cancel`, { token: owner.token });
    expect(cancelled).toMatchObject({ status: 200, body: { status: 'failed', errorMessage: 'Cancelled by user', refunded: true, creditsCharged: 3 } });
    expect(await balance(owner.customerId)).toEqual({ credits: 13, freeUsed: 0 });
    // The worker's guarded write names its claim, which is gone.
    const late = await db.query(sql.type(AnyRow)`update flyer_jobs set status = 'completed' where id = ${id} and claim_id = ${claimId}`);
    expect(late.rowCount).toBe(0);
    expect((await call('POST', `/api/flyers/${id}/cancel`, { token: owner.token })).status).toBe(409);
    expect(await balance(owner.customerId)).toEqual({ credits: 13, freeUsed: 0 });
  });
});

describe('comped reflow', () => {
  it('turns an ended flyer job into a free conversion once; again answers 409 ALREADY_RESOLVED', async () => {
    const owner = await signIn('comp@example.com');
    const fileId = await uploadPdf(app, owner.token);
    const id = await flyer(owner, { fileId, status: 'completed' });
    const before = await balance(owner.customerId);

    const [first, second] = await Promise.all([
      call('POST', `/api/flyers/${id}/comped-reflow`, { token: owner.token }),
      call('POST', `/api/flyers/${id}/comped-reflow`, { token: owner.token }),
    ]);
    const answers = [first, second].sort((a, b) => a.status - b.status);
    expect(answers[0]).toMatchObject({ status: 200, body: { flyerJobId: id, fileId, totalPages: 3 } });
    expect(answers[1]).toMatchObject({ status: 409, body: { code: 'ALREADY_RESOLVED' } });
    const jobId = answers[0]!.body.jobId as string;

    await until(
      () => jobState(app, fileId),
      (job) => job?.status === 'completed',
      120_000,
      'comped conversion',
    );
    const job = await db.one(sql.type(z.object({ hold_id: z.uuid().nullable(), credits_charged: z.number(), options: z.record(z.string(), z.unknown()) }))`
      select hold_id, credits_charged, options from large_conversion_jobs where id = ${jobId}`);
    expect(job).toEqual({ hold_id: null, credits_charged: 0, options: { _compedFlyerJobId: id } });
    expect(await balance(owner.customerId)).toEqual(before);

    const again = await call('POST', `/api/flyers/${id}/comped-reflow`, { token: owner.token });
    expect(again).toMatchObject({ status: 409, body: { code: 'ALREADY_RESOLVED' } });
  }, 150_000);

  it('cancelling the comped conversion lets the user choose again', async () => {
    const owner = await signIn('comp2@example.com');
    const fileId = await uploadPdf(app, owner.token);
    const id = await flyer(owner, { fileId, status: 'failed' });
    const started = await call('POST', `/api/flyers/${id}/comped-reflow`, { token: owner.token });
    expect(started.status).toBe(200);
    // Cancelled at once, while its chunk is queued or running (a 3-page conversion takes seconds).
    expect((await call('POST', `/api/v1/files/${fileId}/cancel`, { token: owner.token })).status).toBe(200);
    expect(await db.oneFirst(sql.type(z.object({ c: z.uuid().nullable() }))`select comp_conversion_id as c from flyer_jobs where id = ${id}`)).toBeNull();
    await until(
      () => jobState(app, fileId),
      (job) => job?.status === 'cancelled',
      30_000,
      'cancelled',
    );
    expect((await call('POST', `/api/flyers/${id}/comped-reflow`, { token: owner.token })).status).toBe(200);
  }, 150_000);

  it('refuses a flyer job still running, and one of another user', async () => {
    const owner = await signIn('comp3@example.com');
    const other = await signIn('comp4@example.com');
    const fileId = await uploadPdf(app, owner.token);
    const running = await flyer(owner, { fileId, status: 'processing' });
    expect(await call('POST', `/api/flyers/${running}/comped-reflow`, { token: owner.token })).toMatchObject({ status: 409, body: { code: 'CONFLICT' } });
    const ended = await flyer(owner, { fileId, status: 'completed' });
    expect((await call('POST', `/api/flyers/${ended}/comped-reflow`, { token: other.token })).status).toBe(404);
    expect(await jobState(app, fileId)).toBeNull();
  });

  it('a client naming a flyer job in its own convert options still pays', async () => {
    const owner = await signIn('sly@example.com');
    const fileId = await uploadPdf(app, owner.token);
    const id = await flyer(owner, { fileId, status: 'completed' });
    const started = await call('POST', `/api/convert/${fileId}`, { token: owner.token, body: { _compedFlyerJobId: id } });
    expect(started.status).toBe(200);
    const job = await db.one(sql.type(z.object({ hold_id: z.uuid().nullable() }))`select hold_id from large_conversion_jobs where file_id = ${fileId}`);
    expect(job.hold_id).not.toBeNull();
  });
});

describe('Preserve Formatting request', () => {
  it('charges the pages, renders the positioned HTML in the worker and serves it through a 24-hour link', async () => {
    const owner = await signIn('flyer-maker@example.com');
    const fileId = await uploadPdf(app, owner.token);
    const requested = await call('POST', `/api/files/${fileId}/preserve-formatting`, { token: owner.token });
    expect(requested).toMatchObject({ status: 200, body: { status: 'pending', pages: 3, creditsCharged: 3 } });
    expect(await balance(owner.customerId)).toEqual({ credits: 0, freeUsed: 3 });
    const id = requested.body.flyerJobId as string;
    const done = await until(
      () => call('GET', `/api/flyers/${id}`, { token: owner.token }),
      (answer) => answer.body.status === 'completed',
      60_000,
      'flyer render',
    );
    expect(done.body).toMatchObject({ fileId, pages: 3, refunded: false, htmlUrl: expect.stringMatching(/^https:\/\/folio\.example\/api\/flyers\//) });
    const url = new URL(done.body.htmlUrl);
    const html = await call('GET', `${url.pathname}${url.search}`);
    expect(html.status).toBe(200);
    expect(html.headers.get('content-security-policy')).toMatch(/^sandbox/);
    expect(html.text).toContain('<html lang="en">');
    expect(html.text.match(/<section class="page" aria-label="Page \d"/g)).toHaveLength(3);
    expect((html.text.match(/<span style="left:/g) ?? []).length).toBeGreaterThan(50);
    expect((await call('GET', `${url.pathname}?token=1.${'A'.repeat(43)}`)).status).toBe(404);
    const stranger = await signIn('flyer-peeker@example.com');
    expect((await call('GET', `/api/flyers/${id}`, { token: stranger.token })).status).toBe(404);
  }, 90_000);

  it('refuses before charging: not your file, too many pages, not enough credits (with the purchase link)', async () => {
    const owner = await signIn('flyer-poor@example.com');
    const other = await signIn('flyer-other@example.com');
    const fileId = await uploadPdf(app, owner.token);
    expect((await call('POST', `/api/files/${fileId}/preserve-formatting`, { token: other.token })).status).toBe(404);
    await db.query(sql.type(AnyRow)`update files set page_count = 21 where id = ${fileId}`);
    expect(await call('POST', `/api/files/${fileId}/preserve-formatting`, { token: owner.token })).toMatchObject({
      status: 413,
      body: { code: 'PDF_TOO_MANY_PAGES' },
    });
    await db.query(sql.type(AnyRow)`update files set page_count = 3 where id = ${fileId}`);
    await db.query(sql.type(AnyRow)`update customers set lifetime_free_pages_used = 9 where id = ${owner.customerId}`);
    const poor = await call('POST', `/api/files/${fileId}/preserve-formatting`, { token: owner.token });
    expect(poor).toMatchObject({ status: 402, body: { code: 'FREE_PAGE_LIMIT', message: expect.stringContaining('https://folio.example/buy') } });
    expect(await balance(owner.customerId)).toEqual({ credits: 0, freeUsed: 9 });
    expect(await db.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from flyer_jobs where file_id = ${fileId}`)).toBe(0);
  });

  it('a worker that loses its claim to a cancel stores nothing and the charge is refunded once', async () => {
    const owner = await signIn('flyer-cancel@example.com');
    const fileId = await uploadPdf(app, owner.token);
    await db.query(sql.type(AnyRow)`update customers set plan_type = 'paid', credits_remaining = 5 where id = ${owner.customerId}`);
    const id = await db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into flyer_jobs (file_id, owner_id, customer_id, status, credits_charged, pages)
      values (${fileId}, ${owner.id}, ${owner.customerId}, 'pending', 3, 3) returning id`);
    // The worker's read of the PDF waits until the cancel is in.
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const base = app.deps.store;
    const store: ObjectStore = Object.assign(Object.create(base) as ObjectStore, {
      get: async (key: string, range?: Parameters<ObjectStore['get']>[1]) => {
        await gate;
        return base.get(key, range);
      },
    });
    const running = runFlyer({ ...app.deps, store }, id);
    await until(
      () => db.oneFirst(sql.type(z.object({ s: z.string() }))`select status as s from flyer_jobs where id = ${id}`),
      (status) => status === 'processing',
      10_000,
      'claim',
    );
    expect((await call('POST', `/api/flyers/${id}/cancel`, { token: owner.token })).body).toMatchObject({ status: 'failed', refunded: true });
    release();
    expect(await running).toBe('lost');
    const row = await db.one(
      sql.type(z.object({ status: z.string(), result_key: z.string().nullable() }))`select status, result_key from flyer_jobs where id = ${id}`,
    );
    expect(row).toEqual({ status: 'failed', result_key: null });
    expect(await app.deps.store.exists(`files/${fileId}/flyers/${id}.html`)).toBe(false);
    expect(await balance(owner.customerId)).toEqual({ credits: 8, freeUsed: 0 });
    expect(await runFlyer(app.deps, id)).toBe('skipped');
  });

  it('a render that fails fails the job and refunds it', async () => {
    const owner = await signIn('flyer-broken@example.com');
    const fileId = await uploadPdf(app, owner.token);
    const key = await db.oneFirst(sql.type(z.object({ k: z.string() }))`select storage_key as k from files where id = ${fileId}`);
    await app.deps.store.put(key, Buffer.from('%PDF-1.7 but not really'), { contentType: 'application/pdf' });
    await db.query(sql.type(AnyRow)`update customers set plan_type = 'paid', credits_remaining = 5 where id = ${owner.customerId}`);
    const id = await db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into flyer_jobs (file_id, owner_id, customer_id, status, credits_charged, pages)
      values (${fileId}, ${owner.id}, ${owner.customerId}, 'pending', 3, 3) returning id`);
    expect(await runFlyer(app.deps, id)).toBe('failed');
    const status = await call('GET', `/api/flyers/${id}`, { token: owner.token });
    expect(status.body).toMatchObject({ status: 'failed', refunded: true, errorMessage: expect.stringContaining('damaged'), htmlUrl: null });
    expect(await balance(owner.customerId)).toEqual({ credits: 8, freeUsed: 0 });
  });
});
