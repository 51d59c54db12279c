import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { AnyRow, sql } from '../../server/db/database.ts';
import { jobState, until, uploadPdf } from '../service/harness.ts';
import { startProductHarness } from './harness.ts';

const { app, call, signIn } = await startProductHarness({
  workers: true,
  env: { CHUNK_PAGES: '3', CHUNK_CONCURRENCY: '1', CONVERSION_POOL_SIZE: '1' },
});
const db = app.database.db;

beforeAll(async () => {
  await registerConversionJobs(app.deps, { schedule: false });
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
