import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { sql } from '../../server/db/database.ts';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { recoverOrphanedChunks } from '../../server/conversion-jobs/recover-orphaned-chunks.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { api, balance, CORPUS, jobState, makePaid, upload } from './harness.ts';
import { until } from '../helpers/wait.ts';

const root = path.resolve(import.meta.dirname, '..', '..');
const BIG = path.join(CORPUS, 'geotopo-117-pages.pdf');
const ENV = {
  CHUNK_PAGES: '40',
  CHUNK_CONCURRENCY: '1',
  CHUNK_HEARTBEAT_INTERVAL_MS: '100',
  CONVERSION_POOL_SIZE: '1',
  UPLOAD_MAX_PAGES: '200',
  UPLOAD_MAX_BYTES: String(8 * 1024 * 1024),
};

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: ENV });
}, 60_000);

async function user(email: string, credits: number) {
  const token = await app.token(email);
  await api(app, token, 'GET', '/api/me');
  await makePaid(app, email, credits);
  return token;
}

describe('upload limits', () => {
  it('answers 413 FILE_TOO_LARGE past the byte limit, 422 for an encrypted PDF, and keeps nothing', async () => {
    const token = await user('limits@example.com', 10);
    const big = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'folio-big-')), 'big.pdf');
    await fs.writeFile(big, Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(9 * 1024 * 1024, 32)]));
    const tooLarge = await upload(app, token, big);
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toMatchObject({ code: 'FILE_TOO_LARGE' });
    const encrypted = await upload(app, token, path.join(CORPUS, 'encrypted-user-password.pdf'));
    expect(encrypted.status).toBe(422);
    expect(await encrypted.json()).toMatchObject({ code: 'PDF_ENCRYPTED' });
    const list = (await (await api(app, token, 'GET', '/api/files')).json()) as { files: unknown[] };
    expect(list.files).toEqual([]);
    const objects = await fs.readdir(path.join(app.config.dataDir, 'objects', 'files')).catch(() => []);
    expect(objects).toEqual([]);
  }, 30_000);
});

describe('a worker process killed mid-chunk', () => {
  it('loses no work and charges nothing twice: the chunk is re-queued and the job completes once', { timeout: 120_000 }, async () => {
    const email = 'sigkill@example.com';
    const token = await user(email, 200);
    const response = await upload(app, token, BIG);
    const file = (await response.json()) as { id: string; pages: number };
    expect(response.status, JSON.stringify(file)).toBe(201);
    expect(file.pages).toBe(117);
    expect((await api(app, token, 'POST', `/api/convert/${file.id}`, {})).status).toBe(200);

    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'test',
      LOG_LEVEL: 'error',
      DATABASE_URL: app.database.url,
      FOLIO_DATA_DIR: app.config.dataDir,
      DOWNLOAD_TOKEN_SECRET: 'test-download-secret',
      WEBHOOK_SECRET_KEY: 'test-webhook-key',
      AUTH_JWT_SECRET: 'x'.repeat(40),
      ...ENV,
    };
    const child = spawn(process.execPath, ['jobs/main.ts'], { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    try {
      await until(
        () => jobState(app, file.id),
        (job) => job?.chunks[0] === 'processing',
        60_000,
        'the child to claim a chunk',
      );
      await until(
        () =>
          app.deps.db.oneFirst(sql.type(z.object({ n: z.number() }))`
          select pages_done as n from chunk_jobs where job_id = (select id from large_conversion_jobs where file_id = ${file.id}) and chunk_index = 0`),
        (pages) => pages >= 2,
        60_000,
        'pages done in the child',
      );
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
    const mid = await jobState(app, file.id);
    expect(mid).toMatchObject({ status: 'processing' });
    expect(mid!.chunks[0]).toBe('processing');

    await registerConversionJobs(app.deps, { schedule: false });
    // The dead run's heartbeat goes stale; recovery hands its chunk to a live worker.
    await until(
      () => recoverOrphanedChunks(app.deps, { staleMs: 1_000 }),
      (result) => result.requeued === 1,
      20_000,
      'the orphan re-queued',
    );
    await until(
      () => jobState(app, file.id),
      (job) => job?.status === 'completed',
      100_000,
      'completed',
    );
    const rows = await app.deps.db.one(sql.type(z.object({ completed: z.number(), attempts: z.array(z.number()) }))`
      select (select count(*)::int from cost_ledger l where l.job_id = j.id and l.metadata->>'outcome' is null) as completed,
             array(select attempt from chunk_jobs c where c.job_id = j.id order by chunk_index) as attempts
        from large_conversion_jobs j where j.file_id = ${file.id}`);
    expect(rows).toEqual({ completed: 3, attempts: [2, 1, 1] });
    expect(await balance(app, email)).toEqual({ credits: 83, held: 0, freeUsed: 0, freeHeld: 0 });
  });
});
