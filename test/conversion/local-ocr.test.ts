import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { closeOcr } from '../../server/conversion/backends/local/ocr.ts';
import { createConversionEngine } from '../../server/conversion/create-conversion-engine.ts';
import type { Block, DocumentMeta, Inline, PageResult } from '../../server/conversion/model.ts';
import { createPageLanguages } from '../../server/conversion/render/page-languages.ts';
import { silentLog } from '../../server/log.ts';
import { renderRegion } from '../../server/conversion/backends/local/images.ts';
import { openPdf } from '../../server/conversion/backends/local/pdf.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { expectInOrder } from '../helpers/in-order.ts';
import { convertLocally } from '../helpers/local-pages.ts';

const convert = (bytes: Uint8Array) => convertLocally(bytes, { name: 'scan.pdf' });

/**
 * OCR of scans in several languages and orientations. The scans are made
 * here: text drawn on a canvas (turned with the canvas transform, as a page
 * fed sideways into a scanner), its PNG the only content of a PDF page.
 * Small images with few lines keep tesseract quick on two cores.
 */

const require = createRequire(import.meta.url);
const SCAN_DPI = 200;

const ARABIC = ['ذهب الطالب إلى المدرسة في الصباح', 'وقرأ الكتاب الجديد مع أصدقائه', 'ثم عاد إلى البيت بعد الظهر'];
const GERMAN = ['Die große Straße führt über die', 'Brücke zum schönen Schloss. Der', 'Bürgermeister und die Bäckerin', 'grüßen die Gäste im Frühling.'];
const FRENCH = ['Le comité s’est réuni mardi pour', 'examiner le budget de la nouvelle', 'bibliothèque. Les élèves ont été', 'invités à donner leur avis.'];

type ScanPage = { lines: string[]; turn?: number; rtl?: boolean };

/** A PDF of image-only pages, each the given lines drawn on white and turned clockwise by `turn` degrees. */
async function scanPdf(pages: ScanPage[], lang?: string): Promise<Uint8Array> {
  const { createCanvas, GlobalFonts } = await import('@napi-rs/canvas');
  const { PDFDocument } = await import('pdf-lib');
  GlobalFonts.registerFromPath(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSerif.ttf'), 'ScanSerif');
  // DejaVu Serif has no Arabic
  GlobalFonts.registerFromPath(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'), 'ScanSans');
  const pdf = await PDFDocument.create();
  if (lang) pdf.setLanguage(lang);
  for (const { lines, turn = 0, rtl = false } of pages) {
    const [width, height] = [1000, 110 + lines.length * 80];
    const sideways = turn % 180 !== 0;
    const canvas = createCanvas(sideways ? height : width, sideways ? width : height);
    const context = canvas.getContext('2d');
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.translate(canvas.width / 2, canvas.height / 2);
    context.rotate((turn * Math.PI) / 180);
    context.translate(-width / 2, -height / 2);
    context.fillStyle = '#000000';
    context.font = rtl ? '40px ScanSans' : '34px ScanSerif';
    context.textAlign = rtl ? 'right' : 'left';
    lines.forEach((line, index) => context.fillText(line, rtl ? width - 40 : 40, 90 + index * 80));
    const image = await pdf.embedPng(canvas.toBuffer('image/png'));
    const size = { width: (canvas.width * 72) / SCAN_DPI, height: (canvas.height * 72) / SCAN_DPI };
    pdf.addPage([size.width, size.height]).drawImage(image, { x: 0, y: 0, ...size });
  }
  return pdf.save();
}

const inlineText = (list: Inline[]): string => list.map((item) => ('children' in item ? inlineText(item.children) : 'text' in item ? item.text : ' ')).join('');
const pageText = (page: PageResult) => page.blocks.map((block) => (block.kind === 'paragraph' ? inlineText(block.content) : '')).join(' ');
/** The renderer's view of the document: its settled metadata and its pages as they are drawn. */
function settle(meta: DocumentMeta, pages: PageResult[]): { meta: DocumentMeta; pages: PageResult[] } {
  const languages = createPageLanguages(meta);
  for (const page of pages) languages.add(page);
  return { meta: languages.meta(), pages: pages.map((page) => languages.mark(page)) };
}

const words = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** Share of the known words found, spelled exactly (umlauts, accents and ß included). */
function recall(known: string[], read: string): number {
  const found = new Set(words(read));
  const expected = words(known.join(' '));
  return expected.filter((word) => found.has(word)).length / expected.length;
}

afterAll(async () => {
  await closeOcr();
});

describe('OCR languages', () => {
  it('reads an upright German scan in German, umlauts and ß included, and gives the page the language', { timeout: 60_000 }, async () => {
    const { meta, pages } = await convert(await scanPdf([{ lines: GERMAN }]));
    const [page] = pages;
    expect(page!.ocr).toBe(true);
    expect(recall(GERMAN, pageText(page!))).toBeGreaterThanOrEqual(0.9);
    expect(pageText(page!)).toMatch(/Straße/);
    expect(page!.lang).toBe('de');
    // the document had no text to detect a language from: the OCR'd page decides it
    expect(meta.lang).toBe('en');
    expect(settle(meta, pages).meta.lang).toBe('de');
  });

  it('reads each page of a German and French scan in its own language', { timeout: 90_000 }, async () => {
    const { pages } = await convert(await scanPdf([{ lines: GERMAN }, { lines: FRENCH }]));
    expect(pages.map((page) => page.lang)).toEqual(['de', 'fr']);
    expect(recall(GERMAN, pageText(pages[0]!))).toBeGreaterThanOrEqual(0.9);
    expect(recall(FRENCH, pageText(pages[1]!))).toBeGreaterThanOrEqual(0.9);
    expect(pageText(pages[1]!)).toMatch(/bibliothèque/);
  });

  it('reads Arabic and then German scans with no /Lang, each script named by orientation and script detection', { timeout: 90_000 }, async () => {
    // OSD needs a page's worth of joined-up Arabic letters to name the script
    const lines = [...ARABIC, ...ARABIC, ...ARABIC, ...ARABIC];
    // the German page is first read in Arabic, the language of the page before it
    const { pages } = await convert(await scanPdf([{ lines, rtl: true }, { lines: GERMAN }]));
    expect(pages.map((page) => page.lang)).toEqual(['ar', 'de']);
    expect(recall(ARABIC, pageText(pages[0]!))).toBeGreaterThanOrEqual(0.9);
    expect(recall(GERMAN, pageText(pages[1]!))).toBeGreaterThanOrEqual(0.9);
  });

  it('gives the HTML the language of a scanned document, through the worker pool and the renderer', { timeout: 120_000 }, async () => {
    const engine = createConversionEngine({ conversion: loadConfig({ ...process.env }).conversion, log: silentLog, poolSize: 1 });
    try {
      const bytes = await scanPdf([{ lines: GERMAN }]);
      const meta = await engine.inspect(bytes, { sourceName: 'scan.pdf' });
      const pages = await engine.convertPages(bytes, { pages: [1], backend: 'local' });
      const { html } = await engine.render({ meta, pages });
      expect(html).toMatch(/<html lang="de"/);
      expect(html).toMatch(/Bürgermeister/);
    } finally {
      await engine.close();
    }
  });

  it('uses the language the catalog declares', { timeout: 60_000 }, async () => {
    const { meta, pages } = await convert(await scanPdf([{ lines: GERMAN }], 'de-CH'));
    expect(meta.lang).toBe('de-CH');
    expect(pages[0]!.lang).toBe('de-CH');
    expect(recall(GERMAN, pageText(pages[0]!))).toBeGreaterThanOrEqual(0.9);
  });
});

describe('OCR orientation', () => {
  for (const turn of [90, 180]) {
    it(`reads a German scan turned ${turn}° and says it was turned`, { timeout: 90_000 }, async () => {
      const { pages } = await convert(await scanPdf([{ lines: GERMAN, turn }]));
      const [page] = pages;
      expect(recall(GERMAN, pageText(page!))).toBeGreaterThanOrEqual(0.9);
      expect(page!.lang).toBe('de');
      expect(page!.warnings.join(' ')).toMatch(new RegExp(`turned ${360 - turn}°`));
    });
  }
});

describe('document language from its pages', () => {
  const paragraph = (page: number, text: string): Block => ({ kind: 'paragraph', page, content: [{ kind: 'text', text }] });
  const result = (page: number, text: string, lang?: string): PageResult => ({
    page,
    label: String(page),
    backend: 'local',
    classification: 'standard',
    reasons: [],
    blocks: [paragraph(page, text)],
    warnings: [],
    textLayerWords: 0,
    ocr: lang !== undefined,
    ...(lang ? { lang } : {}),
    timings: { ms: 0 },
    costUsd: 0,
  });
  const meta: DocumentMeta = { title: 'Mixed', lang: 'en-GB', pageCount: 3, tagged: false, sourceName: 'mixed.pdf' };

  it('keeps the metadata language when most words are in it and marks the other pages', () => {
    const pages = [result(1, 'one two three four five six'), result(2, 'eins zwei drei', 'de'), result(3, 'seven eight nine ten', 'en')];
    const settled = settle(meta, pages);
    expect(settled.meta.lang).toBe('en-GB');
    expect(settled.pages[0]!.blocks).toEqual(pages[0]!.blocks);
    expect(settled.pages[1]!.blocks[0]).toMatchObject({
      kind: 'paragraph',
      content: [{ kind: 'lang', lang: 'de', children: [{ kind: 'text', text: 'eins zwei drei' }] }],
    });
    expect(settled.pages[2]!.blocks).toEqual(pages[2]!.blocks);
  });

  it('takes the language of most words when the OCR pages outweigh the rest', () => {
    const settled = settle(meta, [result(1, 'one two'), result(2, 'eins zwei drei vier', 'de'), result(3, 'fünf sechs sieben', 'de')]);
    expect(settled.meta.lang).toBe('de');
    expect(settled.pages[0]!.blocks[0]).toMatchObject({ content: [{ kind: 'lang', lang: 'en-GB' }] });
    expect(settled.pages[1]!.blocks).toEqual([paragraph(2, 'eins zwei drei vier')]);
  });
});

describe('a scan laid out from its words', () => {
  // two columns whose lines stand at the same heights, under a title set big, over a page number at the foot
  const LEFT = [
    'The harbour pilot rowed out at dawn',
    'to meet the steamer off the reef and',
    'brought her safely into the channel',
    'before the tide turned against them.',
  ];
  const RIGHT = [
    'Cargo from the islands was landed on',
    'the wharf by noon and carried away',
    'to the warehouses along the river',
    'where the merchants waited for it.',
  ];

  async function twoColumnScan(
    options: { gutter: number; drop: number; times: number; over?: string[] } = { gutter: 265, drop: 0, times: 1 },
  ): Promise<Uint8Array> {
    const { createCanvas, GlobalFonts } = await import('@napi-rs/canvas');
    const { PDFDocument } = await import('pdf-lib');
    GlobalFonts.registerFromPath(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSerif.ttf'), 'ScanSerif');
    const left = Array.from({ length: options.times }, () => LEFT).flat();
    const right = Array.from({ length: options.times }, () => RIGHT).flat();
    // lines across the page's width over the columns, as a scan's first half in one column
    const over = options.over ?? [];
    const top = 260 + over.length * 56;
    const canvas = createCanvas(1700, 420 + (over.length + left.length) * 56);
    const context = canvas.getContext('2d');
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.fillStyle = '#000000';
    context.font = '64px ScanSerif';
    context.fillText('News of the Harbour', 520, 120);
    context.font = '30px ScanSerif';
    // each column justified to its longest line, as a book or a paper sets them, save its paragraphs' last lines
    const width = Math.max(...[...LEFT, ...RIGHT].map((line) => context.measureText(line).width));
    const justified = (line: string, x: number, y: number) => {
      const words = line.split(' ');
      // a paragraph's last line is set with plain spaces
      const space = line.endsWith('.')
        ? context.measureText(' ').width
        : (width - words.reduce((sum, word) => sum + context.measureText(word).width, 0)) / (words.length - 1);
      for (const word of words) {
        context.fillText(word, x, y);
        x += context.measureText(word).width + space;
      }
    };
    over.forEach((line, index) => context.fillText(line, 80, 260 + index * 56));
    left.forEach((line, index) => justified(line, 80, top + index * 56));
    // the right column a gutter to the right of the left one, its lines `drop` pixels lower
    right.forEach((line, index) => justified(line, 80 + width + options.gutter, top + options.drop + index * 56));
    context.fillText('7', 840, canvas.height - 60);
    const pdf = await PDFDocument.create();
    const image = await pdf.embedPng(canvas.toBuffer('image/png'));
    const size = { width: (canvas.width * 72) / SCAN_DPI, height: (canvas.height * 72) / SCAN_DPI };
    pdf.addPage([size.width, size.height]).drawImage(image, { x: 0, y: 0, ...size });
    return pdf.save();
  }

  it('reads two columns whose lines stand level one after the other, a title set big as the heading, and no page number', { timeout: 60_000 }, async () => {
    const { pages } = await convert(await twoColumnScan());
    const [page] = pages;
    const heading = page!.blocks.find((block) => block.kind === 'heading');
    expect(heading && heading.kind === 'heading' ? inlineText(heading.content) : '').toBe('News of the Harbour');
    const text = pageText(page!);
    expect(recall([...LEFT, ...RIGHT], text)).toBeGreaterThanOrEqual(0.95);
    // each column whole and in order: its sentence reads through, not a line of each in turn
    expect(text).toContain('brought her safely into the channel before the tide turned against them.');
    expect(text.indexOf('against them.')).toBeLessThan(text.indexOf('Cargo from the islands'));
    expect(text).toContain('to the warehouses along the river where the merchants waited for it.');
    expect(words(text)).not.toContain('7');
    expect(page!.reasons).toContain('ocr');
  });
  it('reads two justified columns that tesseract takes for one, a gutter of a size between them and their lines at their own heights', {
    timeout: 60_000,
  }, async () => {
    // twenty lines a column: a gutter is known by the lines it runs down
    const { pages } = await convert(await twoColumnScan({ gutter: 30, drop: 14, times: 5 }));
    const text = pageText(pages[0]!);
    // (the stretched spaces of justified lines cost OCR a few words: the order is what is asked here)
    expect(recall([...LEFT, ...RIGHT], text)).toBeGreaterThanOrEqual(0.85);
    // the left column whole, then the right one: no word of the right column before the left one's last line
    const leftEnd = text.lastIndexOf('against them.');
    const rightStart = text.indexOf('Cargo from the islands');
    expect(leftEnd).toBeGreaterThan(0);
    expect(rightStart).toBeGreaterThan(leftEnd);
    for (const word of ['Cargo', 'wharf', 'warehouses', 'merchants']) expect(text.slice(0, leftEnd)).not.toContain(word);
    for (const word of ['harbour', 'steamer', 'channel', 'tide']) expect(text.slice(rightStart)).not.toContain(word);
  });

  it("reads a two-column paper's page scanned at 150 dpi column by column, as its text layer reads (multicolumn-latex.pdf)", { timeout: 60_000 }, async () => {
    const bytes = new Uint8Array(readFileSync(path.join(CORPUS_DIR, 'multicolumn-latex.pdf')));
    const born = pageText((await convertLocally(bytes.slice(), { pages: [1], ocr: false })).pages[0]!);
    // the page drawn as a picture, the only content of a page of its size: a scan of it
    const doc = await openPdf(bytes.slice());
    const page = await doc.getPage(1);
    const [x0 = 0, y0 = 0, x1 = 612, y1 = 792] = page.view;
    const picture = (await renderRegion(page, { x0, y0, x1, y1 }))!;
    await doc.loadingTask.destroy();
    const { PDFDocument } = await import('pdf-lib');
    const pdf = await PDFDocument.create();
    const image = picture.mime === 'image/png' ? await pdf.embedPng(picture.base64) : await pdf.embedJpg(picture.base64);
    pdf.addPage([x1 - x0, y1 - y0]).drawImage(image, { x: 0, y: 0, width: x1 - x0, height: y1 - y0 });
    const text = pageText((await convert(await pdf.save())).pages[0]!);
    // the text layer's sentences, by their first five words, come from the scan in the same order: each found after the
    // one before (a column read line across line with the next leaves most of them out of order or broken)
    const openings = born
      .split(/(?<=\.) (?=[A-Z])/)
      .map((sentence) => sentence.split(' ').slice(0, 5).join(' '))
      .filter((opening) => opening.split(' ').length === 5);
    let at = 0;
    let inOrder = 0;
    for (const opening of openings) {
      const found = text.indexOf(opening, at);
      if (found < 0) continue;
      inOrder++;
      at = found + opening.length;
    }
    expect(inOrder).toBeGreaterThanOrEqual(openings.length * 0.5);
  });

  it('reads a brochure scan as its page is set: both title lines, the columns under a list set across them in turn, and the section under them (scanned-two-column-brochure.pdf)', {
    timeout: 60_000,
  }, async () => {
    const { pages } = await convert(new Uint8Array(readFileSync(path.join(CORPUS_DIR, 'scanned-two-column-brochure.pdf'))));
    const blocks = pages[0]!.blocks;
    // tesseract.js's own default reads the page as one block: the second title line went unread and the columns ran
    // line across line
    const headings = blocks.flatMap((block) => (block.kind === 'heading' ? [inlineText(block.content).replace(/\s+/g, ' ')] : []));
    expect(headings[0]).toBe('The LinnSequencer 32 Track MIDI Sequence Recorder');
    // the list is set a size over the columns' text, which OCR reads 12 to 13 pt from line to line: text, not headings
    // and the introduction's first line, read a size over its second, runs on into it: a paragraph, not a heading
    for (const line of ['The LinnSequencer is a state', 'Operation is similar', 'synthesizers!', 'per disk!', 'rhythmic value.', 'Optional remote control.'])
      expect(headings.filter((heading) => heading.startsWith(line))).toEqual([]);
    const text = blocks.map((block) => (block.kind === 'paragraph' || block.kind === 'heading' ? inlineText(block.content) : '')).join(' ');
    // one paragraph, though its first line reads a size over the rest
    expect(blocks.filter((block) => block.kind === 'paragraph' && inlineText(block.content).includes('musician. It is extremely powerful'))).toHaveLength(1);
    // the left column's last sentence runs on at the top of the right one
    expect(text).toContain('To overdub notes at specific points within a sequence, simply use LOCATE, FAST FORWARD, or REWIND to find the desired bar number');
    expectInOrder(text, [
      'Optional remote control.',
      'Recording a Sequence',
      'To erase a wrong note',
      'The INSERT/COPY function',
      'Composition Without Compromise',
      'Additional Features',
      'Simple, easy to learn',
    ]);
  });

  it("keeps what OCR reads in a book page's picture out of the sentences beside it (scanned-book-page.pdf)", { timeout: 60_000 }, async () => {
    const { pages } = await convert(new Uint8Array(readFileSync(path.join(CORPUS_DIR, 'scanned-book-page.pdf'))));
    const text = pageText(pages[0]!);
    // before, the picture's specks read as words ran through the lines beside it: "amongst i rs the trees", "the | 1 GREE widow’s"
    expect(text).toContain('went tip-toeing along a path amongst the trees back towards the end of the widow’s garden, stooping down so as');
    for (const speck of ['pam', 'ww', 'gree', 'ills', 'rs']) expect(words(text)).not.toContain(speck);
    expect(recall(['If you are with the quality, or at a funeral, or trying to go to sleep when you ain’t sleepy'], text)).toBe(1);
  });
});
