import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { recoverOrphanedChunks } from '../../server/conversion-jobs/recover-orphaned-chunks.ts';
import { sweepStuckConversions } from '../../server/conversion-jobs/sweep-stuck-conversions.ts';
import { AnyRow, sql } from '../../server/db/database.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { api, balance, jobState, makePaid, uploadPdf } from '../service/harness.ts';

// No workers: each job stays where the test puts it, as a crashed process would leave it.
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
}, 60_000);

async function startedJob(email: string) {
  const token = await app.token(email);
  await api(app, token, 'GET', '/api/me');
  await makePaid(app, email, 10);
  const fileId = await uploadPdf(app, token);
  expect((await api(app, token, 'POST', `/api/convert/${fileId}`, {})).status).toBe(200);
  return fileId;
}

/** What a process killed while converting chunk 0 leaves, after `attempt` claims of it. */
async function crashedChunk(fileId: string, attempt: number) {
  await app.deps.db.query(sql.type(AnyRow)`
    update chunk_jobs set status = 'processing', run_id = gen_random_uuid(), attempt = ${attempt}, heartbeat_at = now() - interval '1 hour'
     where job_id = (select id from large_conversion_jobs where file_id = ${fileId}) and chunk_index = 0`);
  await app.deps.db.query(sql.type(AnyRow)`update large_conversion_jobs set status = 'processing' where file_id = ${fileId}`);
}

function failure(fileId: string) {
  return app.deps.db.one(sql.type(z.object({ jobCode: z.string().nullable(), fileCode: z.string().nullable(), message: z.string().nullable() }))`
    select j.error_code as "jobCode", f.error_code as "fileCode", f.error_message as message
      from large_conversion_jobs j join files f on f.id = j.file_id where j.file_id = ${fileId}`);
}

describe('a chunk that keeps crashing its process', () => {
  it('is re-queued by orphan recovery while it has been tried fewer than 3 times', async () => {
    const fileId = await startedJob('twice@example.com');
    await crashedChunk(fileId, 2);
    expect(await recoverOrphanedChunks(app.deps, { staleMs: 60_000 })).toMatchObject({ requeued: 1, failed: 0 });
    expect((await jobState(app, fileId))?.chunks[0]).toBe('pending');
  });

  it('after its third crash fails the job with a clear error, releases the hold, and is not taken up again', async () => {
    const email = 'thrice@example.com';
    const fileId = await startedJob(email);
    expect(await balance(app, email)).toMatchObject({ credits: 10, held: 3 });
    await crashedChunk(fileId, 3);
    expect(await recoverOrphanedChunks(app.deps, { staleMs: 60_000 })).toMatchObject({ requeued: 0, failed: 1 });
    expect(await jobState(app, fileId)).toMatchObject({ status: 'failed', holdStatus: 'released', holdOutcome: 'failed', fileStatus: 'failed' });
    expect((await jobState(app, fileId))?.chunks[0]).toBe('failed');
    expect(await failure(fileId)).toMatchObject({
      jobCode: 'CONVERSION_CRASHED',
      fileCode: 'CONVERSION_CRASHED',
      message: expect.stringMatching(/^Pages 1-3 stopped the converter 3 times/),
    });
    expect(await balance(app, email)).toMatchObject({ credits: 10, held: 0 });
    // the next start's recovery finds nothing to do with it
    expect(await recoverOrphanedChunks(app.deps, { staleMs: 60_000 })).toEqual({ requeued: 0, reassembled: 0, failed: 0 });
  });

  it('the stuck sweep fails a job whose chunk keeps being re-queued, though its heartbeats look fresh', async () => {
    const fileId = await startedJob('requeued@example.com');
    await app.deps.db.query(sql.type(AnyRow)`
      update chunk_jobs set status = 'pending', attempt = 7, heartbeat_at = now()
       where job_id = (select id from large_conversion_jobs where file_id = ${fileId}) and chunk_index = 0`);
    expect(await sweepStuckConversions(app.deps, { boundMs: 2 * 60 * 60 * 1000 })).toBe(1);
    expect(await jobState(app, fileId)).toMatchObject({ status: 'failed', holdStatus: 'released', fileStatus: 'failed' });
  });
});
