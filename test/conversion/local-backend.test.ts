import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { convertLocalPage } from '../../server/conversion/backends/local/convert-page.ts';
import { inspectDocument, readMeta } from '../../server/conversion/backends/local/document-meta.ts';
import { closeOcr } from '../../server/conversion/backends/local/ocr.ts';
import { openPdf } from '../../server/conversion/backends/local/pdf.ts';
import { createEdgeCache } from '../../server/conversion/backends/local/running-heads.ts';
import { isGarbled } from '../../server/conversion/backends/local/text-layer-quality.ts';
import { readTextLayer } from '../../server/conversion/backends/local/text-layer.ts';
import { type StructNode, withSingleClaims } from '../../server/conversion/backends/local/tagged.ts';
import { detectLanguage } from '../../server/conversion/backends/local/language.ts';
import type { Block, Inline, PageResult } from '../../server/conversion/model.ts';
import { loadConfig } from '../../server/config.ts';
import { createConversionEngine } from '../../server/conversion/create-conversion-engine.ts';
import { silentLog } from '../../server/log.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import PDFDocument from 'pdfkit';
import { convertLocally } from '../helpers/local-pages.ts';

/** The local backend in this thread, page by page, against real corpus files. */

const corpus = (file: string) => new Uint8Array(readFileSync(path.join(CORPUS_DIR, file)));

async function convert(file: string, pages?: number[]): Promise<PageResult[]> {
  const bytes = corpus(file);
  const meta = await inspectDocument(bytes, file);
  const doc = await openPdf(bytes);
  try {
    const results: PageResult[] = [];
    for (const page of pages ?? Array.from({ length: meta.pageCount }, (_, index) => index + 1)) {
      results.push(await convertLocalPage(doc, page, { docLang: meta.lang, tagged: meta.tagged }));
    }
    return results;
  } finally {
    await doc.loadingTask.destroy();
  }
}

const text = (list: Inline[] | undefined): string =>
  (list ?? []).map((item) => ('children' in item ? text(item.children) : 'text' in item ? item.text : ' ')).join('');
const blocksOf = (results: PageResult[]): Block[] => results.flatMap((result) => result.blocks);

afterAll(async () => {
  await closeOcr();
});

describe('local backend: tagged PDFs from their structure tree', () => {
  it('gives the headings of verapdf-ua1-7.4.2-headings.pdf as H1, H2, H3 with their text', async () => {
    const headings = blocksOf(await convert('verapdf-ua1-7.4.2-headings.pdf')).filter((block) => block.kind === 'heading');
    expect(headings.map((heading) => [heading.level, text(heading.content)])).toEqual([
      [1, 'Heading level 1'],
      [2, 'Heading level 2'],
      [3, 'Heading level 3'],
    ]);
  });

  it('keeps the table of verapdf-ua1-7.5-table-scope.pdf with column and row header scopes', async () => {
    const tables = blocksOf(await convert('verapdf-ua1-7.5-table-scope.pdf')).filter((block) => block.kind === 'table');
    expect(tables).toHaveLength(1);
    const [header, body] = tables[0]!.rows;
    expect(header!.map((cell) => [cell.header, cell.scope])).toEqual(Array(5).fill([true, 'col']));
    expect(text(header![0]!.content)).toBe('Index');
    expect(body![0]).toMatchObject({ header: true, scope: 'row' });
    expect(body!.slice(1).every((cell) => !cell.header)).toBe(true);
  });

  it('turns the L/LI/Lbl/LBody list of verapdf-ua1-7.1-list.pdf into a list with its items', async () => {
    const blocks = blocksOf(await convert('verapdf-ua1-7.1-list.pdf'));
    const lists = blocks.filter((block) => block.kind === 'list');
    expect(lists).toHaveLength(1);
    expect(lists[0]!.items).toHaveLength(2);
    for (const item of lists[0]!.items) expect(text(item.content).trim().length).toBeGreaterThan(3);
    // the bullet glyphs are labels, not content
    expect(lists[0]!.ordered).toBe(false);
    expect(lists[0]!.items.every((item) => !text(item.content).includes('•'))).toBe(true);
    expect(text(lists[0]!.items[0]!.content)).toMatch(/^The real content of a document comprises objects/);
  });

  it('carries the /Alt of verapdf-ua1-7.3-figure-alt.pdf to the figure, without the trailing NUL', async () => {
    const figures = blocksOf(await convert('verapdf-ua1-7.3-figure-alt.pdf')).filter((block) => block.kind === 'figure');
    expect(figures).toHaveLength(1);
    expect(figures[0]).toMatchObject({ alt: 'Logo of Dual lab sprl', needsAlt: false, decorative: false });
  });

  it('takes a Figure that paints only a check box beside a line of text for decoration, and keeps a drawn chart a figure to describe', async () => {
    // Word tags a check box shape as a Figure without /Alt (right_to_left_03.pdf): there is no picture in it to describe
    const doc = new PDFDocument({ size: 'A4', margin: 0, tagged: true, lang: 'en', pdfVersion: '1.7' } as ConstructorParameters<typeof PDFDocument>[0]);
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    const done = new Promise<void>((resolve) => doc.on('end', () => resolve()));
    const root = doc.struct('Document');
    doc.addStructure(root);
    const line = (value: string, x: number, y: number) => () => void doc.font('Helvetica').fontSize(11).text(value, x, y, { lineBreak: false });
    root.add(doc.struct('P', {}, line('Does the producer hold the national standard for these bars?', 72, 100)));
    root.add(doc.struct('Figure', {}, () => void doc.lineWidth(0.8).rect(72, 130, 10, 10).stroke()));
    root.add(doc.struct('P', {}, line('Yes, the standard was granted to the producer last year.', 88, 130)));
    root.add(doc.struct('Figure', {}, () => void doc.lineWidth(1).moveTo(72, 300).lineTo(272, 200).lineTo(272, 300).closePath().stroke()));
    root.add(doc.struct('P', {}, line('The chart above shows the output of the mill by month.', 72, 320)));
    root.end();
    doc.end();
    await done;
    const { pages } = await convertLocally(new Uint8Array(Buffer.concat(chunks)), { ocr: false });
    const figures = pages[0]!.blocks.filter((block) => block.kind === 'figure');
    expect(figures.map((figure) => [figure.decorative, figure.needsAlt])).toEqual([
      [true, false],
      [false, true],
    ]);
  });

  it("keeps one claim of a marked-content id two elements point at: the one in the tree's order of the page's ids", () => {
    const content = (mcid: number): StructNode => ({ type: 'content', id: `p1R_mc${mcid}` });
    const paragraph = (...kids: number[]): StructNode => ({ role: 'P', children: kids.map(content) });
    // a re-saved file's paragraph run over from the page before names this page's mc11 where it meant the last page's
    const tree: StructNode = { children: [{ role: 'Sect', children: [paragraph(11, 0), paragraph(1), paragraph(10), paragraph(11)] }] };
    const ids = (node: StructNode): string[][] => node.children![0]!.children!.map((element) => element.children!.map((kid) => kid.id!));
    expect(ids(withSingleClaims(tree))).toEqual([['p1R_mc0'], ['p1R_mc1'], ['p1R_mc10'], ['p1R_mc11']]);
    const sound: StructNode = { children: [{ role: 'Sect', children: [paragraph(0), paragraph(1, 2)] }] };
    expect(withSingleClaims(sound)).toBe(sound);
  });

  it('gives the formula of verapdf-ua1-7.7-formula.pdf its alt text and marks the page complex', async () => {
    const [page] = await convert('verapdf-ua1-7.7-formula.pdf');
    const formulas = page!.blocks.filter((block) => block.kind === 'formula');
    expect(formulas.length).toBeGreaterThan(0);
    expect(formulas[0]!.text.length).toBeGreaterThan(0);
    expect(page!.classification).toBe('complex');
    expect(page!.reasons).toContain('formula');
  });
});

describe('local backend: tagged formulas', () => {
  it('keeps the MathML of latex-tagged-two-column.pdf display formulas and reads inline ones inside their sentence', async () => {
    const [page] = await convert('latex-tagged-two-column.pdf', [1]);
    const formulas = page!.blocks.filter((block) => block.kind === 'formula');
    expect(formulas.length).toBeGreaterThan(0);
    expect(formulas[0]!.mathml).toMatch(/^<math xmlns="http:\/\/www.w3.org\/1998\/Math\/MathML" display="block">/);
    const sentence = page!.blocks.find((block) => block.kind === 'paragraph' && text(block.content).startsWith('Let'));
    expect(sentence && sentence.kind === 'paragraph' ? text(sentence.content) : '').toMatch(/^Let 𝑝 be a prime/);
  });

  it("reads a browser's tagged page, text pieces between Links with no P around them, as paragraphs the page sets apart, words of wrapped lines apart", async () => {
    const [page] = await convert('wikipedia-pdfjs-tagged.pdf', [1]);
    const paragraphs = page!.blocks.flatMap((block) => (block.kind === 'paragraph' ? [text(block.content)] : []));
    expect(paragraphs).toContain(
      'PDF.js is a JavaScript library that renders Portable Document Format (PDF) files using the web standards-compliant HTML5 Canvas. ' +
        'The project is led by the Mozilla Corporation after Andreas Gal launched it (initially as an experiment) in 2011.',
    );
    // each Link was a paragraph of its own ("is a", "JavaScript library", "that renders")
    expect(paragraphs).not.toContain('JavaScript library');
    const created = paragraphs.find((paragraph) => paragraph.startsWith('The project was created'));
    expect(created).toMatch(
      /^The project was created to provide a way for viewing PDF documents natively in the web browser, which prevents potential security risks/,
    );
  });

  it('drops markup outside the MathML allow-list from a formula the document carries', async () => {
    const { structTreeToBlocks } = await import('../../server/conversion/backends/local/tagged.ts');
    const blocks = structTreeToBlocks(
      {
        children: [
          {
            role: 'Formula',
            alt: 'x',
            mathML:
              '<math display="block"><mi onclick="alert(1)">x</mi><script>alert(1)</script><annotation encoding="application/x-tex">x</annotation></math>',
            children: [],
          },
        ],
      },
      { page: 1, docLang: 'en', textById: new Map(), links: new Map() },
    );
    expect(blocks).toHaveLength(1);
    const formula = blocks[0]!;
    expect(formula.kind === 'formula' && formula.mathml).not.toMatch(/script|onclick/);
    expect(formula).toMatchObject({ kind: 'formula', text: 'x', tex: 'x', display: true });
  });
});

describe('local backend: untagged PDFs from their layout', () => {
  it('reads the left column of multicolumn-latex.pdf before the right one and drops the page number', async () => {
    const [page] = await convert('multicolumn-latex.pdf', [2]);
    const all = page!.blocks.map((block) => (block.kind === 'paragraph' || block.kind === 'heading' ? text(block.content) : '')).join('\n');
    // the left column ends "...per inceptos hymenaeos" region; the right column starts "luctus et ultrices posuere"
    const left = all.indexOf('Sed commodo posuere pede');
    const right = all.indexOf('luctus et ultrices posuere');
    expect(left).toBeGreaterThanOrEqual(0);
    expect(right).toBeGreaterThan(left);
    expect(page!.reasons).toContain('multi-column');
    expect(page!.blocks.some((block) => block.kind === 'paragraph' && text(block.content).trim() === '2')).toBe(false);
    // a line-end hyphen is repaired: "fer-" + "mentum" reads "fermentum"
    expect(all).toContain('fermentum faucibus');
  });

  it('finds the title as the top heading of multicolumn-latex.pdf', async () => {
    const [page] = await convert('multicolumn-latex.pdf', [1]);
    const first = page!.blocks.find((block) => block.kind === 'heading');
    expect(first).toMatchObject({ level: 1 });
    expect(text(first!.kind === 'heading' ? first!.content : [])).toBe('Two-Column Document with Lorem Ipsum');
  });

  it('finds the booktabs table of multicolumn-latex.pdf p.3 from its horizontal rules, the row above the mid rule as header, with its caption', async () => {
    const [page] = await convert('multicolumn-latex.pdf', [3]);
    const table = page!.blocks.find((block) => block.kind === 'table');
    expect(table).toBeDefined();
    if (table?.kind !== 'table') return;
    // top, mid and bottom rules of one width: the structure is drawn, not guessed
    expect(table.uncertain).toBeUndefined();
    expect(table.rows).toHaveLength(6);
    expect(table.rows.slice(1).every((row) => row.length === 5 && row.every((cell) => !cell.header))).toBe(true);
    expect(text(table.caption)).toMatch(/^Table 1: EU Countries Information/);
    expect(table.rows[0]!.map((cell) => [text(cell.content), cell.header, cell.scope])).toEqual([
      ['Country', true, 'col'],
      ['Population (millions)', true, 'col'],
      ['Area (km2)', true, 'col'],
      ['Capital', true, 'col'],
      ['Official Language', true, 'col'],
    ]);
    expect(table.rows[1]!.map((cell) => text(cell.content))).toEqual(['Austria', '8.9', '83,879', 'Vienna', 'German']);
    expect(page!.reasons).toContain('table');
    expect(page!.reasons).not.toContain('multi-column');
  });

  it('keeps running heads out of the flow: geotopo-117-pages.pdf p.29 does not start with "26 2.1. TOPOLOGISCHE …"', async () => {
    const engine = createConversionEngine({ conversion: loadConfig({}).conversion, log: silentLog, poolSize: 1 });
    try {
      const [page] = await engine.convertPages(corpus('geotopo-117-pages.pdf'), { pages: [29], backend: 'local' });
      const first = page!.blocks[0]!;
      expect(first.kind === 'paragraph' || first.kind === 'heading' ? text(first.content) : '').not.toMatch(/TOPOLOGISCHE MANNIGFALTIGKEITEN/);
      expect(page!.blocks.some((block) => (block.kind === 'paragraph' || block.kind === 'heading') && /Beispiel 20/.test(text(block.content)))).toBe(true);
    } finally {
      await engine.close();
    }
  });

  it("reads a neighbour's text layer once: the page converted from the read-ahead equals one read afresh", async () => {
    const bytes = corpus('geotopo-117-pages.pdf');
    const meta = await inspectDocument(bytes, 'geotopo-117-pages.pdf');
    const doc = await openPdf(bytes);
    try {
      const edges = createEdgeCache(doc);
      const options = { docLang: meta.lang, tagged: meta.tagged, neighbours: edges.neighbours, rememberEdges: edges.remember };
      // page 29's running-head check reads pages 27, 28, 30 and 31 ahead
      await convertLocalPage(doc, 29, { ...options, takeTextLayer: edges.takeTextLayer });
      const page30 = await doc.getPage(30);
      const fresh = await readTextLayer(page30);
      page30.cleanup();
      expect(edges.takeTextLayer(30)).toEqual(fresh);
      // handed over once: a second conversion of the page reads it again
      expect(edges.takeTextLayer(30)).toBeUndefined();
      // edge lines stay cached, so asking for the same neighbours again reads no text layer
      expect(edges.takeTextLayer(31)).toBeDefined();
      await edges.neighbours(29);
      expect(edges.takeTextLayer(31)).toBeUndefined();

      const reused = await convertLocalPage(doc, 28, { ...options, takeTextLayer: edges.takeTextLayer });
      const again = await convertLocalPage(doc, 28, options);
      expect(reused.blocks).toEqual(again.blocks);
      expect(reused.blocks.length).toBeGreaterThan(0);
    } finally {
      await doc.loadingTask.destroy();
    }
  });

  it("hands the text the inspection read of the first page to that page's conversion, and reads the same facts", async () => {
    const bytes = corpus('faa-amt-handbook-page.pdf');
    const meta = await inspectDocument(bytes, 'faa-amt-handbook-page.pdf');
    const doc = await openPdf(bytes);
    try {
      const edges = createEdgeCache(doc);
      // the file declares no language: the inspection reads the page's text to tell it
      expect(await readMeta(doc, 'faa-amt-handbook-page.pdf', edges.textLayer)).toEqual(meta);
      const page = await doc.getPage(1);
      const fresh = await readTextLayer(page);
      page.cleanup();
      expect(edges.takeTextLayer(1)).toEqual(fresh);
    } finally {
      await doc.loadingTask.destroy();
    }
  });

  it('OCRs scanned-book-page.pdf, which has no text layer, offline', { timeout: 60_000 }, async () => {
    const [page] = await convert('scanned-book-page.pdf');
    expect(page!.ocr).toBe(true);
    expect(page!.reasons).toContain('ocr');
    expect(page!.textLayerWords).toBe(0);
    const words = blocksOf([page!])
      .map((block) => (block.kind === 'paragraph' ? text(block.content) : ''))
      .join(' ');
    expect(words).toMatch(/tip-toeing/);
    expect(words).toMatch(/widow/);
  });
});

describe('garbled text layers', () => {
  it('OCRs font-without-unicode-map.pdf, whose text layer is punctuation, and reads the word', { timeout: 60_000 }, async () => {
    const [page] = await convert('font-without-unicode-map.pdf');
    expect(page!.ocr).toBe(true);
    expect(page!.warnings.join(' ')).toMatch(/cannot be read/);
    expect(
      blocksOf([page!])
        .map((block) => (block.kind === 'paragraph' ? text(block.content) : ''))
        .join(' '),
    ).toMatch(/Phone/);
  });

  it('does not take dense mathematics or table-of-contents leaders for garbage', () => {
    expect(isGarbled('"7+%-')).toBe(true);
    expect(isGarbled('S n = x ∈ R n+1 ‖x‖ = 1 ist n-dimensionale Mannigfaltigkeit')).toBe(false);
    expect(isGarbled('1.1 Topologische Räume . . . . . . . . . . 3 Heading.............................1')).toBe(false);
    expect(isGarbled('12 / 345')).toBe(false);
  });
});

describe('detectLanguage', () => {
  it('tells scripts and common Latin-script languages apart', () => {
    expect(detectLanguage('이 보고서는 국회입법조사처의 이슈와 논점입니다. 대한민국 국회는 법률을 만듭니다.')).toBe('ko');
    expect(detectLanguage('Die Topologie ist ein Teilgebiet der Mathematik und der Geometrie, die sich mit den Eigenschaften befasst.')).toBe('de');
    expect(detectLanguage('The quick brown fox jumps over the lazy dog and the cat is in the house with the mouse.')).toBe('en');
    expect(detectLanguage('short')).toBe('en');
    // Persian in Arabic script: letters Arabic lacks (پ گ)
    expect(detectLanguage('وعليه، فإن الحكومة المصرية تضع على رأس أولوياتها بناء الإنسان المصري وتحقيق معدلات نمو قوية')).toBe('ar');
    expect(detectLanguage('اميدنامه پذيرش در بازار اصلی کالای داخلی شرکت بورس کالای ايران استاندارد ملی')).toBe('fa');
  });

  it("reads a document's language from its text when its /Lang reads the other way (Word's en-US on a Persian page)", async () => {
    const font = path.join(import.meta.dirname, '../../node_modules/@expo-google-fonts/noto-sans-arabic/400Regular/NotoSansArabic_400Regular.ttf');
    const doc = new PDFDocument({ size: 'A4', margin: 0, lang: 'en-US' } as ConstructorParameters<typeof PDFDocument>[0]);
    const chunks: Buffer[] = [];
    doc.on('data', (chunk: Buffer) => chunks.push(chunk));
    const done = new Promise<void>((resolve) => doc.on('end', () => resolve()));
    doc.font(font).fontSize(14);
    doc.text('اميدنامه پذيرش در بازار اصلی کالای داخلی', 100, 100, { lineBreak: false });
    doc.text('شرکت بورس کالای ايران و استاندارد ملی گروه', 100, 130, { lineBreak: false });
    doc.end();
    await done;
    expect((await inspectDocument(new Uint8Array(Buffer.concat(chunks)), 'fa.pdf')).lang).toBe('fa');
  });
});
