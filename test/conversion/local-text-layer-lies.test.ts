import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import PDFDocument from 'pdfkit';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { convertLocalPage } from '../../server/conversion/backends/local/convert-page.ts';
import { openPdf } from '../../server/conversion/backends/local/pdf.ts';
import { closeOcr } from '../../server/conversion/backends/local/ocr.ts';
import { isNotLanguage } from '../../server/conversion/backends/local/text-layer-quality.ts';
import { blocksText } from '../../server/conversion/page-content.ts';
import { openDocumentRender } from '../../server/conversion/render/stream.ts';
import { convertLocally } from '../helpers/local-pages.ts';

/**
 * Text layers that lie: a font whose Unicode map names other letters than
 * the ones drawn ("sgd Rbhdmbd ne KZmftZfd" for "the Science of Language").
 * The page is drawn by pdfkit with DejaVu Sans and its ToUnicode map then
 * shifted by one letter, so the picture is right and the text layer wrong,
 * as on the first pages of two ACL papers in ../shared/corpus/layout.
 */

const require = createRequire(import.meta.url);

const LEFT = [
  'Language models have become the centre',
  'of many technologies for years. Recently,',
  'due to large scale training and human',
  'annotation, they have become valuable,',
  'and the largest of them are closed',
  'behind proprietary interfaces.',
];
const RIGHT = [
  'We believe that full access to open',
  'models is critical to the study of their',
  'strengths and weaknesses, and we release',
  'the weights with the training data and',
  'the evaluation code.',
];

/** Moves each ASCII letter one place back along the alphabet (b→a, a→z), as a shifted font map does. */
const shift = (code: number) => {
  if (code >= 0x61 && code <= 0x7a) return code === 0x61 ? 0x7a : code - 1;
  if (code >= 0x41 && code <= 0x5a) return code === 0x41 ? 0x5a : code - 1;
  return code;
};

/** The left column with a word broken at a line's end, as a justified column breaks them. */
const LEFT_HYPHENATED = [
  'Language models have become the centre',
  'of many technologies for years. Recent-',
  'ly, due to large scale training and human',
  'annotation, they have become valuable,',
  'and the largest of them are closed',
  'behind proprietary interfaces.',
];
/** A paper's title, its first word (no "a": the test's map turns "a" into "z", which no shift by one letter reads back) under a logo. */
const TITLE = 'Folio: Reading the Columns of Printed Pages';

/**
 * Two columns of prose in DejaVu Sans; with `lie`, the font's ToUnicode map shifted; with `invisible`, the text not
 * drawn (render mode 3); with `paper`, a 20 pt title above them whose first word a logo (a filled box) is drawn over,
 * and the left column hyphenated.
 */
async function twoColumnPage(lie: boolean, invisible = false, paper = false): Promise<Uint8Array> {
  const doc = new PDFDocument({ size: 'A4', margin: 0, compress: false });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve) => doc.on('end', () => resolve()));
  doc.font(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf')).fontSize(10);
  (paper ? LEFT_HYPHENATED : LEFT).forEach((line, index) => doc.text(line, 56, 120 + index * 14, { lineBreak: false }));
  RIGHT.forEach((line, index) => doc.text(line, 306, 120 + index * 14, { lineBreak: false }));
  if (paper) {
    doc.fontSize(20).text(TITLE, 56, 60, { lineBreak: false });
    doc.rect(56, 56, doc.widthOfString('Folio'), 28).fill('#f5b400');
  }
  doc.end();
  await done;
  let pdf = Buffer.concat(chunks).toString('latin1');
  // the content stream is uncompressed: '3 Tr' after each BT keeps the text layer and draws nothing (the /Length is not checked)
  if (invisible) pdf = pdf.replace(/\bBT\b/g, 'BT 3 Tr');
  if (!lie) return new Uint8Array(Buffer.from(pdf, 'latin1'));
  // the CMap's bfrange arrays hold one UTF-16 value per glyph; the stream is uncompressed and the same length after
  const lying = pdf.replace(/beginbfrange[\s\S]*?endbfrange/g, (cmap) =>
    cmap.replace(/<([0-9a-f]{4})>(?=[\s\]])/gi, (_, hex: string) => `<${shift(Number.parseInt(hex, 16)).toString(16).padStart(4, '0')}>`),
  );
  expect(lying).not.toBe(pdf);
  return new Uint8Array(Buffer.from(lying, 'latin1'));
}

const words = (text: string) => text.toLowerCase().match(/\p{L}+/gu) ?? [];

afterAll(async () => {
  await closeOcr();
});

describe('text layers that are not language', () => {
  it('finds a shifted map by its letters and leaves prose, code, tables and mathematics alone', () => {
    expect(isNotLanguage('NKLn . ÜbbdkdqZshmf sgd Rbhdmbd ne KZmftZfd Lncdkr Chqj Fqndmdudkc Odsd VZkrg ÜjrghsZ AgZfhZ Qncmdx Jhmmdx')).toBe(true);
    expect(
      isNotLanguage('KZmftZfd lncdkr gZud adbnld tahpthsntr hm ansg MKO qdrdZqbg Zmc hm bnlldqbhZk oqnctbs needqhmfr Zr sgdhq bnlldqbhZk hlonqsZmbd'),
    ).toBe(true);
    expect(isNotLanguage([...LEFT, ...RIGHT].join(' '))).toBe(false);
    expect(isNotLanguage('Die große Straße führt über die Brücke zum schönen Schloss und der Bürgermeister grüßt die Gäste im Frühling')).toBe(false);
    expect(isNotLanguage('Wojewoda zwrócił uwagę na konieczność szybkiego przygotowania nowych przepisów dotyczących ochrony środowiska')).toBe(false);
    expect(isNotLanguage('const ctx = new Map(); for (const src of list) if (src.len > max) ptr = fmt(src, cfg, std, tmp, msg);')).toBe(false);
    expect(isNotLanguage('Vláda schválila nový zákon o ochraně přírody, který má zlepšit stav krajiny a zajistit čistou vodu pro obyvatele všech krajů')).toBe(
      false,
    );
    // a table of units and abbreviations: short words without vowels are no sign of a lying map
    expect(isNotLanguage('kHz MHz GHz dBm mW Hz rpm kPa Nm km mm cm kg mg ml std avg max min qty pcs ctn pkg xyz abc')).toBe(false);
    // too few words to tell, or another script with a few Latin abbreviations
    expect(isNotLanguage('Chqj Fqndmdudkc')).toBe(false);
    expect(isNotLanguage('한국어 보고서의 내용은 다음과 같습니다 PDF HTML XML 데이터 처리 방법 연구 결과 분석')).toBe(false);
  });

  it('finds a short run of a shifted map (a title line in a font of its own) by the shift test, and leaves short honest lines alone', () => {
    expect(isNotLanguage('sgd Rbhdmbd ne KZmftZfd Lncdkr')).toBe(true);
    expect(isNotLanguage('Z Rstcx ne sgd Bnktlmr ne Oqhmsdc Ozfdr')).toBe(true);
    for (const honest of [
      'The Science of Language Models',
      'Attention Is All You Need',
      'Deep Residual Learning',
      'Quarterly Report Summary Tables',
      'kHz MHz dBm std',
      'Chqj Fqndmdudkc',
    ])
      expect(isNotLanguage(honest), honest).toBe(false);
  });

  it('reads a lying font from the page picture, keeping its columns in order, and says so', { timeout: 60_000 }, async () => {
    const { pages } = await convertLocally(await twoColumnPage(true), { name: 'lying.pdf' });
    const [page] = pages;
    const text = blocksText(page!.blocks);
    expect(words(text), text).not.toContain('sgd');
    const expected = words([...LEFT, ...RIGHT].join(' '));
    const found = new Set(words(text));
    expect(expected.filter((word) => found.has(word)).length / expected.length).toBeGreaterThanOrEqual(0.9);
    // the left column is read before the right one, as the runs lie on the page
    expect(text.indexOf('proprietary')).toBeGreaterThan(-1);
    expect(text.indexOf('proprietary'), text).toBeLessThan(text.indexOf('believe that full'));
    expect(page!.ocr).toBe(true);
    expect(page!.reasons).toContain('ocr');
    expect(page!.warnings.join('\n')).toMatch(/text layer of 1 font\(s\) is not language .* recognised by OCR/);
  });

  it('reads the lying runs in the language OCR finds, not the one guessed from the lying letters', { timeout: 60_000 }, async () => {
    // the facts read the shifted letters of ACL's first pages as Portuguese: OCR starts in it, finds English and reads again
    const doc = await openPdf(await twoColumnPage(true));
    try {
      const result = await convertLocalPage(doc, 1, { docLang: 'pt', tagged: false });
      expect(result.lang).toBe('en');
      expect(result.ocr).toBe(true);
      const found = new Set(words(blocksText(result.blocks)));
      const expected = words([...LEFT, ...RIGHT].join(' '));
      expect(expected.filter((word) => found.has(word)).length / expected.length).toBeGreaterThanOrEqual(0.9);
    } finally {
      await doc.loadingTask.destroy();
    }
  });

  /** The paper page (a title under a logo, a hyphenated column) converted once for the tests on it. */
  let paper: ReturnType<typeof convertLocally> | undefined;
  const paperPage = () => (paper ??= twoColumnPage(true, false, true).then((bytes) => convertLocally(bytes, { name: 'paper.pdf' })));
  /** OCR reads nothing under the logo (the colon touching it is OCR's to read). */
  const printed = /Folio:? Reading the Columns of Printed Pages/;

  it('decides the document title from the repaired text when the lying layer names none', { timeout: 60_000 }, async () => {
    const { meta, pages } = await paperPage();
    // the facts, read from the lying layer, fall back to the file name; the repaired page has the printed title
    expect(meta.titleFromName).toBe(true);
    const title = pages[0]!.title;
    expect(title).toMatch(new RegExp(`^${printed.source}$`));
    const dir = await mkdtemp(path.join(os.tmpdir(), 'folio-lying-title-'));
    try {
      const render = openDocumentRender(meta, { dir, baseName: 'paper' }, { withoutTaggedPdf: true });
      for (const result of pages) await render.add(result);
      const html = await readFile((await render.finish()).html, 'utf8');
      expect(html).toContain(`<title>${title}</title>`);
      // the h1 when the page's own heading is not it, else the line above that heading
      expect(html).toMatch(new RegExp(`(id|class)="doc-title">${title}<`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("keeps the layer's word a logo is drawn over, read back by the map's shift", { timeout: 60_000 }, async () => {
    const { pages } = await paperPage();
    expect(blocksText(pages[0]!.blocks)).toMatch(printed);
  });

  it("joins OCR'd lines at a line-end hyphen as the layer's lines are joined", { timeout: 60_000 }, async () => {
    const { pages } = await paperPage();
    expect(blocksText(pages[0]!.blocks)).toContain('years. Recently, due to');
  });

  it('draws a page once when the repair gives up and the page is read whole instead', { timeout: 30_000 }, async () => {
    // a lying layer over nothing drawn: the repair finds no words to put in, and whole-page OCR takes over
    const doc = await openPdf(await twoColumnPage(true, true));
    try {
      const page = await doc.getPage(1);
      const render = vi.spyOn(page, 'render');
      const result = await convertLocalPage(doc, 1, { docLang: 'en', tagged: false });
      expect(result.warnings.join('\n')).toMatch(/page 1 is blank/);
      expect(words(blocksText(result.blocks))).not.toContain('sgd');
      expect(render).toHaveBeenCalledTimes(1);
    } finally {
      await doc.loadingTask.destroy();
    }
  });

  it('trusts the same page with an honest map', { timeout: 30_000 }, async () => {
    const { pages } = await convertLocally(await twoColumnPage(false), { name: 'honest.pdf' });
    expect(pages[0]!.ocr).toBe(false);
    const text = blocksText(pages[0]!.blocks);
    expect(text).toContain('Language models have become');
    expect(text.indexOf('proprietary'), text).toBeLessThan(text.indexOf('believe that full'));
  });
});
