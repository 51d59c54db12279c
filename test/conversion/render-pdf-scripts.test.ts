import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openSync, type Font } from 'fontkit';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertLocalPage } from '../../server/conversion/backends/local/convert-page.ts';
import { inspectDocument } from '../../server/conversion/backends/local/document-meta.ts';
import { openPdf } from '../../server/conversion/backends/local/pdf.ts';
import type { Block, ConvertedDocument, PageResult } from '../../server/conversion/model.ts';
import { FONTS, fontRuns } from '../../server/conversion/render/pdf-fonts.ts';
import { renderTaggedPdf } from '../../server/conversion/render/pdf.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { hasPoppler, pdftotext, pdftotextPages, withoutRunningArtifacts, wordRecall, wordsOf } from '../helpers/poppler.ts';
import { fullDocument, page } from './render-fixture.ts';

/** Korean, Japanese, Chinese, Arabic and Hebrew in the tagged PDF: faces DejaVu lacks, bidi order, alignment, /ActualText. */

const poppler = hasPoppler();
const qpdf = spawnSync('qpdf', ['--version']).status === 0;
if (!poppler || !qpdf) console.warn('render-pdf-scripts: poppler-utils or qpdf is missing; the checks that read the PDF back are skipped');
const tools = poppler && qpdf;

// A4 (595.28 pt wide) with 56 pt margins: the text column's right edge.
const RIGHT_EDGE = 595.28 - 56;
const LEFT_EDGE = 56;

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'folio-render-scripts-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const t = (text: string) => ({ kind: 'text' as const, text });

function doc(lang: string, title: string, blocks: Block[]): ConvertedDocument {
  return { meta: { title, lang, pageCount: 1, tagged: false, sourceName: 'x.pdf' }, pages: [page(1, blocks)] };
}

/** Renders to a file; a warning means the full renderer failed and fell back to plain paragraphs, which these tests do not accept. */
async function render(name: string, document: ConvertedDocument): Promise<string> {
  const warnings: unknown[] = [];
  const pdf = await renderTaggedPdf(document, { warn: (...args: unknown[]) => warnings.push(args) } as never);
  expect(warnings).toEqual([]);
  const file = path.join(dir, name);
  await writeFile(file, pdf);
  return file;
}

type FontRow = { name: string; emb: boolean; sub: boolean; uni: boolean };

function pdffonts(file: string): FontRow[] {
  const lines = execFileSync('pdffonts', [file], { encoding: 'utf8' }).trim().split('\n').slice(2);
  return lines.map((line) => {
    const cells = line.trim().split(/\s+/);
    const [emb, sub, uni] = cells.slice(-5, -2).map((cell) => cell === 'yes');
    return { name: cells[0]!.replace(/^[A-Z]{6}\+/, ''), emb: emb!, sub: sub!, uni: uni! };
  });
}

type Word = { text: string; xMin: number; xMax: number; yMin: number };

/** pdftotext -bbox words. poppler gives a right-to-left word's letters in drawing (visual) order. */
function bboxWords(file: string): Word[] {
  const xhtml = execFileSync('pdftotext', ['-bbox', '-enc', 'UTF-8', file, '-'], { encoding: 'utf8' });
  return [...xhtml.matchAll(/<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="[\d.]+">([^<]*)<\/word>/g)].map((m) => ({
    text: m[4]!,
    xMin: Number(m[1]),
    yMin: Number(m[2]),
    xMax: Number(m[3]),
  }));
}

const reversed = (word: string) => [...word].reverse().join('');

/**
 * pdftotext output, whitespace collapsed. It wraps right-to-left runs in embedding marks and
 * may put the space between two runs inside the marks instead of beside them, so the marks
 * count as spaces.
 */
function plainText(file: string, text = pdftotext(file)): string {
  return text.replace(/[\u202a-\u202e]/g, ' ').replace(/\s+/g, ' ');
}

/** pdf.js's text items in content order, as a reader built on it (Firefox) gets them. */
async function pdfjsText(file: string): Promise<string> {
  const pdf = await getDocument({ data: new Uint8Array(await readFile(file)), verbosity: 0 }).promise;
  try {
    const items: string[] = [];
    for (let n = 1; n <= pdf.numPages; n++) {
      const content = await (await pdf.getPage(n)).getTextContent();
      for (const item of content.items) if ('str' in item) items.push(item.str);
    }
    return items.join(' ').replace(/\s+/g, ' ');
  } finally {
    await pdf.loadingTask.destroy();
  }
}

/** Structure elements carrying /ActualText, read with qpdf (which decodes PDF text strings). */
function actualTexts(file: string): { type: string; text: string; parent: string }[] {
  const json = JSON.parse(execFileSync('qpdf', ['--json=2', '--json-key=qpdf', file], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }));
  const objects = json.qpdf[1] as Record<string, { value?: Record<string, unknown> }>;
  const found: { type: string; text: string; parent: string }[] = [];
  for (const object of Object.values(objects)) {
    const value = object.value;
    if (!value || typeof value['/ActualText'] !== 'string') continue;
    const parent = objects[`obj:${value['/P'] as string}`]?.value?.['/S'];
    found.push({ type: String(value['/S']), text: (value['/ActualText'] as string).replace(/^u:/, ''), parent: String(parent) });
  }
  return found;
}

async function convertCorpus(file: string): Promise<ConvertedDocument> {
  const bytes = new Uint8Array(await readFile(path.join(CORPUS_DIR, file)));
  const meta = await inspectDocument(bytes, file);
  const pdf = await openPdf(bytes);
  try {
    const pages: PageResult[] = [];
    for (let n = 1; n <= meta.pageCount; n++) pages.push(await convertLocalPage(pdf, n, { docLang: meta.lang, tagged: meta.tagged, ocr: false }));
    return { meta, pages };
  } finally {
    await pdf.loadingTask.destroy();
  }
}

/** Every text string of a model, in order. */
function modelText(document: ConvertedDocument): string {
  const out: string[] = [];
  const walk = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(walk);
    else if (value && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      if (typeof record.text === 'string' && (record.kind === 'text' || record.kind === 'code')) out.push(record.text);
      for (const [key, child] of Object.entries(record)) if (key !== 'image') walk(child);
    }
  };
  walk(document.pages.map((p) => p.blocks));
  return out.join(' ');
}

describe('choosing a face per script run', () => {
  const base = (file: string) => path.basename(file);

  it('draws a Korean word in Noto Sans KR and leaves Latin words and the spaces beside them to DejaVu', () => {
    const runs = fontRuns('Hello 세계 world', 'regular', 'ko').map((r) => [r.text, base(r.font)]);
    expect(runs).toEqual([
      ['Hello ', 'DejaVuSans.ttf'],
      ['세계 ', 'NotoSansKR_400Regular.ttf'],
      ['world', 'DejaVuSans.ttf'],
    ]);
  });

  it('takes the bold CJK face for bold text, and orders the CJK faces by language for shared Han characters', () => {
    expect(fontRuns('漢字', 'bold', 'ja').map((r) => base(r.font))).toEqual(['NotoSansJP_700Bold.ttf']);
    expect(fontRuns('漢字', 'regular', 'ko').map((r) => base(r.font))).toEqual(['NotoSansKR_400Regular.ttf']);
    expect(fontRuns('漢字', 'italic', 'zh-CN').map((r) => base(r.font))).toEqual(['NotoSansSC_400Regular.ttf']);
  });

  it('keeps a word of one script in one face, so Arabic letters still join: an Urdu word DejaVu half covers goes whole to Noto Sans Arabic', () => {
    const runs = fontRuns('پاکستان ہے', 'regular', 'ur');
    expect(runs.map((r) => [r.text.trim(), base(r.font)])).toEqual([
      ['پاکستان', 'DejaVuSans.ttf'],
      ['ہے', 'NotoSansArabic_400Regular.ttf'],
    ]);
  });

  it('falls back from a face without the script (DejaVu Oblique has no Arabic) to the upright one', () => {
    expect(fontRuns('مرحبا', 'italic').map((r) => r.font)).toEqual([FONTS.regular]);
  });
});

describe.skipIf(!tools)('tagged PDF with Korean, Japanese and Chinese', () => {
  const sentence = '보험회사에서 그동안 판매했거나 향후 판매하게 될 보험상품의 입원 및 사망의 재해 인정 여부';

  it('embeds Noto Sans KR (subset, with a ToUnicode map) and pdftotext reads the Korean words back', async () => {
    const file = await render(
      'korean.pdf',
      doc('ko', '코로나-19 관련 보험약관', [
        { kind: 'heading', page: 1, level: 1, content: [t('재해보험금 지급문제')] },
        { kind: 'paragraph', page: 1, content: [t(`${sentence} (WHO) `.repeat(4))] },
        {
          kind: 'table',
          page: 1,
          rows: [
            [
              { header: true, content: [t('항목')] },
              { header: true, content: [t('내용')] },
            ],
            [
              { header: false, content: [t('보험')] },
              { header: false, content: [t('재해보험금 지급')] },
            ],
          ],
        },
      ]),
    );
    const fonts = pdffonts(file);
    for (const face of ['NotoSansKR-Regular', 'NotoSansKR-Bold'])
      expect(fonts.find((f) => f.name === face)).toEqual({ name: face, emb: true, sub: true, uni: true });
    const text = plainText(file);
    expect(text).toContain('재해보험금 지급문제');
    expect(text.split(sentence).length - 1).toBe(4);
    for (const word of ['항목', '내용', '보험', '재해보험금 지급']) expect(text).toContain(word);
    // The subset stays small: a few dozen glyphs, not the 6 MB face.
    expect((await readFile(file)).length).toBeLessThan(120_000);
  });

  it('converts korean-report-4pages.pdf end to end: the Korean words of the model all come back from the tagged PDF', async () => {
    const model = await convertCorpus('korean-report-4pages.pdf');
    expect(model.meta.lang).toBe('ko');
    const file = await render('korean-report.pdf', model);
    expect(pdffonts(file).find((f) => f.name === 'NotoSansKR-Regular')).toMatchObject({ emb: true, uni: true });
    const hangul = (text: string) => wordsOf(text).filter((word) => /\p{Script=Hangul}/u.test(word));
    const reference = hangul(modelText(model));
    expect(reference.length).toBeGreaterThan(500);
    expect(wordRecall(reference, hangul(pdftotext(file)))).toBeGreaterThanOrEqual(0.99);
  });

  it('draws Japanese with Noto Sans JP in a Japanese document and Chinese with Noto Sans SC in a Chinese one', async () => {
    const ja = await render('ja.pdf', doc('ja', '日本語', [{ kind: 'paragraph', page: 1, content: [t('東京と大阪は「日本」の都市です。')] }]));
    expect(pdffonts(ja).map((f) => f.name)).toContain('NotoSansJP-Regular');
    expect(plainText(ja)).toContain('東京と大阪は「日本」の都市です。');
    const zh = await render('zh.pdf', doc('zh-CN', '中文', [{ kind: 'paragraph', page: 1, content: [t('这是简体中文的句子。')] }]));
    expect(pdffonts(zh).map((f) => f.name)).toContain('NotoSansSC-Regular');
    expect(plainText(zh)).toContain('这是简体中文的句子。');
  });

  it('draws Thai and Devanagari with their Noto faces, their text in /ActualText since their glyphs are reordered', async () => {
    const thai = 'ภาษาไทยเป็นภาษาที่มีวรรณยุกต์';
    const hindi = 'हिन्दी भारत की भाषा है।';
    const file = await render(
      'thai-hindi.pdf',
      doc('th', 'ไทย', [
        { kind: 'paragraph', page: 1, content: [t(thai)] },
        { kind: 'paragraph', page: 1, content: [t(hindi)] },
      ]),
    );
    const names = pdffonts(file).map((f) => f.name);
    expect(names).toEqual(expect.arrayContaining(['NotoSansThai-Regular', 'NotoSansDevanagari-Regular']));
    expect(plainText(file)).toContain('ภาษาไทยเป็นภาษา');
    expect(actualTexts(file)).toEqual(
      expect.arrayContaining([
        { type: '/Span', text: thai, parent: '/P' },
        { type: '/Span', text: hindi, parent: '/P' },
      ]),
    );
  });

  it('embeds nothing but DejaVu for a document without such text', async () => {
    const latin = fullDocument();
    for (const p of latin.pages) p.blocks = p.blocks.filter((block) => !/[^\u0000-\u024f•◦–—…]/u.test(JSON.stringify(block).replace(/"base64":"[^"]*"/g, '')));
    const file = await render('latin.pdf', latin);
    const names = pdffonts(file).map((f) => f.name);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) expect(name).toMatch(/^DejaVuSans/);
  });
});

describe.skipIf(!tools)('tagged PDF with right-to-left text', () => {
  // No lam-alef ligature and no brackets: see pdf-layout.ts on what extractors make of those.
  const words = ['مرحبا', 'بالعالم', 'هذا', 'نص', 'تجريبي', 'للعرض', 'فقط'];
  const sentence = words.join(' ');

  it('draws an Arabic paragraph shaped and right-aligned, in logical order for pdftotext and in the ActualText of its Span', async () => {
    const file = await render('arabic.pdf', doc('ar', 'نص تجريبي', [{ kind: 'paragraph', page: 1, content: [t(sentence)] }]));
    expect(plainText(file)).toContain(sentence);
    expect(await pdfjsText(file)).toContain(sentence);

    const found = bboxWords(file);
    const first = found.find((w) => reversed(w.text) === words[0])!;
    const line = found.filter((w) => Math.abs(w.yMin - first.yMin) < 1);
    expect(line.map((w) => reversed(w.text)).sort()).toEqual([...words].sort());
    // Visual order: the first word is rightmost, each next one further left, and the line ends at the right margin.
    const rightToLeft = [...line].sort((a, b) => b.xMax - a.xMax).map((w) => reversed(w.text));
    expect(rightToLeft).toEqual(words);
    expect(Math.max(...line.map((w) => w.xMax))).toBeCloseTo(RIGHT_EDGE, 0);
    expect(Math.min(...line.map((w) => w.xMin))).toBeGreaterThan(LEFT_EDGE + 100);

    // Shaped: the drawn width of a word is its joined forms' width, not its isolated letters'.
    const font = openSync(FONTS.regular) as Font;
    const points = (units: number) => (units * 10.5) / font.unitsPerEm;
    const word = 'بالعالم';
    const joined = points(font.layout(word).advanceWidth);
    const isolated = points([...word].reduce((sum, ch) => sum + font.glyphForCodePoint(ch.codePointAt(0)!).advanceWidth, 0));
    expect(Math.abs(joined - isolated)).toBeGreaterThan(1);
    const drawn = line.find((w) => reversed(w.text) === word)!;
    expect(drawn.xMax - drawn.xMin).toBeCloseTo(joined, 0);

    expect(actualTexts(file)).toContainEqual({ type: '/Span', text: sentence, parent: '/P' });
  });

  it('keeps an Arabic phrase inside an English paragraph right to left, the paragraph itself left to right', async () => {
    const file = await render(
      'mixed.pdf',
      doc('en', 'Mixed', [
        { kind: 'paragraph', page: 1, content: [t('Arabic '), { kind: 'lang', lang: 'ar', children: [t('مرحبا بالعالم')] }, t(' and more.')] },
      ]),
    );
    expect(plainText(file)).toContain('Arabic مرحبا بالعالم and more.');
    expect(await pdfjsText(file)).toContain('Arabic مرحبا بالعالم and more.');
    const found = bboxWords(file);
    const at = (word: string) => found.find((w) => w.text === word || reversed(w.text) === word)!;
    expect(at('Arabic').xMin).toBeCloseTo(LEFT_EDGE, 0);
    expect(at('مرحبا').xMin).toBeGreaterThan(at('بالعالم').xMax);
    expect(at('and').xMin).toBeGreaterThan(at('مرحبا').xMax);
    expect(actualTexts(file)).toContainEqual({ type: '/Span', text: 'مرحبا بالعالم', parent: '/P' });
  });

  it('lays out Hebrew with numbers and Latin right to left, and runs the columns of an Arabic table from the right', async () => {
    const file = await render(
      'hebrew-table.pdf',
      doc('he', 'טבלה', [
        { kind: 'paragraph', page: 1, content: [t('שלום עולם עם 42 ו English בסוף')] },
        {
          kind: 'table',
          page: 1,
          rows: [
            [
              { header: true, content: [t('שם')] },
              { header: true, content: [t('גיל')] },
            ],
            [
              { header: false, content: [t('דנה')] },
              { header: false, content: [t('30')] },
            ],
          ],
        },
      ]),
    );
    const found = bboxWords(file);
    const at = (word: string) => found.find((w) => w.text === word || reversed(w.text) === word)!;
    expect(at('שלום').xMax).toBeCloseTo(RIGHT_EDGE, 0);
    expect(at('שלום').xMin).toBeGreaterThan(at('עולם').xMax);
    expect(at('42').xMax).toBeLessThan(at('עם').xMin);
    expect(at('English').xMax).toBeLessThan(at('42').xMin);
    expect(at('בסוף').xMax).toBeLessThan(at('English').xMin);
    // First column on the right: its header right of the second's.
    expect(at('שם').xMin).toBeGreaterThan(at('גיל').xMax);
    expect(actualTexts(file)).toEqual(
      expect.arrayContaining([
        { type: '/TH', text: 'שם', parent: '/TR' },
        { type: '/TD', text: 'דנה', parent: '/TR' },
      ]),
    );
  });

  it('carries long Arabic paragraphs across pages, breaking inside them, with every word in order', async () => {
    const paragraphs = Array.from({ length: 3 }, (_, p) => Array.from({ length: 40 }, (_, i) => `${sentence} ${p * 100 + i}`).join(' '));
    const file = await render(
      'arabic-long.pdf',
      doc(
        'ar',
        'طويل',
        paragraphs.map((text) => ({ kind: 'paragraph' as const, page: 1, content: [t(text)] })),
      ),
    );
    const info = execFileSync('pdfinfo', [file], { encoding: 'utf8' });
    expect(Number(/^Pages:\s+(\d+)$/m.exec(info)?.[1])).toBeGreaterThanOrEqual(2);
    expect(info).toMatch(/^Tagged:\s+yes$/m);
    // Across the page break, less the running header and the page number between the pages.
    expect(plainText(file, withoutRunningArtifacts(pdftotextPages(file)).join('\n'))).toContain(paragraphs.join(' '));
    const tree = execFileSync('pdfinfo', ['-struct-text', file], { encoding: 'utf8' });
    expect(tree.split('\n').filter((l) => /^ {2}P\b/.test(l))).toHaveLength(3);
    expect(
      actualTexts(file)
        .filter((a) => a.type === '/Span' && a.parent === '/P')
        .map((a) => a.text),
    ).toEqual(paragraphs);
  });

  it('converts arabic-rtl-habibi.pdf end to end: the Arabic words of the model come back, on a right-aligned line', async () => {
    const model = await convertCorpus('arabic-rtl-habibi.pdf');
    expect(model.meta.lang).toBe('ar');
    const file = await render('habibi.pdf', model);
    const arabic = (text: string) => (text.match(/[\p{Script=Arabic}][\p{Script=Arabic}\p{M}]*/gu) ?? []).sort();
    const expected = arabic(modelText(model));
    expect(expected.length).toBeGreaterThan(0);
    expect(arabic(plainText(file))).toEqual(expected);
    const found = bboxWords(file);
    const first = found.find((w) => /\p{Script=Arabic}/u.test(w.text))!;
    const line = found.filter((w) => Math.abs(w.yMin - first.yMin) < 1);
    expect(Math.max(...line.map((w) => w.xMax))).toBeCloseTo(RIGHT_EDGE, 0);
    expect(actualTexts(file).some((a) => a.type === '/Span' && expected.every((word) => a.text.includes(word)))).toBe(true);
  });
});
