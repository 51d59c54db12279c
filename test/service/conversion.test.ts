import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sql } from '../../server/db/database.ts';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { createTestClock, startTestApp, type TestApp } from '../helpers/app.ts';
import { api, balance, gatedEngine, jobState, makePaid, readEvents, upload, uploadPdf } from './harness.ts';
import { until } from '../helpers/wait.ts';

const ENV = { CHUNK_PAGES: '1', CHUNK_CONCURRENCY: '2', CHUNK_HEARTBEAT_INTERVAL_MS: '100', CONVERSION_POOL_SIZE: '1' };

let app: TestApp;
let engine: ReturnType<typeof gatedEngine>;
const clock = createTestClock();

beforeAll(async () => {
  // The process's one engine (upload inspect and the workers alike) is the gated one.
  app = await startTestApp({ env: ENV, clock, workers: true, engine: (core) => (engine = gatedEngine(core.config, core.log)).provider });
  await registerConversionJobs(app.deps, { schedule: false });
}, 60_000);

async function paidUser(email: string, credits = 100) {
  const token = await app.token(email);
  await api(app, token, 'GET', '/api/me');
  await makePaid(app, email, credits);
  return token;
}

const Ledger = z.object({ rows: z.number(), outcomes: z.array(z.string()) });
function ledger(fileId: string) {
  return app.deps.db.one(sql.type(Ledger)`
    select count(*)::int as rows, coalesce(array_agg(coalesce(l.metadata->>'outcome', 'completed') order by l.id), '{}') as outcomes
      from cost_ledger l join large_conversion_jobs j on j.id = l.job_id where j.file_id = ${fileId} and l.source = 'chunk-scheduler'`);
}

describe('upload → convert → stream → download', () => {
  it('converts a 3-page PDF in 3 chunks, streams progress then completed, settles 3 credits and serves the zip', async () => {
    const email = 'happy@example.com';
    const token = await paidUser(email);
    const fileId = await uploadPdf(app, token);

    const started = await api(app, token, 'POST', `/api/convert/${fileId}`, { highFidelity: false });
    const job = (await started.json()) as { jobId: string; totalChunks: number; totalPages: number };
    expect(started.status, JSON.stringify(job)).toBe(200);
    expect(job).toMatchObject({ totalChunks: 3, totalPages: 3 });

    const stream = await fetch(`${app.baseUrl}/api/convert/${fileId}/stream`, { headers: { authorization: `Bearer ${token}` } });
    expect(stream.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = await readEvents(stream);
    const last = events.at(-1)!;
    expect(last.event).toBe('completed');
    expect(events.slice(0, -1).every((event) => event.event === 'progress')).toBe(true);
    const done = events.filter((event) => event.event === 'progress').map((event) => Number(event.data.chunksDone));
    expect(done).toEqual([...done].sort((a, b) => a - b));
    expect(last.data).toMatchObject({ chunksDone: 3, totalChunks: 3, totalPages: 3 });

    expect(await balance(app, email)).toEqual({ credits: 97, held: 0, freeUsed: 0, freeHeld: 0 });
    expect(await jobState(app, fileId)).toMatchObject({
      status: 'completed',
      holdStatus: 'settled',
      chunks: ['completed', 'completed', 'completed'],
      fileStatus: 'completed',
    });
    expect(await ledger(fileId)).toEqual({ rows: 3, outcomes: ['completed', 'completed', 'completed'] });
    const outbox = await app.deps.db.any(sql.type(z.object({ type: z.string() }))`select type from outbox_events where aggregate_id = ${fileId}`);
    expect(outbox.map((row) => row.type)).toEqual(['conversion.completed']);

    const zip = await fetch(`${app.baseUrl}${String(last.data.downloadUrl)}`);
    expect(zip.status).toBe(200);
    expect(zip.headers.get('content-type')).toBe('application/zip');
    const bytes = Buffer.from(await zip.arrayBuffer());
    expect(bytes.subarray(0, 4)).toEqual(Buffer.from([0x50, 0x4b, 0x03, 0x04]));
    for (const name of ['multicolumn-latex.html', 'multicolumn-latex.accessible.pdf', 'multicolumn-latex.report.json']) {
      expect(bytes.includes(Buffer.from(name)), name).toBe(true);
    }

    const list = (await (await api(app, token, 'GET', '/api/files')).json()) as { files: Array<Record<string, unknown>> };
    expect(list.files).toEqual([expect.objectContaining({ id: fileId, status: 'completed', pages: 3, batchWaiting: false })]);

    // Tampered, wrong-file and expired tokens: the same bare 403.
    const url = new URL(String(last.data.downloadUrl), app.baseUrl);
    const token24 = url.searchParams.get('token')!;
    const tampered = token24.slice(0, -2) + (token24.endsWith('A') ? 'BB' : 'AA');
    for (const bad of [tampered, '', 'x.y', `${Number(token24.split('.')[0]) + 1}.${token24.split('.')[1]}`]) {
      const response = await fetch(`${app.baseUrl}/api/download/${fileId}/zip?token=${encodeURIComponent(bad)}`);
      expect(response.status).toBe(403);
      expect(await response.json()).toEqual({ code: 'FORBIDDEN', message: 'Forbidden' });
    }
    const otherFile = await uploadPdf(app, token);
    expect((await fetch(`${app.baseUrl}/api/download/${otherFile}/zip?token=${encodeURIComponent(token24)}`)).status).toBe(403);
    clock.advance(24 * 60 * 60 * 1000 - 5_000);
    expect((await fetch(url)).status).toBe(200);
    clock.advance(10_000);
    expect((await fetch(url)).status).toBe(403);
    clock.set(new Date());
  }, 60_000);
});

describe('HTML only', () => {
  it("makes no tagged PDF when outputs is ['html'], and refuses outputs without the HTML", async () => {
    const token = await paidUser('html-only@example.com');
    const fileId = await uploadPdf(app, token);
    const refused = await api(app, token, 'POST', `/api/convert/${fileId}`, { outputs: ['pdf'] });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(await refused.json())).toContain("outputs must include 'html'");

    const started = await api(app, token, 'POST', `/api/convert/${fileId}`, { outputs: ['html'] });
    expect(started.status).toBe(200);
    const events = await readEvents(await fetch(`${app.baseUrl}/api/convert/${fileId}/stream`, { headers: { authorization: `Bearer ${token}` } }));
    const last = events.at(-1)!;
    expect(last.event).toBe('completed');
    const bytes = Buffer.from(await (await fetch(`${app.baseUrl}${String(last.data.downloadUrl)}`)).arrayBuffer());
    expect(bytes.includes(Buffer.from('multicolumn-latex.html'))).toBe(true);
    expect(bytes.includes(Buffer.from('multicolumn-latex.report.json'))).toBe(true);
    expect(bytes.includes(Buffer.from('multicolumn-latex.accessible.pdf'))).toBe(false);
  });
});

describe('refusals', () => {
  it('refuses a job the balance cannot cover before any work', async () => {
    const email = 'poor@example.com';
    const token = await paidUser(email, 2);
    const fileId = await uploadPdf(app, token);
    const response = await api(app, token, 'POST', `/api/convert/${fileId}`, {});
    expect(response.status).toBe(402);
    expect(await response.json()).toMatchObject({ code: 'INSUFFICIENT_CREDITS', message: expect.stringMatching(/Buy credits: http\S+\/pricing$/) });
    expect(await jobState(app, fileId)).toBeNull();
    expect(await balance(app, email)).toEqual({ credits: 2, held: 0, freeUsed: 0, freeHeld: 0 });
  });

  it('refuses a free user past the 10 lifetime pages with FREE_PAGE_LIMIT', async () => {
    const email = 'free@example.com';
    const token = await app.token(email);
    await api(app, token, 'GET', '/api/me');
    await app.deps.db.query(sql.unsafe`update customers set lifetime_free_pages_used = 8 where id = (select customer_id from users where email = ${email})`);
    const fileId = await uploadPdf(app, token);
    const response = await api(app, token, 'POST', `/api/convert/${fileId}`, {});
    expect(response.status).toBe(402);
    expect(await response.json()).toMatchObject({ code: 'FREE_PAGE_LIMIT' });
    expect(await jobState(app, fileId)).toBeNull();
    expect(await balance(app, email)).toEqual({ credits: 0, held: 0, freeUsed: 8, freeHeld: 0 });
  });

  it('answers 404 to anyone but the owner, on every door', async () => {
    const owner = await paidUser('owner@example.com');
    const stranger = await paidUser('stranger@example.com');
    const fileId = await uploadPdf(app, owner);
    for (const [method, route] of [
      ['POST', `/api/convert/${fileId}`],
      ['POST', `/api/v1/files/${fileId}/cancel`],
      ['POST', `/api/v1/files/${fileId}/process-now`],
      ['DELETE', `/api/files/${fileId}`],
      ['GET', `/api/convert/${fileId}/stream`],
    ] as const) {
      const response = await api(app, stranger, method, route, method === 'POST' && route.startsWith('/api/convert') ? {} : undefined);
      expect(response.status, `${method} ${route}`).toBe(404);
    }
    expect(await jobState(app, fileId)).toBeNull();
  });

  it('rejects what is not a PDF or DOCX, and a PDF over the page limit', async () => {
    const token = await paidUser('uploader@example.com');
    const text = await upload(app, token, import.meta.filename, 'notes.txt', 'text/plain');
    expect(text.status).toBe(415);
    expect(await text.json()).toMatchObject({ code: 'UNSUPPORTED_FILE_TYPE' });
    const missing = await fetch(`${app.baseUrl}/api/files`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: new FormData() });
    expect(missing.status).toBe(400);
  });

  it('process-now answers 409 NOT_BATCH_WAITING for a job not parked for the batch lane', async () => {
    const token = await paidUser('eager@example.com');
    const fileId = await uploadPdf(app, token);
    const response = await api(app, token, 'POST', `/api/v1/files/${fileId}/process-now`);
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({ code: 'NOT_BATCH_WAITING' });
  });
});

describe('cancel', () => {
  it('cancels a processing job: running chunks stop at their heartbeat, nothing is charged, the file is uploaded again', async () => {
    const email = 'cancel-processing@example.com';
    const token = await paidUser(email, 10);
    const fileId = await uploadPdf(app, token);
    engine.holdConvert();
    try {
      await api(app, token, 'POST', `/api/convert/${fileId}`, {});
      await until(
        () => jobState(app, fileId),
        (job) => job?.status === 'processing' && job.chunks.includes('processing'),
        15_000,
        'a running chunk',
      );
      expect(await balance(app, email)).toMatchObject({ credits: 10, held: 3 });
      const stream = fetch(`${app.baseUrl}/api/convert/${fileId}/stream`, { headers: { authorization: `Bearer ${token}` } });
      const response = await api(app, token, 'POST', `/api/v1/files/${fileId}/cancel`);
      expect(response.status).toBe(200);
      expect((await readEvents(await stream)).at(-1)?.event).toBe('cancelled');
      expect(await jobState(app, fileId)).toMatchObject({
        status: 'cancelled',
        holdStatus: 'released',
        holdOutcome: 'cancelled',
        fileStatus: 'uploaded',
        chunks: ['cancelled', 'cancelled', 'cancelled'],
      });
      // The held chunks notice through their heartbeat and book their (zero) spend as aborted.
      const booked = await until(
        () => ledger(fileId),
        (rows) => rows.rows >= 1,
        10_000,
        'aborted chunk spend',
      );
      expect(booked.outcomes.every((outcome) => outcome === 'aborted')).toBe(true);
    } finally {
      engine.releaseConvert();
    }
    expect(await balance(app, email)).toEqual({ credits: 10, held: 0, freeUsed: 0, freeHeld: 0 });
    const again = await api(app, token, 'POST', `/api/v1/files/${fileId}/cancel`);
    expect(again.status).toBe(409);
    expect(await again.json()).toMatchObject({ code: 'NO_ACTIVE_CONVERSION' });
  }, 40_000);

  it('answers 409 CONVERSION_FINISHING while assembling, then completes and charges once', async () => {
    const email = 'cancel-assembling@example.com';
    const token = await paidUser(email, 10);
    const fileId = await uploadPdf(app, token);
    engine.holdRender();
    try {
      await api(app, token, 'POST', `/api/convert/${fileId}`, {});
      await until(
        () => jobState(app, fileId),
        (job) => job?.status === 'assembling',
        30_000,
        'assembling',
      );
      const response = await api(app, token, 'POST', `/api/v1/files/${fileId}/cancel`);
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({ code: 'CONVERSION_FINISHING' });
    } finally {
      engine.releaseRender();
    }
    await until(
      () => jobState(app, fileId),
      (job) => job?.status === 'completed',
      30_000,
      'completed',
    );
    expect(await balance(app, email)).toEqual({ credits: 7, held: 0, freeUsed: 0, freeHeld: 0 });
  }, 60_000);

  it('a cancel racing the last chunk: exactly one outcome wins and balances are exact', async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < 3; round++) {
      const email = `race-${round}@example.com`;
      const token = await paidUser(email, 10);
      const fileId = await uploadPdf(app, token);
      engine.holdConvert();
      await api(app, token, 'POST', `/api/convert/${fileId}`, {});
      await until(
        () => jobState(app, fileId),
        (job) => job?.chunks.filter((status) => status === 'processing').length === 2,
        15_000,
        'two running chunks',
      );
      engine.releaseConvert();
      // Let roughly the chunks finish as the cancel arrives.
      await until(
        () => jobState(app, fileId),
        (job) => (job?.chunks.filter((status) => status === 'completed').length ?? 0) >= 2 || job?.status !== 'processing',
        30_000,
        'two chunks done',
      );
      const cancel = await api(app, token, 'POST', `/api/v1/files/${fileId}/cancel`);
      const final = await until(
        () => jobState(app, fileId),
        (job) => ['completed', 'cancelled', 'failed'].includes(job?.status ?? ''),
        30_000,
        'a final state',
      );
      const money = await balance(app, email);
      if (cancel.status === 200) {
        expect(final).toMatchObject({ status: 'cancelled', holdOutcome: 'cancelled', fileStatus: 'uploaded' });
        expect(money).toEqual({ credits: 10, held: 0, freeUsed: 0, freeHeld: 0 });
      } else {
        expect(cancel.status).toBe(409);
        expect(final).toMatchObject({ status: 'completed', holdStatus: 'settled', fileStatus: 'completed' });
        expect(money).toEqual({ credits: 7, held: 0, freeUsed: 0, freeHeld: 0 });
      }
      outcomes.push(final!.status);
    }
    expect(outcomes.length).toBe(3);
  }, 80_000);
});
