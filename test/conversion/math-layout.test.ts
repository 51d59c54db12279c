import { readFileSync } from 'node:fs';
import path from 'node:path';
import katex from 'katex';
import { JSDOM } from 'jsdom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { fontStyle, layoutToTex, type MathGlyph } from '../../server/conversion/backends/local/math-layout.ts';
import { openPdf } from '../../server/conversion/backends/local/pdf.ts';
import { readTextLayer } from '../../server/conversion/backends/local/text-layer.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';

/**
 * Formulas read from glyph positions and fonts, checked the way a reader
 * would: our TeX is rendered by KaTeX, and the symbols it draws must be the
 * page's symbols (every one, none added, bold where the page is bold), with
 * the page's baseline symbols in the page's left-to-right order.
 */

let doc: PDFDocumentProxy;
let page: PDFPageProxy;
let glyphs: (MathGlyph & { font: string })[];

beforeAll(async () => {
  doc = await openPdf(new Uint8Array(readFileSync(path.join(CORPUS_DIR, 'math-equations-katex.pdf'))));
  page = await doc.getPage(1);
  // the fonts' names are known once the page's operators have been read
  await page.getOperatorList();
  glyphs = (await readTextLayer(page)).map((item) => {
    const font = page.commonObjs.has(item.font) ? (page.commonObjs.get(item.font) as { name?: string }).name : undefined;
    return { text: item.text, x: item.x, y: item.y, width: item.width, size: item.size, ...fontStyle(font), font: font ?? '' };
  });
});
afterAll(async () => {
  await doc.loadingTask.destroy();
});

const region = (x0: number, x1: number, y0: number, y1: number) => glyphs.filter((glyph) => glyph.x >= x0 && glyph.x <= x1 && glyph.y >= y0 && glyph.y <= y1);

const normalise = (char: string) => ({ '−': '-', '·': '⋅', ϵ: 'ε' })[char] ?? char;

/** Each character drawn on the page in a region, with whether it is bold, left to right. */
function pageSymbols(list: MathGlyph[]): { char: string; bold: boolean; x: number; y: number; size: number }[] {
  return list.flatMap((glyph) =>
    [...glyph.text]
      .map((char, index) => ({
        char: normalise(char),
        bold: glyph.bold,
        x: glyph.x + (glyph.width / [...glyph.text].length) * index,
        y: glyph.y,
        size: glyph.size,
      }))
      .filter((entry) => !/\s|\u200b/.test(entry.char)),
  );
}

/** The symbols KaTeX draws for a TeX string, in its order, with whether it sets them bold. */
function katexSymbols(tex: string): { char: string; bold: boolean }[] {
  const mathml = katex.renderToString(tex, { output: 'mathml', throwOnError: true, displayMode: true });
  const dom = new JSDOM(mathml);
  try {
    const leaves = [...dom.window.document.querySelectorAll('mi, mn, mo, mtext')].filter((element) => element.closest('annotation') === null);
    return leaves.flatMap((leaf) =>
      [...(leaf.textContent ?? '')].map((char) => ({ char: normalise(char), bold: /bold/.test(leaf.getAttribute('mathvariant') ?? '') })),
    );
  } finally {
    dom.window.close();
  }
}

const FORMULAS: { name: string; box: [number, number, number, number]; tex?: string }[] = [
  { name: "Euler's identity", box: [190, 260, 405, 425], tex: 'e^{i\\pi}+1=0' },
  { name: 'Pythagoras', box: [515, 600, 405, 425], tex: 'a^{2}+b^{2}=c^{2}' },
  { name: 'fundamental theorem of calculus', box: [150, 300, 225, 262], tex: '\\int_{a}^{b}f(x)dx=F(b)-F(a)' },
  { name: "Gauss's law", box: [515, 600, 232, 262], tex: '\\nabla\\cdot\\mathbf{E}=\\frac{\\rho}{\\varepsilon_{0}}' },
  { name: 'no magnetic monopoles', box: [520, 600, 205, 218] },
  { name: "Faraday's law", box: [510, 600, 160, 190], tex: '\\nabla\\times\\mathbf{E}=-\\frac{\\partial\\mathbf{B}}{\\partial t}' },
  { name: "Ampère's law", box: [485, 625, 120, 150] },
];

describe('formulas from glyph positions and fonts, rendered by KaTeX', () => {
  it.each(FORMULAS)('$name: KaTeX draws the page symbols, bold where bold, baseline in order', ({ box, tex: expected }) => {
    const found = region(...box);
    expect(found.length).toBeGreaterThan(0);
    const tex = layoutToTex(found);
    expect(tex).toBeDefined();
    if (expected) expect(tex).toBe(expected);
    const drawn = katexSymbols(tex!);
    const onPage = pageSymbols(found);
    const key = (entry: { char: string; bold: boolean }) => `${entry.char}${entry.bold && /\p{L}/u.test(entry.char) ? '(bold)' : ''}`;
    expect(drawn.map(key).sort()).toEqual(onPage.map(key).sort());
    // the full-size symbols on the main line read in the page's order
    const size = Math.max(...onPage.map((entry) => entry.size));
    const line = onPage.filter((entry) => entry.size >= size * 0.9);
    const baseline = [...line].sort(
      (a, b) => line.filter((other) => Math.abs(other.y - b.y) < 1).length - line.filter((other) => Math.abs(other.y - a.y) < 1).length,
    )[0]!.y;
    const ordered = line
      .filter((entry) => Math.abs(entry.y - baseline) < 1)
      .sort((a, b) => a.x - b.x)
      .map((entry) => entry.char);
    let at = 0;
    for (const char of drawn.map((entry) => entry.char)) if (char === ordered[at]) at++;
    expect(at, `${ordered.join('')} in ${drawn.map((entry) => entry.char).join('')}`).toBe(ordered.length);
  });

  it('names upright letter runs as operators and leaves a glyph it cannot read untranslated', () => {
    const glyph = (text: string, x: number, italic = false) => ({ text, x, y: 100, width: 6 * text.length, size: 12, bold: false, italic });
    expect(layoutToTex([glyph('Ann', 0), glyph('(', 20), glyph('M', 26, true), glyph(')', 34), glyph('=', 44), glyph('0', 56)])).toBe(
      '\\operatorname{Ann}(M)=0',
    );
    expect(layoutToTex([glyph('sin', 0), glyph('x', 22, true)])).toBe('\\sin x');
    expect(layoutToTex([glyph('x', 0, true), glyph('☃', 10)])).toBeUndefined();
    expect(fontStyle('ABCDEF+CMMI10')).toEqual({ bold: false, italic: true });
    expect(fontStyle('XYZABC+Times-Bold')).toEqual({ bold: true, italic: false });
  });
});
