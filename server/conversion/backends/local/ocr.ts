import { createRequire } from 'node:module';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { narrowGutters } from './gutters.ts';
import type { TextItem } from './text-layer.ts';
import type { PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { Block } from '../../model.ts';
import { runsToInlines } from './inline.ts';
import { detectLanguage } from './language.ts';
import { cleanString } from './pdf.ts';

/**
 * Pages without a usable text layer (scans, text drawn as curves) are
 * rendered with @napi-rs/canvas and read by tesseract.js, offline: the
 * language data comes from @tesseract.js-data/* packages, never from a CDN.
 *
 * Which language a page is read in: the catalog's /Lang when the document
 * declares one; otherwise the language of the last page OCR'd in this
 * document, else the one detected from the text layer (English when there is
 * none), checked by the language detector on what was read and read again in
 * the detected language when that differs. One multi-language pass
 * ('eng+deu+fra+…') was measured and rejected: as fast on clean pages, but
 * 1.5–3.5 times slower on real scans, whose specks and pictures every
 * language is tried on.
 *
 * Orientation: a page read with low confidence goes to Tesseract's
 * orientation and script detection (OSD), which also names the script, so a
 * page in a script the first language cannot read is tried with that
 * script's data. That retry is kept only when it reads with more confidence.
 */

/** 200 dpi: tesseract's accuracy flattens out above ~200 dpi; time and memory grow with the square. */
export const OCR_DPI = 200;
/** Renders of huge pages are capped (pixels) so one poster cannot exhaust memory. */
const MAX_PIXELS = 4500 * 4500;
/**
 * Below this mean confidence (0–100) a page may be turned or in another
 * script: upright text reads at 70–95 even in the wrong Latin language and
 * with pictures on the page, turned text at 20–50.
 */
export const LOW_CONFIDENCE = 60;
/** The detected language's reading is kept unless its confidence is this much lower than the reading it replaces. */
const LANGUAGE_MARGIN = 10;

/**
 * Tesseract's data by the BCP 47 primary language subtag. Only languages
 * whose package is installed are used: Chinese, Japanese and Korean work as
 * soon as their package is added (see the README's Conversion engine section).
 */
const TESSERACT_CODES: Record<string, string> = {
  en: 'eng',
  de: 'deu',
  fr: 'fra',
  es: 'spa',
  it: 'ita',
  pt: 'por',
  nl: 'nld',
  ar: 'ara',
  zh: 'chi_sim',
  ja: 'jpn',
  ko: 'kor',
};
const primary = (lang: string) => lang.toLowerCase().split(/[-_]/)[0] ?? '';
/** The language a script is read in, by OSD's script names (Latin text is then told apart by the language detector). */
const SCRIPT_LANGS: Record<string, string> = { Latin: 'en', Arabic: 'ar', Han: 'zh', HanS: 'zh', Japanese: 'ja', Korean: 'ko', Hangul: 'ko' };
/** The script a language is written in: its own for these, Latin for the rest. */
const scriptOf = (lang: string) => (['ar', 'zh', 'ja', 'ko'].includes(primary(lang)) ? primary(lang) : 'latin');

type OcrBox = { x0: number; y0: number; x1: number; y1: number };
/** A line as tesseract.js gives it: the row's height over its baseline and descenders under it, in pixels. */
type OcrLine = {
  words: { text: string; confidence: number; bbox: OcrBox }[];
  bbox: OcrBox;
  rowAttributes?: { rowHeight: number; descenders: number };
};
type TesseractWorker = {
  recognize(
    image: Buffer,
    options?: object,
    output?: { text?: boolean; blocks?: boolean },
  ): Promise<{
    data: {
      text: string;
      confidence: number;
      blocks?: { paragraphs: { lines: OcrLine[] }[] }[] | null;
    };
  }>;
  detect(image: Buffer): Promise<{ data: { orientation_degrees: number | null; script: string | null } }>;
  setParameters(parameters: Record<string, string>): Promise<unknown>;
  terminate(): Promise<unknown>;
};

const require = createRequire(import.meta.url);
const installed = new Map<string, string | undefined>();

/** The folder holding `<code>.traineddata.gz`, or undefined when the language's package is not installed. */
function dataFolder(code: string, legacy = false): string | undefined {
  const key = `${code}:${legacy}`;
  if (!installed.has(key)) {
    let folder: string | undefined;
    try {
      // LSTM-only data is a quarter of the size; OSD exists only for the legacy engine
      folder = path.join(path.dirname(require.resolve(`@tesseract.js-data/${code}/package.json`)), legacy ? '4.0.0' : '4.0.0_best_int');
    } catch {
      folder = undefined;
    }
    installed.set(key, folder);
  }
  return installed.get(key);
}

/** The Tesseract code a language is read with: its own data when installed, else English. */
const codeFor = (lang: string) => {
  const code = TESSERACT_CODES[primary(lang)];
  return code && dataFolder(code) ? code : 'eng';
};

/**
 * One recognition worker per thread, for the language last read: pages of a
 * document share a language, and each worker holds ~120 MB once it has read
 * a page. Changing language costs a new worker (~0.3–0.5 s).
 */
let reader: { code: string; worker: Promise<TesseractWorker> } | undefined;
/** Created on the first page read with low confidence, and kept: a document scanned sideways has many. */
let osdWorker: Promise<TesseractWorker> | undefined;

async function createTesseract(code: string, legacy: boolean): Promise<TesseractWorker> {
  const { createWorker } = await import('tesseract.js');
  const options = { langPath: dataFolder(code, legacy), cacheMethod: 'none', gzip: true, ...(legacy ? { legacyCore: true, legacyLang: true } : {}) };
  const worker = (await createWorker(code, legacy ? 0 : 1, options)) as unknown as TesseractWorker;
  // tesseract.js reads a page as one block of text unless told (its API's default, not tesseract's own): the page's
  // columns then run line across line, and a line set apart from the block, a title's second line, is not read at all
  // (and its layout analysis, told nothing, reads a page scanned sideways as columns of vertical text, in an order of its
  // own: turned upright by orientation detection instead, as a single block's poor reading of it leads to)
  if (!legacy) await worker.setParameters({ tessedit_pageseg_mode: PAGE_LAYOUT_AUTOMATIC, textord_tabfind_vertical_text: '0' });
  return worker;
}

/** Tesseract's page segmentation mode 3: the page's blocks, columns and lines found by its layout analysis, without OSD. */
const PAGE_LAYOUT_AUTOMATIC = '3';

function recogniser(code: string): Promise<TesseractWorker> {
  if (reader?.code !== code) {
    void reader?.worker.then((old) => old.terminate()).catch(() => undefined);
    reader = { code, worker: createTesseract(code, false) };
  }
  return reader.worker;
}

export async function closeOcr(): Promise<void> {
  const pending = [reader?.worker, osdWorker];
  reader = undefined;
  osdWorker = undefined;
  await Promise.all(pending.map(async (worker) => (await worker)?.terminate().catch(() => undefined)));
}

/**
 * Below this mean confidence (0–100) what OCR read is not the page's text:
 * measured on drawn scribbles (33), a text scan under heavy speckle (23) and
 * the corpus scans (a book page with an illustration 69, a brochure 93, text
 * drawn as outlines 95). Handwriting read as print lands at 25–40.
 */
export const UNREADABLE_CONFIDENCE = 50;

/** Luminance below which a rendered pixel is ink (the page is drawn on white). */
const INK_LUMINANCE = 160;

/** The page drawn for OCR: its PNG, its width in pixels, and its share of ink, measured only when asked (a full copy of the pixels). */
async function renderPagePng(page: PDFPageProxy, dpi = OCR_DPI, turn = 0): Promise<{ png: Buffer; width: number; ink: () => number }> {
  const { createCanvas } = await import('@napi-rs/canvas');
  let scale = dpi / 72;
  const base = page.getViewport({ scale: 1 });
  if (base.width * base.height * scale * scale > MAX_PIXELS) scale = Math.sqrt(MAX_PIXELS / (base.width * base.height));
  // pdf.js already applies the page's /Rotate; `turn` is for content scanned sideways or upside down
  const viewport = page.getViewport({ scale, rotation: (page.rotate + turn) % 360 });
  const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, canvas.width, canvas.height);
  await page.render({ canvas: canvas as never, canvasContext: context as never, viewport }).promise;
  return {
    png: withResolution(canvas.toBuffer('image/png'), scale * 72),
    width: canvas.width,
    ink: () => inkShare(context.getImageData(0, 0, canvas.width, canvas.height).data),
  };
}

/** Share of a rendering's pixels that are ink, from every 4th pixel: enough for a share, a quarter of the work. */
function inkShare(rgba: Uint8ClampedArray): number {
  let ink = 0;
  let seen = 0;
  for (let offset = 0; offset + 2 < rgba.length; offset += 16) {
    seen++;
    if (rgba[offset]! * 0.299 + rgba[offset + 1]! * 0.587 + rgba[offset + 2]! * 0.114 < INK_LUMINANCE) ink++;
  }
  return seen > 0 ? ink / seen : 0;
}

/**
 * The PNG with its resolution (a pHYs chunk after IHDR): tesseract sizes its
 * expectations of text by it, and without one guesses 70 dpi and says so on
 * stderr for every page OSD looks at.
 */
function withResolution(png: Buffer, dpi: number): Buffer {
  const IHDR_END = 8 + 25;
  const chunk = Buffer.alloc(21);
  const perMetre = Math.round(dpi / 0.0254);
  chunk.writeUInt32BE(9, 0);
  chunk.write('pHYs', 4, 'latin1');
  chunk.writeUInt32BE(perMetre, 8);
  chunk.writeUInt32BE(perMetre, 12);
  chunk.writeUInt8(1, 16);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 17)), 17);
  return Buffer.concat([png.subarray(0, IHDR_END), chunk, png.subarray(IHDR_END)]);
}

type Reading = { text: string; confidence: number; lang: string; turn: number; image: Buffer };

/**
 * A reading of a document that declares no language, checked against the language its words are in: read again
 * with that language's data when it is another, and the document's later pages start in it. A reading too poor
 * (a picture, a script we have no data for) says nothing about the language and stands as it is.
 */
async function inItsLanguage<T extends { text: string; confidence: number }>(
  known: { lastRead?: string },
  reading: T,
  lang: string,
  readIn: (lang: string) => Promise<T>,
): Promise<{ reading: T; lang: string }> {
  if (reading.confidence < LOW_CONFIDENCE) return { reading, lang };
  const detected = detectLanguage(reading.text, lang);
  let kept = reading;
  if (codeFor(detected) !== codeFor(lang)) {
    const retry = await readIn(detected);
    // a language's own data reads its accents that others miss, at about the same mean confidence
    if (retry.confidence >= reading.confidence - LANGUAGE_MARGIN) kept = retry;
  }
  known.lastRead = detected;
  // the page is in the detected language even when there is no data to read it with
  return { reading: kept, lang: detected };
}

async function read(image: Buffer, lang: string, turn: number): Promise<Reading> {
  const { data } = await (await recogniser(codeFor(lang))).recognize(image);
  return { text: data.text, confidence: data.confidence, lang, turn, image };
}

/** Clockwise turn (degrees) that sets the page's text upright, and its script; undefined when OSD finds too little text. */
async function orientation(image: Buffer): Promise<{ turn: number; script?: string } | undefined> {
  if (!dataFolder('osd', true)) return undefined;
  osdWorker ??= createTesseract('osd', true);
  const { data } = await (await osdWorker).detect(image);
  if (data.orientation_degrees === null) return undefined;
  return { turn: data.orientation_degrees, ...(data.script ? { script: data.script } : {}) };
}

/** What each document declares and what its OCR'd pages were found to be in, per thread. */
const documentLanguages = new WeakMap<PDFDocumentProxy, { declared: Promise<string | undefined>; lastRead?: string }>();

function languageOf(doc: PDFDocumentProxy) {
  let entry = documentLanguages.get(doc);
  if (!entry) {
    const declared = doc
      .getMetadata()
      .then(({ info }) => cleanString((info as { Language?: unknown }).Language) || undefined)
      .catch(() => undefined);
    entry = { declared };
    documentLanguages.set(doc, entry);
  }
  return entry;
}

export type OcrResult = {
  blocks: Block[];
  confidence: number;
  words: number;
  /** BCP 47 language the page was read in */
  lang: string;
  /** clockwise degrees the scan was turned to read it */
  turned: number;
  /** share (0–1) of the page's picture that is ink: a blank scan has next to none */
  ink: number;
};

/**
 * An upright page drawn for OCR and read once in the language ocrPage would start with (ocrWords
 * reads it so): ocrPage takes it instead of drawing and reading the page again. No text when blank.
 */
export type PageReading = { image: Buffer; ink: number; reading?: { text: string; confidence: number; lang: string } };

/**
 * OCR of one page: paragraphs as tesseract separates them (blank lines), with line-end hyphens repaired.
 * `first`: the page as ocrWords already drew and read it.
 */
export async function ocrPage(doc: PDFDocumentProxy, page: PDFPageProxy, pageNumber: number, docLang: string, first?: PageReading): Promise<OcrResult> {
  const known = languageOf(doc);
  const declared = await known.declared;
  let rendered = first;
  if (!rendered) {
    const { png, ink } = await renderPagePng(page);
    rendered = { image: png, ink: ink() };
  }
  const { image, ink } = rendered;
  // a blank page: nothing for tesseract to read, and OSD would only complain of too few characters
  if (ink === 0) return { blocks: [], words: 0, confidence: 0, lang: declared ?? docLang, turned: 0, ink };
  let best = rendered.reading ? { ...rendered.reading, turn: 0, image } : await read(image, declared ?? known.lastRead ?? docLang, 0);
  if (best.confidence < LOW_CONFIDENCE) {
    const found = await orientation(image);
    const scriptLang = found?.script ? SCRIPT_LANGS[found.script] : undefined;
    const lang = !declared && scriptLang && scriptOf(scriptLang) !== scriptOf(best.lang) ? scriptLang : best.lang;
    if (found && (found.turn !== 0 || codeFor(lang) !== codeFor(best.lang))) {
      const retry = await read(found.turn ? (await renderPagePng(page, OCR_DPI, found.turn)).png : image, lang, found.turn);
      if (retry.confidence > best.confidence) best = retry;
    }
  }
  if (!declared) {
    const checked = await inItsLanguage(known, best, best.lang, (lang) => read(best.image, lang, best.turn));
    best = { ...checked.reading, lang: checked.lang };
  }
  return { ...toBlocks(best.text, pageNumber), confidence: best.confidence, lang: best.lang, turned: best.turn, ink };
}

function toBlocks(text: string, pageNumber: number): { blocks: Block[]; words: number } {
  const blocks: Block[] = [];
  let words = 0;
  for (const chunk of text.split(/\n\s*\n/)) {
    const lines = chunk
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
    if (lines.length === 0) continue;
    const content = runsToInlines(lines.map((line, index) => ({ text: index < lines.length - 1 ? `${line}\n` : line })));
    const joined = lines.join(' ');
    // tesseract reads specks and rules as stray symbols: keep only lines with real words
    if (!/[\p{L}\p{N}]{2,}/u.test(joined)) continue;
    words += (joined.match(/[\p{L}\p{N}]+/gu) ?? []).length;
    blocks.push({ kind: 'paragraph', page: pageNumber, content });
  }
  return { blocks, words };
}

/**
 * Words read with less confidence than this are specks and bits of pictures
 * (on a paper's first page: 0–38 for "oo", "R", "SR", "ON" beside its
 * figure, 40–96 for the names and words of its text); short ones up to the
 * second bound.
 */
const NOISE_CONFIDENCE = 30;
const SHORT_NOISE_CONFIDENCE = 50;

/**
 * A word OCR read, in page space (points, y up), as the text layer's items are; with its line (a number of the page's
 * lines), its own baseline and its line's size (ascender to descender).
 */
export type OcrWord = { text: string; confidence: number; x0: number; y0: number; x1: number; y1: number; baseline: number; size: number; line: number };

/**
 * OCR's words as the text layer a scan lacks, one item a run of words on a
 * line, so the page is laid out like any other: its columns, paragraphs and
 * headings from where the words are. A line's words are one run, as a text
 * layer draws a line, up to a gap wider than any word space (a justified
 * line's wide spaces are word spaces still: cut there, its sentences would
 * fall apart into pieces side by side). Tesseract's line heights wander by a
 * fifth from line to line of one type (a line without capitals or
 * descenders is read smaller): lines within that of the page's usual height
 * take it, so only text set clearly bigger reads as a heading.
 */
export function ocrTextItems(read: OcrWord[]): TextItem[] {
  // marks alone are specks and rules more often than text
  const words = read.filter((word) => /[\p{L}\p{N}]/u.test(word.text) || word.confidence >= 90);
  const sizes = words.map((word) => word.size).sort((a, b) => a - b);
  const usual = sizes[Math.floor(sizes.length / 2)] ?? 0;
  // the words of each size: a size read for fewer words is the same type as the most read one within an eighth of it
  // (a list set a size over the body reads 12.2, 12.6 and 13 pt from line to line, and would be three sizes)
  const wordsAt = new Map<number, number>();
  for (const size of sizes) wordsAt.set(size, (wordsAt.get(size) ?? 0) + 1);
  // each size read, as it is set: its type's size, or the usual one near it
  const setAt = new Map<number, number>();
  for (const size of wordsAt.keys()) {
    let [typical, most] = [size, 0];
    for (const [other, count] of wordsAt) if (other >= size / 1.12 && other <= size * 1.12 && count > most) [typical, most] = [other, count];
    setAt.set(size, typical >= usual * 0.75 && typical <= usual * 1.3 ? usual : typical);
  }
  const sizeOf = (size: number) => setAt.get(size) ?? size;
  // a gutter runs down between the words of lines tesseract reads across two columns (justified columns 6 pt apart,
  // a journal's 17 pt): the runs stop at it, as a text layer's would
  const gutters = narrowGutters(wordLines(words, sizeOf), true);
  const apart = (left: OcrWord, right: OcrWord) =>
    gutters.some((gutter) => gutter.x >= left.x1 && gutter.x <= right.x0 && left.baseline <= gutter.top && left.baseline >= gutter.bottom);
  const runs: OcrWord[][] = [];
  for (const word of words) {
    const last = runs.at(-1)?.at(-1);
    if (last && word.line === last.line && word.x0 - last.x1 <= sizeOf(word.size) * 1.5 && !apart(last, word)) runs.at(-1)!.push(word);
    else runs.push([word]);
  }
  // what a picture beside the text reads as: runs of a word or two read unsurely, apart from the text (on the corpus
  // book page "{i", "hi i", "(Ae," at 35–75 beside its lines' 70–96); a run of the text has a word read surely, or
  // reads fairly surely throughout ("“Who dah?”" 68 and 78)
  const sure = (run: OcrWord[]) => run.some((word) => word.confidence >= 80) || run.reduce((sum, word) => sum + word.confidence, 0) >= run.length * 70;
  // and specks read just before a line's first word or after its last go with the line unless peeled off its ends
  // ("ills (7," at 30 and 57 before "we could see him")
  const peeled = (run: OcrWord[]) => {
    const first = run.findIndex((word) => word.confidence >= UNSURE_EDGE);
    const last = run.findLastIndex((word) => word.confidence >= UNSURE_EDGE);
    return first < 0 ? [] : run.slice(first, last + 1);
  };
  return runs
    .filter(sure)
    .map(peeled)
    .filter((run) => run.length > 0)
    .map((run) =>
      ocrItem(
        run.map((word) => word.text).join(' '),
        run[0]!.x0,
        run.at(-1)!.x1,
        run.reduce((sum, word) => sum + word.baseline, 0) / run.length,
        sizeOf(run[0]!.size),
      ),
    );
}

/** Text OCR read as a text layer's item, in a font of its own: none is bold, mono or mathematical. */
function ocrItem(text: string, x0: number, x1: number, baseline: number, size: number): TextItem {
  return { text, x: x0, y: baseline, width: x1 - x0, size, font: 'ocr', eol: false, artifact: false };
}

/** OCR's words as the lines gutters.ts reads, one a line, top to bottom, each word an item. */
function wordLines(words: OcrWord[], sizeOf: (size: number) => number): { y: number; size: number; items: TextItem[] }[] {
  const lines = new Map<number, { y: number; size: number; items: TextItem[] }>();
  for (const word of words) {
    const size = sizeOf(word.size);
    const item = ocrItem(word.text, word.x0, word.x1, word.baseline, size);
    const line = lines.get(word.line);
    if (line) line.items.push(item);
    else lines.set(word.line, { y: word.baseline, size, items: [item] });
  }
  return [...lines.values()].sort((a, b) => b.y - a.y);
}

/** Specks, rules and pictures read as letters: uncertain and short. */
const isNoise = ({ text, confidence }: OcrLine['words'][number]) => {
  const length = text.trim().length;
  return length === 0 || confidence < NOISE_CONFIDENCE || (confidence < SHORT_NOISE_CONFIDENCE && length <= 2);
};

/**
 * The size of a paragraph's lines, the middle one of those with a word (the smaller of two): tesseract's row height runs
 * from the baseline to the ascenders, and the descenders go under. A logo read as a line of noise in an address's
 * paragraph does not make the address big.
 */
function paragraphSize(lines: OcrLine[]): number {
  const read = lines.filter((line) => line.words.some((word) => !isNoise(word)));
  const sizes = (read.length > 0 ? read : lines)
    .map(({ rowAttributes, bbox }) => (rowAttributes?.rowHeight ? rowAttributes.rowHeight + Math.abs(rowAttributes.descenders ?? 0) : bbox.y1 - bbox.y0))
    .sort((a, b) => a - b);
  return sizes[Math.floor((sizes.length - 1) / 2)] ?? 0;
}

/** Letters and marks that reach under the baseline: a word's box with one ends under its line. */
const DESCENDERS = /[gjpqy,;()[\]{}]/;

/** Below this confidence a word at either end of a run of OCR's words is a speck beside the line, not its word. */
const UNSURE_EDGE = 60;

/**
 * The words on an upright page with their boxes, to put in place of a text
 * layer that lies: its runs keep their places, so columns and reading order
 * still come from the layout. Undefined for a turned page (/Rotate), whose
 * boxes would need turning back.
 */
export async function ocrWords(
  doc: PDFDocumentProxy,
  page: PDFPageProxy,
  docLang: string,
): Promise<{ words: OcrWord[]; confidence: number; lang: string; page: PageReading } | undefined> {
  if (page.rotate % 360 !== 0) return undefined;
  const known = languageOf(doc);
  const declared = await known.declared;
  // the language the facts found may be the lying layer's own (shifted English letters read as Portuguese)
  let lang = declared ?? known.lastRead ?? docLang;
  const { png, width, ink } = await renderPagePng(page);
  const share = ink();
  if (share === 0) return { words: [], confidence: 0, lang, page: { image: png, ink: share } };
  const recognise = async (language: string) => (await (await recogniser(codeFor(language))).recognize(png, {}, { text: true, blocks: true })).data;
  let data = await recognise(lang);
  if (!declared) ({ reading: data, lang } = await inItsLanguage(known, data, lang, recognise));
  const [vx0 = 0, , vx1 = 612, vy1 = 792] = page.view;
  const scale = width / (vx1 - vx0);
  const words: OcrWord[] = [];
  let lineNumber = 0;
  for (const block of data.blocks ?? []) {
    for (const paragraph of block.paragraphs) {
      // a paragraph's lines are one size: tesseract's row heights wander by a fifth from line to line of one type
      const height = paragraphSize(paragraph.lines);
      for (const line of paragraph.lines) {
        lineNumber++;
        for (const word of line.words) {
          const text = word.text.trim();
          if (isNoise(word)) continue;
          // each word's own baseline, not its line's: tesseract reads two columns' lines a few points apart as one
          // line, and its baseline is one column's
          const under = word.bbox.y1 - (DESCENDERS.test(text) ? height * 0.2 : 0);
          words.push({
            text,
            confidence: word.confidence,
            x0: vx0 + word.bbox.x0 / scale,
            x1: vx0 + word.bbox.x1 / scale,
            y0: vy1 - word.bbox.y1 / scale,
            y1: vy1 - word.bbox.y0 / scale,
            baseline: vy1 - under / scale,
            size: height / scale,
            line: lineNumber,
          });
        }
      }
    }
  }
  return { words, confidence: data.confidence, lang, page: { image: png, ink: share, reading: { text: data.text, confidence: data.confidence, lang } } };
}
