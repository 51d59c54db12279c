import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { sql } from '../../server/db/database.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { drawPicturesPdf } from '../helpers/local-pages.ts';
import { api, balance, jobState, makePaid, uploadPdf } from './harness.ts';
import { until } from '../helpers/wait.ts';

/** The figures API: list a finished conversion's figures, describe one, and get outputs rendered again for free. */

const ENV = { CHUNK_PAGES: '1', CHUNK_CONCURRENCY: '1', CONVERSION_POOL_SIZE: '1' };

let app: TestApp;
let dir: string;

/** Two pages, a picture on each: the first captioned, the second not. */
async function picturesPdf(): Promise<string> {
  const file = path.join(dir, 'stations.pdf');
  await writeFile(file, await drawPicturesPdf());
  return file;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'folio-figures-api-'));
  app = await startTestApp({ env: ENV, workers: true });
  await registerConversionJobs(app.deps, { schedule: false });
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Figure = { id: string; page: number; pictureUrl: string | null; caption: string | null; alt: string | null; needsAlt: boolean; altSource: string | null };

async function convertedFile(email: string): Promise<{ token: string; fileId: string }> {
  const token = await app.token(email);
  await api(app, token, 'GET', '/api/me');
  await makePaid(app, email, 20);
  const fileId = await uploadPdf(app, token, await picturesPdf());
  expect((await api(app, token, 'POST', `/api/convert/${fileId}`, {})).status).toBe(200);
  await until(
    () => jobState(app, fileId),
    (state) => state?.status === 'completed',
    60_000,
    'conversion completed',
  );
  return { token, fileId };
}

async function reportOf(fileId: string): Promise<string> {
  const key = await app.deps.db.oneFirst(sql.type(z.object({ key: z.string() }))`
    select result_key as key from large_conversion_jobs where file_id = ${fileId} and status = 'completed'`);
  const { readAll } = await import('../../server/storage/storage.ts');
  return (await readAll(await app.deps.store.get(key))).toString('latin1');
}

describe('figures API', () => {
  it('lists the figures, takes a description, renders again without charging, and passes the audit once the last is described', async () => {
    const email = 'describer@example.com';
    const { token, fileId } = await convertedFile(email);
    const credits = await balance(app, email);

    const listed = await api(app, token, 'GET', `/api/files/${fileId}/figures`);
    expect(listed.status).toBe(200);
    const { figures } = (await listed.json()) as { figures: Figure[] };
    expect(figures.map((figure) => [figure.id, figure.page, figure.altSource, figure.needsAlt])).toEqual([
      ['p1-1', 1, 'caption', false],
      ['p2-1', 2, null, true],
    ]);
    expect(figures[0]).toMatchObject({ caption: 'Figure 1: Rain gauges on the station roof.', alt: 'Rain gauges on the station roof' });
    expect(figures[1]!.pictureUrl).toMatch(/^\/api\/files\/.+\/figures\/p2-1\/picture\?token=/);
    const picture = await fetch(`${app.baseUrl}${figures[1]!.pictureUrl}`);
    expect(picture.status).toBe(200);
    expect(picture.headers.get('content-type')).toMatch(/^image\/(png|jpeg)$/);
    expect((await fetch(`${app.baseUrl}/api/files/${fileId}/figures/p2-1/picture?token=1.abc`)).status).toBe(403);

    const described = await api(app, token, 'PUT', `/api/files/${fileId}/figures/p2-1`, { alt: 'Data logger box fixed to a mast' });
    const body = (await described.json()) as { figure: Figure; wcagStatus: string; figuresNeedingAlt: number };
    expect(described.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      wcagStatus: 'passed',
      figuresNeedingAlt: 0,
      figure: { id: 'p2-1', alt: 'Data logger box fixed to a mast', altSource: 'person' },
    });
    // the zip at the same download link now carries the description, and nothing was charged
    expect(await reportOf(fileId)).toContain('Data logger box fixed to a mast');
    expect(await balance(app, email)).toEqual(credits);

    const again = (await (await api(app, token, 'GET', `/api/files/${fileId}/figures`)).json()) as { figures: Figure[] };
    expect(again.figures[1]).toMatchObject({ alt: 'Data logger box fixed to a mast', needsAlt: false, altSource: 'person' });

    const decorative = await api(app, token, 'PUT', `/api/files/${fileId}/figures/p1-1`, { decorative: true });
    expect(decorative.status).toBe(200);
    expect(((await decorative.json()) as { figure: Figure }).figure).toMatchObject({ alt: null, needsAlt: false });
  }, 120_000);

  it('refuses unknown figures, bad bodies, other users and files without a finished conversion', async () => {
    const { token, fileId } = await convertedFile('owner@example.com');
    expect((await api(app, token, 'PUT', `/api/files/${fileId}/figures/p9-1`, { alt: 'x' })).status).toBe(404);
    expect((await api(app, token, 'PUT', `/api/files/${fileId}/figures/p1-1`, { alt: 'x', decorative: true })).status).toBe(400);
    expect((await api(app, token, 'PUT', `/api/files/${fileId}/figures/p1-1`, { alt: '   ' })).status).toBe(400);
    expect((await api(app, token, 'PUT', `/api/files/${fileId}/figures/p1-1`, { alt: 'x'.repeat(2001) })).status).toBe(400);
    expect((await api(app, token, 'PUT', `/api/files/${fileId}/figures/figure-1`, { alt: 'x' })).status).toBe(400);
    const stranger = await app.token('stranger@example.com');
    expect((await api(app, stranger, 'GET', `/api/files/${fileId}/figures`)).status).toBe(404);
    const pending = await uploadPdf(app, token, await picturesPdf());
    const unavailable = await api(app, token, 'GET', `/api/files/${pending}/figures`);
    expect(unavailable.status).toBe(409);
    expect(((await unavailable.json()) as { code: string }).code).toBe('FIGURES_UNAVAILABLE');
  }, 120_000);
});
