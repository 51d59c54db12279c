import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { sql } from '../../server/db/database.ts';
import { DOCX_CHARS_PER_PAGE, measureDocx } from '../../server/files/docx-pages.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { api, balance, makePaid, readEvents, upload } from '../service/harness.ts';
import { until } from '../helpers/wait.ts';
import { docxBytes, pagedBody, writeTemp } from '../helpers/docx.ts';

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { CONVERSION_POOL_SIZE: '1' }, workers: true });
  await registerConversionJobs(app.deps, { schedule: false });
}, 60_000);

async function user(email: string) {
  const token = await app.token(email);
  await api(app, token, 'GET', '/api/me');
  return token;
}

function fileRow(fileId: string) {
  return app.deps.db.maybeOne(sql.type(
    z.object({ status: z.string(), pageCount: z.number().nullable(), holdStatus: z.string().nullable(), charged: z.number().nullable() }),
  )`
    select f.status, f.page_count as "pageCount", h.status as "holdStatus", h.charged
      from files f left join credit_holds h on h.id = f.hold_id where f.id = ${fileId}`);
}

describe('DOCX page count', () => {
  it('counts hard page breaks, rendered page marks, the stored count and the text length, taking the most', async () => {
    expect((await measureDocx(await docxBytes(pagedBody(300)))).pages).toBe(300);
    const rendered = '<w:p><w:r><w:t>a</w:t></w:r><w:r><w:lastRenderedPageBreak/><w:t>b</w:t></w:r></w:p>'.repeat(11);
    expect((await measureDocx(await docxBytes(rendered))).pages).toBe(12);
    const stored = await docxBytes('<w:p><w:r><w:t>short</w:t></w:r></w:p>', { 'docProps/app.xml': '<Properties><Pages>42</Pages></Properties>' });
    expect((await measureDocx(stored)).pages).toBe(42);
    const long = `<w:p><w:r><w:t>${'x'.repeat(DOCX_CHARS_PER_PAGE * 7 + 1)}</w:t></w:r></w:p>`;
    expect((await measureDocx(await docxBytes(long))).pages).toBe(8);
    const sections = `${'<w:p><w:pPr><w:sectPr><w:type w:val="nextPage"/></w:sectPr></w:pPr></w:p>'.repeat(4)}<w:sectPr/>`;
    expect((await measureDocx(await docxBytes(sections))).pages).toBe(5);
    expect((await measureDocx(await docxBytes('<w:p/>'))).pages).toBe(1);
  });

  it('refuses an XML bomb by its unpacked size before parsing it, and a zip that is no DOCX', async () => {
    const bomb = await docxBytes('<w:p/>'.repeat(12_000_000));
    expect(bomb.length).toBeLessThan(1_000_000);
    await expect(measureDocx(bomb)).rejects.toMatchObject({ code: 'FILE_TOO_LARGE' });
    await expect(measureDocx(Buffer.from('PK\x03\x04 not really a zip'))).rejects.toMatchObject({ code: 'UNPROCESSABLE' });
  });
});

describe('DOCX credits', () => {
  it('a free account with 3 pages left cannot convert a 5-page DOCX: 402 and nothing kept', async () => {
    const email = 'free-docx@example.com';
    const token = await user(email);
    await app.deps.db.query(sql.unsafe`update customers set lifetime_free_pages_used = 7 where id = (select customer_id from users where email = ${email})`);
    const response = await upload(app, token, await writeTemp('five.docx', await docxBytes(pagedBody(5))), 'five.docx', DOCX_TYPE);
    expect(response.status).toBe(402);
    expect(await response.json()).toMatchObject({ code: 'FREE_PAGE_LIMIT' });
    expect(await app.deps.db.oneFirst(sql.type(z.object({ n: z.number() }))`select count(*)::int as n from files`)).toBe(0);
    expect(await balance(app, email)).toMatchObject({ freeUsed: 7, freeHeld: 0 });
  });

  it('holds the counted pages at upload and charges them when the conversion completes', async () => {
    const email = 'paid-docx@example.com';
    const token = await user(email);
    await makePaid(app, email, 100);
    const response = await upload(app, token, await writeTemp('twelve.docx', await docxBytes(pagedBody(12))), 'twelve.docx', DOCX_TYPE);
    const file = (await response.json()) as { id: string; pages: number };
    expect(response.status, JSON.stringify(file)).toBe(201);
    expect(file.pages).toBe(12);
    const stream = await fetch(`${app.baseUrl}/api/convert/${file.id}/stream`, { headers: { authorization: `Bearer ${token}` } });
    expect((await readEvents(stream)).at(-1)?.event).toBe('completed');
    expect(await fileRow(file.id)).toMatchObject({ status: 'completed', pageCount: 12, holdStatus: 'settled', charged: 12 });
    expect(await balance(app, email)).toMatchObject({ credits: 88, held: 0 });
  }, 60_000);

  it('a DOCX that fails to convert releases its hold', async () => {
    const email = 'broken-docx@example.com';
    const token = await user(email);
    await makePaid(app, email, 100);
    // counts fine, but is not XML mammoth can read
    const broken = await docxBytes('<w:p><w:r><w:t>one</w:t></w:r></w:p><w:p><w:r><w:t>unclosed');
    const response = await upload(app, token, await writeTemp('broken.docx', broken), 'broken.docx', DOCX_TYPE);
    const file = (await response.json()) as { id: string };
    expect(response.status, JSON.stringify(file)).toBe(201);
    await until(
      () => fileRow(file.id),
      (row) => row?.status === 'failed',
      30_000,
      'the DOCX to fail',
    );
    expect(await fileRow(file.id)).toMatchObject({ holdStatus: 'released', charged: 0 });
    expect(await balance(app, email)).toMatchObject({ credits: 100, held: 0 });
  }, 60_000);

  it('an XML-bomb DOCX is refused at upload with 413, fast, and costs nothing', async () => {
    const email = 'bomb-docx@example.com';
    const token = await user(email);
    await makePaid(app, email, 100);
    const bomb = await writeTemp('bomb.docx', await docxBytes('<w:p/>'.repeat(12_000_000)));
    const response = await upload(app, token, bomb, 'bomb.docx', DOCX_TYPE);
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: 'FILE_TOO_LARGE' });
    expect(await balance(app, email)).toMatchObject({ credits: 100, held: 0 });
  }, 60_000);
});
