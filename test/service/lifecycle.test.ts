import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnyRow, sql } from '../../server/db/database.ts';
import { DomainError } from '../../server/errors.ts';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { CHUNK_QUEUE } from '../../server/conversion-jobs/conversion-jobs.jobs.ts';
import { failConversion } from '../../server/conversion-jobs/fail-conversion.ts';
import { recoverOrphanedChunks } from '../../server/conversion-jobs/recover-orphaned-chunks.ts';
import { sweepStuckConversions } from '../../server/conversion-jobs/sweep-stuck-conversions.ts';
import { startBoss } from '../../server/queue/boss.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { api, balance, gatedEngine, jobState, makePaid, readEvents, upload, uploadPdf } from './harness.ts';
import { until } from '../helpers/wait.ts';
import { docxBytes, writeTemp } from '../helpers/docx.ts';

const ENV = { CHUNK_PAGES: '1', CHUNK_CONCURRENCY: '2', CHUNK_HEARTBEAT_INTERVAL_MS: '100', CONVERSION_POOL_SIZE: '1' };

// Workers are registered part-way through: jobs created before that stay pending.
let app: TestApp;
let engine: ReturnType<typeof gatedEngine>;
let workersStarted: Promise<void> | undefined;

beforeAll(async () => {
  app = await startTestApp({ env: ENV, workers: true, engine: (core) => (engine = gatedEngine(core.config, core.log)).provider });
}, 60_000);

async function startWorkers() {
  workersStarted ??= registerConversionJobs(app.deps, { schedule: false });
  await workersStarted;
}

async function user(email: string, credits = 100) {
  const token = await app.token(email);
  await api(app, token, 'GET', '/api/me');
  await makePaid(app, email, credits);
  return token;
}

const docx = async (text: string) => writeTemp('letter.docx', await docxBytes(`<w:p><w:r><w:t>${text}</w:t></w:r></w:p>`));

describe('jobs before any worker runs', () => {
  it('cancels a pending job in one transaction: chunks cancelled, hold released, file uploaded, flyer comp link cleared', async () => {
    const email = 'pending@example.com';
    const token = await user(email, 10);
    const fileId = await uploadPdf(app, token);
    const flyer = await app.deps.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into flyer_jobs (owner_id, customer_id, status) select id, customer_id, 'completed' from users where email = ${email} returning id`);
    const started = await api(app, token, 'POST', `/api/convert/${fileId}`, { _compedFlyerJobId: flyer });
    const { jobId } = (await started.json()) as { jobId: string };
    expect(started.status).toBe(200);
    await app.deps.db.query(sql.type(AnyRow)`update flyer_jobs set comp_conversion_id = ${jobId} where id = ${flyer}`);
    expect(await jobState(app, fileId)).toMatchObject({
      status: 'pending',
      holdStatus: 'held',
      fileStatus: 'processing',
      chunks: ['pending', 'pending', 'pending'],
    });
    const list = (await (await api(app, token, 'GET', '/api/files')).json()) as { files: Array<Record<string, unknown>> };
    expect(list.files[0]).toMatchObject({ id: fileId, status: 'processing', phase: 'Queued: 0/3 chunks', batchWaiting: false });

    const response = await api(app, token, 'POST', `/api/v1/files/${fileId}/cancel`);
    expect(response.status).toBe(200);
    expect(await jobState(app, fileId)).toMatchObject({
      status: 'cancelled',
      holdOutcome: 'cancelled',
      fileStatus: 'uploaded',
      chunks: ['cancelled', 'cancelled', 'cancelled'],
    });
    expect(await balance(app, email)).toEqual({ credits: 10, held: 0, freeUsed: 0, freeHeld: 0 });
    expect(
      await app.deps.db.oneFirst(sql.type(z.object({ c: z.uuid().nullable() }))`select comp_conversion_id as c from flyer_jobs where id = ${flyer}`),
    ).toBeNull();
  });

  it('process-now resumes a job parked for the batch lane; cancel works on waiting_batch too', async () => {
    const token = await user('batch@example.com', 10);
    const first = await uploadPdf(app, token);
    const second = await uploadPdf(app, token);
    for (const fileId of [first, second]) {
      await api(app, token, 'POST', `/api/convert/${fileId}`, {});
      // The batch lane (a later issue) is what parks jobs; stand in for it.
      await app.deps.db.query(sql.type(AnyRow)`
        with j as (update large_conversion_jobs set status = 'waiting_batch' where file_id = ${fileId} returning id)
        update chunk_jobs set status = 'waiting_batch' where job_id in (select id from j)`);
    }
    const list = (await (await api(app, token, 'GET', '/api/files')).json()) as { files: Array<{ id: string; batchWaiting: boolean }> };
    expect(
      list.files
        .filter((file) => file.batchWaiting)
        .map((file) => file.id)
        .sort(),
    ).toEqual([first, second].sort());

    const resumed = await api(app, token, 'POST', `/api/v1/files/${first}/process-now`);
    expect(resumed.status).toBe(200);
    expect(await jobState(app, first)).toMatchObject({ status: 'pending', chunks: ['pending', 'pending', 'pending'] });
    const cancelled = await api(app, token, 'POST', `/api/v1/files/${second}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(await jobState(app, second)).toMatchObject({ status: 'cancelled', holdOutcome: 'cancelled' });
    await api(app, token, 'POST', `/api/v1/files/${first}/cancel`);
  });

  it('fails a job whose hold is already resolved: the refused release does not abort the rest of the transaction', async () => {
    const token = await user('resolved-hold@example.com', 10);
    const fileId = await uploadPdf(app, token);
    const { jobId } = (await (await api(app, token, 'POST', `/api/convert/${fileId}`, {})).json()) as { jobId: string };
    // Released elsewhere first (an operator, a crashed run's cleanup): release_credit_hold then raises FC005.
    await app.deps.db.query(sql.type(AnyRow)`
      select release_credit_hold(hold_id, 'cancelled') from large_conversion_jobs where id = ${jobId}`);
    await failConversion(app.deps, { jobId, code: 'CONVERSION_FAILED', message: 'The conversion failed' });
    expect(await jobState(app, fileId)).toMatchObject({ status: 'failed', holdStatus: 'released', holdOutcome: 'cancelled', fileStatus: 'failed' });
    const outbox = await app.deps.db.anyFirst(sql.type(z.object({ type: z.string() }))`select type from outbox_events where aggregate_id = ${fileId}`);
    expect(outbox).toEqual(['conversion.failed']);
  });

  it('two starts racing past the live-job check: one job, and the other answered 409 CONFLICT from the unique index', async () => {
    const email = 'racing@example.com';
    const token = await user(email, 10);
    const fileId = await uploadPdf(app, token);
    const waitingOnLock = () =>
      app.deps.db.oneFirst(sql.type(z.object({ n: z.number() }))`
        select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
    // The customer row is held while both requests pass their checks, so both reach the insert.
    const locker = new pg.Client({ connectionString: app.database.url });
    await locker.connect();
    let answers: Response[];
    try {
      await locker.query('begin');
      await locker.query('select 1 from customers where email = $1 for update', [email]);
      const racing = Promise.all([api(app, token, 'POST', `/api/convert/${fileId}`, {}), api(app, token, 'POST', `/api/convert/${fileId}`, {})]);
      await until(waitingOnLock, (n) => n === 2, 10_000, 'both starts at the hold');
      await locker.query('commit');
      answers = await racing;
    } finally {
      await locker.end();
    }
    const settled = await Promise.all(answers.map(async (answer) => ({ status: answer.status, body: await answer.json() })));
    expect(settled.map((answer) => answer.status).sort()).toEqual([200, 409]);
    expect(settled.find((answer) => answer.status === 409)?.body).toEqual({ code: 'CONFLICT', message: 'A conversion of this file is already running' });
    expect(await balance(app, email)).toMatchObject({ credits: 10, held: 3 });
    expect((await api(app, token, 'POST', `/api/v1/files/${fileId}/cancel`)).status).toBe(200);
  });

  it('a flyer cancel fails the job with a message, refunds it and drops the running claim', async () => {
    const email = 'flyer@example.com';
    await user(email, 10);
    const flyer = await app.deps.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into flyer_jobs (owner_id, customer_id, status, claim_id, credits_charged)
      select id, customer_id, 'processing', gen_random_uuid(), 2 from users where email = ${email} returning id`);
    await app.deps.db.query(sql.type(AnyRow)`update customers set credits_remaining = 8 where id = (select customer_id from users where email = ${email})`);
    await app.deps.db.query(sql.type(AnyRow)`select cancel_flyer_job(${flyer})`);
    const row = await app.deps.db.one(sql.type(
      z.object({ status: z.string(), message: z.string().nullable(), claim: z.uuid().nullable(), refunded: z.boolean() }),
    )`
      select status, error_message as message, claim_id as claim, refunded from flyer_jobs where id = ${flyer}`);
    expect(row).toEqual({ status: 'failed', message: 'Cancelled by user', claim: null, refunded: true });
    expect(await balance(app, email)).toMatchObject({ credits: 10 });
    await expect(app.deps.db.query(sql.type(AnyRow)`select cancel_flyer_job(${flyer})`)).rejects.toThrow();
  });
});

describe('a worker process of its own', () => {
  it("stops a running chunk when pg-boss aborts the job's signal and hands the chunk back for the retry", async () => {
    const token = await user('shutdown@example.com', 10);
    const fileId = await uploadPdf(app, token);
    const boss = await startBoss(app.database.url, { supervise: false, schedule: false, migrate: false });
    await registerConversionJobs({ ...app.deps, boss }, { schedule: false });
    engine.holdConvert();
    try {
      await api(app, token, 'POST', `/api/convert/${fileId}`, {});
      await until(
        () => jobState(app, fileId),
        (job) => job?.chunks.filter((status) => status === 'processing').length === 2,
        15_000,
        'two running chunks',
      );
      // A shutdown that does not wait: pg-boss fails the active jobs (so they are retried) and aborts their signals.
      await boss.stop({ graceful: false, close: true });
      const job = await until(
        () => jobState(app, fileId),
        (state) => state?.chunks.every((status) => status === 'pending') === true,
        5_000,
        'the interrupted chunks back to pending',
      );
      expect(job).toMatchObject({ status: 'processing', holdStatus: 'held' });
      const outcomes = await app.deps.db.anyFirst(sql.type(z.object({ outcome: z.string() }))`
        select metadata->>'outcome' as outcome from cost_ledger where job_id = ${job!.id}`);
      expect(outcomes).toEqual(['aborted', 'aborted']);
    } finally {
      engine.releaseConvert();
      await boss.stop({ graceful: false, close: true }).catch(() => {});
    }
    expect((await api(app, token, 'POST', `/api/v1/files/${fileId}/cancel`)).status).toBe(200);
  }, 40_000);

  it('fails a chunk job whose payload does not parse instead of completing it as done', async () => {
    const boss = await startBoss(app.database.url, { supervise: false, schedule: false, migrate: false });
    try {
      await registerConversionJobs({ ...app.deps, boss }, { schedule: false });
      const id = await boss.send(CHUNK_QUEUE, { chunkId: 'not-a-uuid', jobId: crypto.randomUUID() }, { retryLimit: 0 });
      const settled = await until(
        () => boss.getJobById(CHUNK_QUEUE, id!),
        (job) => job?.state === 'completed' || job?.state === 'failed',
        10_000,
        'the job to settle',
      );
      expect(settled?.state).toBe('failed');
    } finally {
      await boss.stop({ graceful: false, close: true });
    }
  }, 20_000);
});

describe('with workers', () => {
  it('a chunk whose worker died mid-run is re-queued by orphan recovery and completes once, charged once', async () => {
    const email = 'orphan@example.com';
    const token = await user(email, 10);
    const fileId = await uploadPdf(app, token);
    await api(app, token, 'POST', `/api/convert/${fileId}`, {});
    // What a SIGKILLed worker leaves: the chunk claimed by a run that no longer heartbeats.
    await app.deps.db.query(sql.type(AnyRow)`
      update chunk_jobs set status = 'processing', run_id = gen_random_uuid(), attempt = 1, heartbeat_at = now() - interval '1 hour', pages_done = 1
       where job_id = (select id from large_conversion_jobs where file_id = ${fileId}) and chunk_index = 0`);
    await startWorkers();
    await until(
      () => jobState(app, fileId),
      (job) => job?.chunks[1] === 'completed' && job.chunks[2] === 'completed',
      30_000,
      'the live chunks',
    );
    expect((await jobState(app, fileId))?.chunks[0]).toBe('processing');
    expect(await recoverOrphanedChunks(app.deps, { staleMs: 60_000 })).toEqual({ requeued: 1, reassembled: 0, failed: 0 });
    expect(await recoverOrphanedChunks(app.deps, { staleMs: 60_000 })).toEqual({ requeued: 0, reassembled: 0, failed: 0 });
    // The re-queued job keeps the first one's policy: without its hour it would expire at pg-boss's 15 minutes.
    const orphan = await app.deps.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      select c.id from chunk_jobs c join large_conversion_jobs j on j.id = c.job_id where j.file_id = ${fileId} and c.chunk_index = 0`);
    const queued = await app.boss.findJobs(CHUNK_QUEUE, { data: { chunkId: orphan } });
    expect(queued.map(({ expireInSeconds, retryLimit, retryDelay }) => ({ expireInSeconds, retryLimit, retryDelay }))).toEqual([
      { expireInSeconds: 3600, retryLimit: 3, retryDelay: 1 },
      { expireInSeconds: 3600, retryLimit: 3, retryDelay: 1 },
    ]);
    await until(
      () => jobState(app, fileId),
      (job) => job?.status === 'completed',
      30_000,
      'completed',
    );
    const ledger = await app.deps.db.one(sql.type(z.object({ rows: z.number(), attempts: z.array(z.number()) }))`
      select (select count(*)::int from cost_ledger l where l.job_id = j.id) as rows,
             array(select attempt from chunk_jobs c where c.job_id = j.id order by chunk_index) as attempts
        from large_conversion_jobs j where j.file_id = ${fileId}`);
    expect(ledger).toEqual({ rows: 3, attempts: [2, 1, 1] });
    expect(await balance(app, email)).toEqual({ credits: 7, held: 0, freeUsed: 0, freeHeld: 0 });
    // Recovery never touches cancelled work.
    await app.deps.db.query(sql.type(AnyRow)`
      update chunk_jobs set status = 'cancelled', heartbeat_at = now() - interval '1 hour' where job_id = (select id from large_conversion_jobs where file_id = ${fileId}) and chunk_index = 0`);
    expect(await recoverOrphanedChunks(app.deps, { staleMs: 60_000 })).toEqual({ requeued: 0, reassembled: 0, failed: 0 });
  }, 60_000);

  it('DOCX goes the inline path: processing with no chunk job, then completed with a zip', async () => {
    await startWorkers();
    const token = await user('docx@example.com');
    const response = await upload(
      app,
      token,
      await docx('Hello inline world'),
      'letter.docx',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    );
    const file = (await response.json()) as { id: string; status: string };
    expect(response.status, JSON.stringify(file)).toBe(201);
    expect(file.status).toBe('processing');
    const stream = fetch(`${app.baseUrl}/api/convert/${file.id}/stream`, { headers: { authorization: `Bearer ${token}` } });
    const events = await readEvents(await stream);
    expect(events.at(-1)?.event).toBe('completed');
    expect(await jobState(app, file.id)).toBeNull();
    const zip = await fetch(`${app.baseUrl}${String(events.at(-1)!.data.downloadUrl)}`);
    expect(zip.status).toBe(200);
    expect(Buffer.from(await zip.arrayBuffer()).includes(Buffer.from('letter.html'))).toBe(true);
  }, 60_000);

  it('many stream clients on one file share the one listener connection', async () => {
    const token = await user('watchers@example.com');
    const fileId = await uploadPdf(app, token);
    engine.holdConvert();
    try {
      await api(app, token, 'POST', `/api/convert/${fileId}`, {});
      const streams = Array.from({ length: 5 }, () => fetch(`${app.baseUrl}/api/convert/${fileId}/stream`, { headers: { authorization: `Bearer ${token}` } }));
      await Promise.all(streams);
      // the answer's headers can arrive before the LISTEN statement shows in pg_stat_activity
      const countListeners = () =>
        app.deps.db.oneFirst(sql.type(z.object({ n: z.number() }))`
        select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'listen folio_conversion%'`);
      await until(countListeners, (n) => n > 0, 10_000, 'the LISTEN connection');
      expect(await countListeners()).toBe(1);
      expect(app.deps.conversionEvents.listenerCount()).toBe(1);
      const cancel = await api(app, token, 'POST', `/api/v1/files/${fileId}/cancel`);
      expect(cancel.status).toBe(200);
      for (const stream of streams) expect((await readEvents(await stream)).at(-1)?.event).toBe('cancelled');
    } finally {
      engine.releaseConvert();
    }
  }, 40_000);

  it('delete cancels the live job without resetting the file, then removes the file and its objects', async () => {
    const email = 'deleter@example.com';
    const token = await user(email, 10);
    const fileId = await uploadPdf(app, token);
    engine.holdConvert();
    try {
      await api(app, token, 'POST', `/api/convert/${fileId}`, {});
      const response = await api(app, token, 'DELETE', `/api/files/${fileId}`);
      expect(response.status).toBe(200);
    } finally {
      engine.releaseConvert();
    }
    expect(await jobState(app, fileId)).toBeNull();
    expect(await app.deps.store.exists(`files/${fileId}/source`)).toBe(false);
    expect(await balance(app, email)).toEqual({ credits: 10, held: 0, freeUsed: 0, freeHeld: 0 });
    expect((await api(app, token, 'DELETE', `/api/files/${fileId}`)).status).toBe(404);
  }, 40_000);

  it('a retryable chunk error on an early attempt leaves the job running: the retry completes it, charged once', async () => {
    await startWorkers();
    const email = 'retrying@example.com';
    const token = await user(email, 10);
    const fileId = await uploadPdf(app, token);
    engine.holdConvert();
    await api(app, token, 'POST', `/api/convert/${fileId}`, {});
    const stream = fetch(`${app.baseUrl}/api/convert/${fileId}/stream`, { headers: { authorization: `Bearer ${token}` } });
    engine.failNextConvert(new Error('engine hiccup'), { page: 1 });
    engine.releaseConvert();
    const events = await readEvents(await stream);
    expect(events.at(-1)?.event).toBe('completed');
    expect(await jobState(app, fileId)).toMatchObject({ status: 'completed', holdStatus: 'settled', fileStatus: 'completed' });
    expect(await balance(app, email)).toEqual({ credits: 7, held: 0, freeUsed: 0, freeHeld: 0 });
    const attempts = await app.deps.db.anyFirst(sql.type(z.object({ attempt: z.number() }))`
      select attempt from chunk_jobs where job_id = (select id from large_conversion_jobs where file_id = ${fileId}) order by attempt`);
    expect(attempts).toEqual([1, 1, 2]);
    const outbox = await app.deps.db.anyFirst(sql.type(z.object({ type: z.string() }))`select type from outbox_events where aggregate_id = ${fileId}`);
    expect(outbox).toEqual(['conversion.completed']);
  }, 40_000);

  it('a non-retryable chunk error fails the job at once, without a retry', async () => {
    await startWorkers();
    const token = await user('unreadable@example.com', 10);
    const fileId = await uploadPdf(app, token);
    engine.holdConvert();
    await api(app, token, 'POST', `/api/convert/${fileId}`, {});
    const calls = engine.stats.pagesConverted.length;
    engine.failNextConvert(new DomainError('PDF_MALFORMED', 'The PDF is damaged'), { page: 1, times: 10 });
    engine.releaseConvert();
    await until(
      () => jobState(app, fileId),
      (job) => job?.status === 'failed',
      20_000,
      'failed',
    );
    expect(await jobState(app, fileId)).toMatchObject({ status: 'failed', holdOutcome: 'failed', fileStatus: 'failed' });
    // Chunk 0 ran once: a damaged PDF is not tried again.
    const jobId = (await jobState(app, fileId))!.id;
    await until(
      () => app.boss.findJobs(CHUNK_QUEUE, { data: { jobId } }),
      (jobs) => jobs.every((job) => job.state === 'completed' || job.state === 'failed'),
      20_000,
      'the queue jobs to settle',
    );
    engine.stopFailing();
    expect(engine.stats.pagesConverted.slice(calls).filter((pages) => pages.includes(1))).toHaveLength(1);
  }, 40_000);

  it('a chunk failing every attempt fails the job on the last: hold released, file failed, conversion.failed in the outbox, failed on the stream', async () => {
    await startWorkers();
    const email = 'failing@example.com';
    const token = await user(email, 10);
    const fileId = await uploadPdf(app, token);
    engine.holdConvert();
    await api(app, token, 'POST', `/api/convert/${fileId}`, {});
    const stream = fetch(`${app.baseUrl}/api/convert/${fileId}/stream`, { headers: { authorization: `Bearer ${token}` } });
    // Chunk 0 fails its four attempts (the first and three retries).
    const calls = engine.stats.pagesConverted.length;
    engine.failNextConvert(new Error('engine exploded'), { page: 1, times: 10 });
    engine.releaseConvert();
    const events = await readEvents(await stream);
    expect(events.at(-1)).toMatchObject({ event: 'failed', data: { code: 'CONVERSION_FAILED', message: 'The conversion failed' } });
    expect(await jobState(app, fileId)).toMatchObject({ status: 'failed', holdStatus: 'released', holdOutcome: 'failed', fileStatus: 'failed' });
    expect(await balance(app, email)).toEqual({ credits: 10, held: 0, freeUsed: 0, freeHeld: 0 });
    const outbox = await app.deps.db.any(sql.type(z.object({ type: z.string() }))`select type from outbox_events where aggregate_id = ${fileId}`);
    expect(outbox.map((row) => row.type)).toEqual(['conversion.failed']);
    engine.stopFailing();
    expect(engine.stats.pagesConverted.slice(calls).filter((pages) => pages.includes(1))).toHaveLength(4);
  }, 40_000);

  it('the stuck-file sweep fails live jobs idle past the bound and leaves cancelled ones alone', async () => {
    await startWorkers();
    const token = await user('stuck@example.com', 20);
    const stuck = await uploadPdf(app, token);
    const cancelled = await uploadPdf(app, token);
    engine.holdConvert();
    try {
      for (const fileId of [stuck, cancelled]) await api(app, token, 'POST', `/api/convert/${fileId}`, {});
      await api(app, token, 'POST', `/api/v1/files/${cancelled}/cancel`);
      await until(
        () => jobState(app, stuck),
        (job) => job?.status === 'processing',
        15_000,
        'processing',
      );
      // Two hours of silence, as a wedged worker would leave: its claim (a run id no live run holds) beats no more.
      await app.deps.db.query(sql.type(AnyRow)`
        update large_conversion_jobs set updated_at = now() - interval '3 hours' where file_id in (${stuck}, ${cancelled})`);
      await app.deps.db.query(sql.type(AnyRow)`
        update chunk_jobs set heartbeat_at = now() - interval '3 hours', run_id = gen_random_uuid()
         where job_id in (select id from large_conversion_jobs where file_id in (${stuck}, ${cancelled}))`);
      expect(await sweepStuckConversions(app.deps, { boundMs: 2 * 60 * 60 * 1000 })).toBe(1);
    } finally {
      engine.releaseConvert();
    }
    expect(await jobState(app, stuck)).toMatchObject({ status: 'failed', holdOutcome: 'failed', fileStatus: 'failed' });
    expect(await jobState(app, cancelled)).toMatchObject({ status: 'cancelled', holdOutcome: 'cancelled', fileStatus: 'uploaded' });
  }, 40_000);
});
