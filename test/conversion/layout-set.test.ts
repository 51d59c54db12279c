import { readFileSync } from 'node:fs';
import path from 'node:path';
import { JSDOM } from 'jsdom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertLocalPage } from '../../server/conversion/backends/local/convert-page.ts';
import { inspectDocument } from '../../server/conversion/backends/local/document-meta.ts';
import { closeOcr } from '../../server/conversion/backends/local/ocr.ts';
import { openPdf } from '../../server/conversion/backends/local/pdf.ts';
import { renderHtml } from '../../server/conversion/render/html.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';

/**
 * The layout set's structure against what a careful reader marks on its
 * pages (test/fixtures/layout-set/expected.json, written from the pages).
 * What the engine gets right is asserted outright; where it still falls
 * short of the reader (false headings from code lines, aligned tables'
 * columns and spans) the agreement is measured and may not drop below what
 * it is today: the floors below rise as the engine does.
 */

type Expected = {
  title?: string;
  headings?: { text: string; depth?: number }[];
  numberedHeadings?: { text: string; depth: number }[];
  notHeadings?: string[];
  figures?: { caption: string }[];
  tables?: { caption: string; columns: number; headerRows: number; bodyRows: number; firstColumn: string[]; lastColumnBody: string[] }[];
  alignedTables?: { header: string[]; firstBodyRow: string[]; bodyRows: number }[];
  code?: string[];
  formulas?: string[];
};

const LAYOUT = path.join(CORPUS_DIR, 'layout');
const expected = JSON.parse(readFileSync(path.join(import.meta.dirname, '../fixtures/layout-set/expected.json'), 'utf8')) as Record<string, Expected>;
const files = Object.keys(expected).filter((name) => name.endsWith('.pdf'));
const documents = new Map<string, Document>();

const norm = (text: string | null | undefined) =>
  (text ?? '')
    .normalize('NFKC')
    .replace(/[\s.]+/g, ' ')
    .trim()
    .toLowerCase();

beforeAll(async () => {
  for (const file of files) {
    const bytes = new Uint8Array(readFileSync(path.join(LAYOUT, file)));
    const meta = await inspectDocument(bytes, file);
    const doc = await openPdf(bytes);
    const pages = [];
    try {
      for (let number = 1; number <= meta.pageCount; number++)
        pages.push(await convertLocalPage(doc, number, { docLang: meta.lang, tagged: meta.tagged, ocr: false }));
    } finally {
      await doc.loadingTask.destroy();
    }
    documents.set(file, new JSDOM(renderHtml({ meta, pages }).html).window.document);
  }
}, 240_000);
afterAll(async () => {
  await closeOcr();
});

const headingsOf = (document: Document) =>
  [...document.querySelectorAll('main h1, main h2, main h3, main h4, main h5, main h6')].map((element) => ({
    text: norm(element.textContent),
    level: Number(element.tagName.slice(1)),
  }));

describe('layout set: structure a reader marks on the page', () => {
  it('titles each document from its metadata or its first page, not its file name', () => {
    for (const file of ['code_and_formula.pdf', 'picture_classification.pdf', 'multi_page.pdf']) {
      expect(documents.get(file)!.title, file).toBe(expected[file]!.title);
    }
  });

  it('captions the figures from their "Figure N:" lines and describes them from the captions', () => {
    const document = documents.get('picture_classification.pdf')!;
    const figures = [...document.querySelectorAll('figure')];
    expect(figures.map((figure) => figure.querySelector('figcaption')?.textContent?.trim())).toEqual(
      expected['picture_classification.pdf']!.figures!.map((f) => f.caption),
    );
    expect(figures.every((figure) => figure.querySelector('img')?.getAttribute('alt') === 'This is an example image')).toBe(true);
  });

  it('keeps a ruled table without outer borders whole, with its one caption, and a bold numbered line as a heading', () => {
    const document = documents.get('2305.03393v1-pg9.pdf')!;
    const table = document.querySelector('table')!;
    const header = [...table.querySelectorAll('th')].map((cell) => norm(cell.textContent));
    expect(header[0]).toBe('# enc-layers');
    expect(header).toContain('inference time (secs)'.replace(/[.]/g, ''));
    expect(norm(table.querySelector('caption')?.textContent)).toMatch(/^table 1 hpo performed/);
    // two header rows ("TEDs" over "simple", "complex", "all"), eight body rows: each layer pair spans its OTSL and HTML rows
    const want = expected['2305.03393v1-pg9.pdf']!.tables![0]!;
    expect(table.querySelectorAll('thead tr').length).toBe(want.headerRows);
    expect(table.querySelectorAll('tbody tr').length).toBe(want.bodyRows);
    expect(table.querySelector('th[colspan="3"]')?.textContent).toBe('TEDs');
    expect([...table.querySelector('tbody tr')!.children].reduce((sum, cell) => sum + Number(cell.getAttribute('colspan') ?? 1), 0)).toBe(want.columns);
    expect([...table.querySelectorAll('tbody td[rowspan="2"]')].map((cell) => cell.textContent)).toEqual(['6', '6', '4', '4', '2', '4', '4', '2']);
    expect([...document.querySelectorAll('main p')].some((p) => /^Table 1\.?$/.test(p.textContent?.trim() ?? ''))).toBe(false);
    expect(headingsOf(document).map((heading) => heading.text)).toEqual(['5 1 hyper parameter optimization', '5 2 quantitative results']);
  });

  it('heads a table aligned without rules with the header lines over its columns, and keeps its first row as data', () => {
    const want = expected['table_mislabeled_as_picture.pdf']!.alignedTables![0]!;
    const table = documents.get('table_mislabeled_as_picture.pdf')!.querySelector('table')!;
    expect([...table.querySelectorAll('thead th')].map((cell) => cell.textContent)).toEqual(want.header);
    expect([...table.querySelector('tbody tr')!.children].map((cell) => cell.textContent)).toEqual(want.firstBodyRow);
    expect(table.querySelectorAll('tbody tr').length).toBe(want.bodyRows);
  });

  it('sets monospaced listings as code and syntax lines apart from the headings', () => {
    const code = [...documents.get('code_and_formula.pdf')!.querySelectorAll('pre code')].map((element) => element.textContent);
    expect(code).toEqual(['function add (a , b ) {\n     return a + b ;\n}\nconsole . log ( add (3 , 5) ) ;']);
    const manual = headingsOf(documents.get('redp5110_sampled.pdf')!).map((heading) => heading.text);
    for (const line of expected['redp5110_sampled.pdf']!.notHeadings!) expect(manual).not.toContain(norm(line));
  });

  it('levels numbered headings by their numbering depth across the whole manual', () => {
    const found = headingsOf(documents.get('redp5110_sampled.pdf')!);
    const numbered = expected['redp5110_sampled.pdf']!.numberedHeadings!.flatMap((entry) => {
      const heading = found.find((candidate) => candidate.text.startsWith(norm(entry.text).slice(0, 24)));
      return heading ? [{ depth: entry.depth, level: heading.level }] : [];
    });
    expect(numbered.length).toBeGreaterThanOrEqual(7);
    // a section is never deeper than its subsections (the no-skipped-levels repair may pull a subsection up after a false heading)
    for (const a of numbered) for (const b of numbered) if (a.depth < b.depth) expect(a.level, JSON.stringify([a, b])).toBeLessThanOrEqual(b.level);
    // "Chapter 1" > "1.1" > "1.3.1", where the issue saw them at one level
    expect(numbered.slice(0, 4).map((entry) => entry.level)).toEqual([2, 3, 3, 4]);
  });

  it('keeps its agreement with the reader at least where it stands (headings, code, tables)', () => {
    const scores: Record<string, number> = {};
    let expectedHeadings = 0;
    let foundHeadings = 0;
    let ourHeadings = 0;
    let falseHeadings = 0;
    for (const [file, want] of Object.entries(expected)) {
      if (!file.endsWith('.pdf')) continue;
      const document = documents.get(file)!;
      const ours = headingsOf(document);
      if (want.headings) {
        expectedHeadings += want.headings.length;
        foundHeadings += want.headings.filter((heading) => ours.some((candidate) => candidate.text === norm(heading.text))).length;
        ourHeadings += ours.length;
      }
      falseHeadings += (want.notHeadings ?? []).filter((text) => ours.some((candidate) => candidate.text === norm(text))).length;
    }
    scores.headingRecall = foundHeadings / expectedHeadings;
    scores.headingPrecision = foundHeadings / Math.max(1, ourHeadings);
    scores.falseHeadings = falseHeadings;
    const code = expected['code_and_formula.pdf']!.code!;
    const listings = [...documents.get('code_and_formula.pdf')!.querySelectorAll('pre code')].map((element) => norm(element.textContent)).join(' ');
    scores.codeLines = code.filter((line) => listings.includes(norm(line))).length / code.length;
    const table = expected['2305.03393v1-pg9.pdf']!.tables![0]!;
    const ourTable = documents.get('2305.03393v1-pg9.pdf')!.querySelector('table');
    const cells = [...(ourTable?.querySelectorAll('td, th') ?? [])].map((cell) => norm(cell.textContent));
    scores.tableEdgeCells =
      [...table.firstColumn, ...table.lastColumnBody].filter((value) => cells.includes(norm(value))).length /
      (table.firstColumn.length + table.lastColumnBody.length);
    scores.tableCaption = norm(ourTable?.querySelector('caption')?.textContent).startsWith(norm(table.caption).slice(0, 20)) ? 1 : 0;
    console.info(`layout set agreement: ${JSON.stringify(scores)}`);
    expect(scores.headingRecall).toBeGreaterThanOrEqual(FLOORS.headingRecall);
    expect(scores.headingPrecision).toBeGreaterThanOrEqual(FLOORS.headingPrecision);
    expect(scores.falseHeadings).toBeLessThanOrEqual(FLOORS.falseHeadings);
    expect(scores.codeLines).toBeGreaterThanOrEqual(FLOORS.codeLines);
    expect(scores.tableEdgeCells).toBeGreaterThanOrEqual(FLOORS.tableEdgeCells);
    expect(scores.tableCaption).toBeGreaterThanOrEqual(FLOORS.tableCaption);
  });
});

/** Where the engine stands today (see the test above); raise them as it improves, never lower them. */
const FLOORS = { headingRecall: 1, headingPrecision: 1, falseHeadings: 0, codeLines: 1, tableEdgeCells: 1, tableCaption: 1 };
