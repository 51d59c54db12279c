import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { createConversionEngine } from '../../server/conversion/create-conversion-engine.ts';
import type { Block, ConvertedDocument } from '../../server/conversion/model.ts';
import { auditHtml } from '../../server/conversion/audit/audit-html.ts';
import { renderHtml } from '../../server/conversion/render/html.ts';
import { renderTaggedPdf } from '../../server/conversion/render/pdf.ts';
import type { FolioReport } from '../../server/conversion/render/report.ts';
import { openDocumentRender } from '../../server/conversion/render/stream.ts';
import { silentLog } from '../../server/log.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { page, PNG_BASE64 } from './render-fixture.ts';

const t = (text: string) => ({ kind: 'text' as const, text });
const corpus = (file: string) => new Uint8Array(readFileSync(path.join(CORPUS_DIR, file)));

/**
 * A long document that exercises everything the HTML decides only at the end: the first heading
 * comes late (page 3) and is not level 1, footnote references whose note comes on a later page and one whose note
 * never comes, a table of contents, pictures (their bytes do not count towards audit slices), and
 * enough text for several audit slices.
 */
function longDocument(pages: number): ConvertedDocument {
  return {
    meta: { title: 'Long streamed', lang: 'en', pageCount: pages, tagged: false, sourceName: 'long.pdf' },
    pages: Array.from({ length: pages }, (_, index) => {
      const n = index + 1;
      const blocks: Block[] = [];
      if (n >= 3 && n % 10 === 3) blocks.push({ kind: 'heading', page: n, level: 2, content: [t(`Section on page ${n}`)] });
      blocks.push({
        kind: 'paragraph',
        page: n,
        content: [t('Words that fill the page. '.repeat(60)), { kind: 'footnoteRef', id: `note-${n}`, label: String(n) }],
      });
      if (n % 50 === 0)
        blocks.push({
          kind: 'figure',
          page: n,
          image: { mime: 'image/png', base64: PNG_BASE64, width: 2, height: 2 },
          alt: `Picture ${n}`,
          decorative: false,
          needsAlt: false,
        });
      // every note but the last page's comes one page later
      if (n > 1) blocks.push({ kind: 'footnote', page: n, id: `note-${n - 1}`, label: String(n - 1), content: [t(`Note for page ${n - 1}.`)] });
      return page(n, blocks);
    }),
  };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'folio-render-stream-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('streaming render', () => {
  it('writes, page by page, the same HTML the whole-document renderer makes, audited in slices read from the file', async () => {
    const document = longDocument(320);
    const render = openDocumentRender(document.meta, { dir, baseName: 'long' });
    for (const item of document.pages) await render.add(item);
    const files = await render.finish();

    const whole = renderHtml(document);
    const html = await readFile(files.html, 'utf8');
    expect(html).toBe(whole.html);
    // what the end of the document decided: the title is the h1 (the first heading came late), a contents list, the dead link dropped
    expect(html).toContain('<h1 id="doc-title">Long streamed</h1>');
    expect(html).toContain('aria-label="Table of contents"');
    expect(html).toContain('<sup>320</sup>');
    expect(html).not.toContain('href="#fn-note-320"');
    expect(html).toContain('href="#fn-note-319"');

    expect(files.report.pages).toBe(320);
    const audit = files.report.audit as { slices: number; violations: { rule: string; count: number }[] };
    expect(audit.slices).toBeGreaterThan(1);
    const inMemory = await auditHtml(whole);
    expect(audit.slices).toBe(inMemory.slices);
    expect(audit.violations.map((v) => `${v.rule}:${v.count}`)).toEqual(inMemory.violations.map((v) => `${v.rule}:${v.count}`));

    // the tagged PDF drawn from the spool is the one drawn from memory, page for page
    const streamed = await getDocument({ data: new Uint8Array(await readFile(files.taggedPdf!)), verbosity: 0 }).promise;
    const inMemoryPdf = await getDocument({ data: new Uint8Array(await renderTaggedPdf(document)), verbosity: 0 }).promise;
    expect(streamed.numPages).toBe(inMemoryPdf.numPages);
    expect(streamed.numPages).toBeGreaterThan(50);
    const lastText = async (doc: typeof streamed) =>
      ((await (await doc.getPage(doc.numPages)).getTextContent()).items as { str: string }[]).map((item) => item.str).join('');
    expect(await lastText(streamed)).toBe(await lastText(inMemoryPdf));
    await streamed.loadingTask.destroy();
    await inMemoryPdf.loadingTask.destroy();

    expect(JSON.parse(await readFile(files.reportJson, 'utf8'))).toMatchObject({ pages: 320, wcagStatus: files.report.wcagStatus });
    expect(await readFile(files.reportHtml, 'utf8')).toContain('<title>');
    // only the four outputs are left: the spool and the scratch files are gone
    expect((await readdir(dir)).sort()).toEqual(['long.accessible.pdf', 'long.html', 'long.report.html', 'long.report.json']);
  });

  it('loads without pdf.js: the engine thread renders and never converts', () => {
    const stream = path.join(import.meta.dirname, '../../server/conversion/render/stream.ts');
    const script = `import { registerHooks } from 'node:module';
let pdfjs = false;
registerHooks({ load(url, context, next) { if (url.includes('pdfjs-dist')) pdfjs = true; return next(url, context); } });
await import(${JSON.stringify(pathToFileURL(stream).href)});
process.stdout.write(String(pdfjs));`;
    expect(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' })).toBe('false');
  });

  it('refuses pages out of order, and an aborted render leaves nothing behind', async () => {
    const target = path.join(dir, 'aborted');
    const render = openDocumentRender({ title: 'A', lang: 'en', pageCount: 3, tagged: false, sourceName: 'a.pdf' }, { dir: target, baseName: 'a' });
    await render.add(page(2, [{ kind: 'paragraph', page: 2, content: [t('two')] }]));
    await expect(render.add(page(2, [{ kind: 'paragraph', page: 2, content: [t('again')] }]))).rejects.toThrow(/ascending order/);
    await expect(render.add(page(1, []))).rejects.toThrow(RangeError);
    await render.abort();
    expect(await readdir(target)).toEqual([]);
    await expect(render.finish()).rejects.toThrow(/already finished/);
  });
});

describe('engine: streamed render beside the page pool', () => {
  it('audits a long document in a worker, then converts the next document with every page', async () => {
    const engine = createConversionEngine({ conversion: loadConfig().conversion, log: silentLog, poolSize: 2 });
    try {
      const pdf = corpus('multicolumn-latex.pdf');
      const meta = await engine.inspect(pdf.slice(), { sourceName: 'multicolumn-latex.pdf' });
      const first = await engine.convertPages(pdf.slice(), { pages: [1, 2, 3], backend: 'local' });
      expect(first.map((result) => result.page)).toEqual([1, 2, 3]);

      const document = longDocument(320);
      const render = engine.openRender(document.meta, { dir: path.join(dir, 'engine'), baseName: 'long' });
      for (const item of document.pages) await render.add(item);
      const files = await render.finish();
      expect((files.report as FolioReport).audit.slices).toBeGreaterThan(1);

      // the long audit stopped the idle worker; the next run starts it again and loses no page
      const again = await engine.convertPages(pdf.slice(), { pages: [1, 2, 3], backend: 'local' });
      expect(again.map((result) => result.page)).toEqual([1, 2, 3]);
      expect(again.map((result) => result.textLayerWords)).toEqual(first.map((result) => result.textLayerWords));
      expect(meta.pageCount).toBe(3);
    } finally {
      await engine.close();
    }
  });
});
