import { execFile, execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { JSDOM } from 'jsdom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDocument } from '../../server/conversion/render/render-document.ts';
import { zipOutputs } from '../../server/conversion/render/zip.ts';
import type { FolioReport } from '../../server/conversion/render/report.ts';
import type { ConversionOutputs } from '../../server/conversion/engine.ts';
import { fullDocument } from './render-fixture.ts';

const run = promisify(execFile);
function hasUnzip(): boolean {
  try {
    execFileSync('unzip', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const unzip = hasUnzip();
if (!unzip) console.warn('render-zip: unzip is missing; reading the archive back is skipped');

let dir: string;
let outputs: ConversionOutputs;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'folio-render-zip-'));
  outputs = await renderDocument(fullDocument());
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('report', () => {
  it('carries per-page backend, class, reasons, OCR flag, warnings, audit, timings, cost and totals', () => {
    const report = outputs.report as FolioReport;
    expect(report).toMatchObject({
      wcagStatus: 'passed',
      pages: 2,
      standardPages: 1,
      complexPages: 1,
      costUsd: 0.0123,
      lang: 'en-GB',
      sourceName: 'annual.pdf',
    });
    expect(report.backends).toEqual({ local: 1, 'chunked-vision': 1 });
    expect(report.pageDetails[1]).toMatchObject({
      page: 2,
      label: 'ii',
      backend: 'chunked-vision',
      classification: 'complex',
      reasons: ['formula'],
      ocr: false,
      model: 'test-model',
      promptHash: 'abc',
    });
    expect(report.totals).toMatchObject({ headings: 5, tables: 1, figures: 2, formulas: 2, figuresMissingAlt: 0, violations: 0, words: 68 });
    // Nested blocks count too: the quoted paragraph is the third.
    expect(report.totals.blocks).toMatchObject({ paragraph: 3, blockquote: 1, list: 1, footnote: 1 });
    for (const key of ['conversionMs', 'htmlMs', 'pdfMs', 'auditMs', 'renderMs'] as const) expect(report.timings[key]).toBeGreaterThanOrEqual(0);
    expect(report.timings.conversionMs).toBe(10);
    // Plain JSON all the way down.
    expect(JSON.parse(JSON.stringify(report))).toEqual(report);
  });

  it('renders a document with no pages without failing', async () => {
    const empty = await renderDocument({ meta: { title: '', lang: '', pageCount: 0, tagged: false, sourceName: '' }, pages: [] });
    expect(empty.report).toMatchObject({ pages: 0, standardPages: 0, complexPages: 0, costUsd: 0, wcagStatus: 'passed', title: 'Untitled document' });
    expect(empty.taggedPdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
  });

  it('has a readable HTML page of the same report', () => {
    const doc = new JSDOM(outputs.reportHtml).window.document;
    expect(doc.documentElement.lang).toBe('en');
    expect(doc.querySelector('h1')?.textContent).toContain('Annual <Report>');
    expect(doc.querySelector('.status-passed')?.textContent).toBe('Passed');
    const pages = Array.from(doc.querySelectorAll('caption'))
      .find((c) => c.textContent === 'Pages')!
      .closest('table')!;
    expect(pages.querySelectorAll('tbody tr')).toHaveLength(2);
    expect(pages.querySelector('tbody tr:nth-child(2)')?.textContent).toContain('chunked-vision');
    expect(doc.body.textContent).toContain('color-contrast');
  });
});

describe('zip', () => {
  it.skipIf(!unzip)('streams the four files under the base name', async () => {
    const file = path.join(dir, 'out.zip');
    await pipeline(zipOutputs(outputs, 'My Report/../x.pdf'), createWriteStream(file));
    const listing = (await run('unzip', ['-Z1', file])).stdout.trim().split('\n');
    const base = 'My Report_.._x';
    expect(listing).toEqual([`${base}.html`, `${base}.accessible.pdf`, `${base}.report.json`, `${base}.report.html`]);
    expect((await run('unzip', ['-tq', file])).stdout).toMatch(/No errors detected/);
    const json = (await run('unzip', ['-p', file, `${base}.report.json`], { maxBuffer: 1 << 26 })).stdout;
    expect(JSON.parse(json).wcagStatus).toBe('passed');
    const html = (await run('unzip', ['-p', file, `${base}.html`], { maxBuffer: 1 << 26 })).stdout;
    expect(html).toBe(outputs.html);
    const pdf = (await run('unzip', ['-p', file, `${base}.accessible.pdf`], { encoding: 'buffer', maxBuffer: 1 << 26 })).stdout;
    expect(Buffer.compare(pdf, outputs.taggedPdf)).toBe(0);
  });
});
