import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { sql } from '../../server/db/database.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { docxBytes, writeTemp } from '../helpers/docx.ts';
import { until } from '../helpers/wait.ts';
import { api, balance, makePaid, readEvents, upload } from '../service/harness.ts';

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { CONVERSION_POOL_SIZE: '1', CHUNK_HEARTBEAT_INTERVAL_MS: '100' }, workers: true });
  await registerConversionJobs(app.deps, { schedule: false });
}, 60_000);

/** CPU seconds this process (every thread, the page workers included) spends per second of `windowMs`. */
async function cpuShare(windowMs: number): Promise<number> {
  const start = process.cpuUsage();
  const began = performance.now();
  await new Promise((resolve) => setTimeout(resolve, windowMs));
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000 / (performance.now() - began);
}

function docxJobState(fileId: string) {
  return app.deps.db.maybeOneFirst(sql.type(z.object({ state: z.string() }))`
    select state from pgboss.job where name = 'conversion.docx' and data->>'fileId' = ${fileId} order by created_on desc limit 1`);
}

describe('cancelling a DOCX conversion', () => {
  it('stops mammoth mid-parse: 200, the worker ends, the hold goes back, the file is uploaded again, nothing is charged', async () => {
    const email = 'cancel-docx@example.com';
    const token = await app.token(email);
    await api(app, token, 'GET', '/api/me');
    await makePaid(app, email, 100);
    // 60,000 small formatted paragraphs: a few seconds of mammoth, 20 pages charged, under a megabyte zipped
    const slow = await docxBytes('<w:p><w:r><w:rPr><w:b/><w:i/></w:rPr><w:t>a</w:t></w:r></w:p>'.repeat(60_000));
    const response = await upload(app, token, await writeTemp('slow.docx', slow), 'slow.docx', DOCX_TYPE);
    const file = (await response.json()) as { id: string; pages: number };
    expect(response.status, JSON.stringify(file)).toBe(201);
    expect(await balance(app, email)).toMatchObject({ credits: 100, held: file.pages });

    const stream = fetch(`${app.baseUrl}/api/convert/${file.id}/stream`, { headers: { authorization: `Bearer ${token}` } });
    // running: the queue job is active and a thread is busy parsing (no other work runs in this test)
    await until(
      () => docxJobState(file.id),
      (state) => state === 'active',
      20_000,
      'the DOCX job to start',
    );
    await until(
      () => cpuShare(200),
      (share) => share > 0.5,
      20_000,
      'mammoth to be parsing',
    );

    const cancel = await api(app, token, 'POST', `/api/v1/files/${file.id}/cancel`);
    expect(cancel.status, await cancel.clone().text()).toBe(200);
    expect(await cancel.json()).toEqual({ cancelled: true, jobId: null });
    expect((await readEvents(await stream)).at(-1)?.event).toBe('cancelled');

    // the run noticed at its heartbeat and returned; its worker was terminated, not left parsing
    await until(
      () => docxJobState(file.id),
      (state) => state === 'completed',
      10_000,
      'the DOCX job to end',
    );
    // a parsing thread takes most of a core even on a loaded machine; stopped, the process idles (about 0.02)
    expect(await cpuShare(1_000)).toBeLessThan(0.15);

    const row = await app.deps.db.one(sql.type(z.object({ status: z.string(), holdId: z.string().nullable(), holds: z.array(z.string()) }))`
      select f.status, f.hold_id as "holdId",
             array(select h.status from credit_holds h where h.reference = 'docx:' || f.id::text) as holds
        from files f where f.id = ${file.id}`);
    expect(row).toEqual({ status: 'uploaded', holdId: null, holds: ['released'] });
    expect(await balance(app, email)).toMatchObject({ credits: 100, held: 0 });
    const completed = await app.deps.db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from outbox_events where aggregate_id = ${file.id} and type = 'conversion.completed'`);
    expect(completed).toBe(0);
  }, 60_000);

  it('deleting a converting DOCX releases its hold and ends its run', async () => {
    const email = 'delete-docx@example.com';
    const token = await app.token(email);
    await api(app, token, 'GET', '/api/me');
    await makePaid(app, email, 100);
    const slow = await docxBytes('<w:p><w:r><w:rPr><w:b/></w:rPr><w:t>a</w:t></w:r></w:p>'.repeat(60_000));
    const response = await upload(app, token, await writeTemp('gone.docx', slow), 'gone.docx', DOCX_TYPE);
    const file = (await response.json()) as { id: string; pages: number };
    expect(response.status, JSON.stringify(file)).toBe(201);
    expect(await balance(app, email)).toMatchObject({ held: file.pages });
    await until(
      () => docxJobState(file.id),
      (state) => state === 'active',
      20_000,
      'the DOCX job to start',
    );
    const deleted = await api(app, token, 'DELETE', `/api/files/${file.id}`);
    expect(deleted.status, await deleted.clone().text()).toBeLessThan(300);
    expect(await balance(app, email)).toMatchObject({ credits: 100, held: 0 });
    await until(
      () => docxJobState(file.id),
      (state) => state === 'completed',
      10_000,
      'the DOCX job to end',
    );
  }, 60_000);
});
