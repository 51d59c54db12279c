import { readFileSync } from 'node:fs';
import path from 'node:path';
import katex from 'katex';
import { JSDOM } from 'jsdom';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { readGlyphPositions } from '../../server/conversion/backends/local/glyph-positions.ts';
import { fontStyle } from '../../server/conversion/backends/local/font-styles.ts';
import { type GlyphReader, layoutToTex, type MathGlyph } from '../../server/conversion/backends/local/math-layout.ts';
import { markInlineMath } from '../../server/conversion/backends/local/inline-math.ts';
import { buildSegments } from '../../server/conversion/backends/local/segments.ts';
import { openPdf } from '../../server/conversion/backends/local/pdf.ts';
import { readTextLayer, type TextItem } from '../../server/conversion/backends/local/text-layer.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { convertLocally, drawPdf, inlineText } from '../helpers/local-pages.ts';
import { type DrawnGlyph, drawDisplay, type MathSetter, mathKit, negationPdf, SCRIPT_SIZE } from '../helpers/math-pages.ts';
import { drawnWithin, formulasOf } from '../helpers/math-shape.ts';

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
    const leaves = [...dom.window.document.querySelectorAll('mi, mn, mo, mtext, msqrt')].filter((element) => element.closest('annotation') === null);
    return leaves.flatMap((leaf) =>
      // a root's sign is the msqrt element itself, drawn before its radicand
      leaf.tagName === 'msqrt'
        ? [{ char: '√', bold: false }]
        : [...(leaf.textContent ?? '')].map((char) => ({ char: normalise(char), bold: /bold/.test(leaf.getAttribute('mathvariant') ?? '') })),
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
    // Advent (Elsevier's and Oxford's typesetting) hashes its face names and keeps the style as a suffix
    expect(['LMNICB+AdvOTb83ee1dd.B', 'AdvOTb92eb7df.I+20', 'AdvOT3bf1a849.BI', 'AdvOT863180fb+20', 'AdvOTB1234.Bold', 'Report.B'].map(fontStyle)).toEqual([
      { bold: true, italic: false },
      { bold: false, italic: true },
      { bold: true, italic: true },
      { bold: false, italic: false },
      { bold: true, italic: false },
      { bold: false, italic: false },
    ]);
    // URW's Times as TeX embeds it (mathptmx): "Medi" is its bold, "ReguItal" its italic, a slanted Symbol italic Greek
    expect(['AAAAAE+NimbusRomNo9L-Medi', 'NimbusRomNo9L-ReguItal', 'StandardSymL-Slant_167', 'KoPubDotumMedium'].map(fontStyle)).toEqual([
      { bold: true, italic: false },
      { bold: false, italic: true },
      { bold: false, italic: true },
      { bold: false, italic: false },
    ]);
    // the fonts of math alphabets, whose letters extract as plain ones
    expect(['ABCDEF+MSBM10', 'EUFM10', 'CMSY10', 'RSFS10', 'CMR10'].map((name) => fontStyle(name).alphabet)).toEqual([
      'mathbb',
      'mathfrak',
      'mathcal',
      'mathscr',
      undefined,
    ]);
    const letter = (text: string, x: number, alphabet?: 'mathbb') => ({ text, x, y: 100, width: 6, size: 10, bold: false, italic: !alphabet, alphabet });
    // a blackboard letter is its own symbol: not the start of an upright name with the letters after it
    expect(layoutToTex([letter('x', 0), letter('∈', 8), letter('R', 16, 'mathbb'), letter('n', 22.5)])).toBe('x\\in\\mathbb{R}n');
  });

  it('leaves out a small glyph lower than any subscript: the next line’s exponent, in this one’s area', () => {
    const at = (text: string, x: number, y: number, size = 10.9, italic = true) => ({ text, x, y, width: size * 0.55, size, bold: false, italic });
    // geotopo p. 102: "x ∈ T_s^1 S" over a line whose own T_s^1 raises its "1" into the area read for this one
    const line = [at('x', 0, 100), at('∈', 9, 100, 10.9, false), at('T', 19, 100), at('1', 26, 104.5, 8, false), at('s', 25.5, 97.3, 8), at('S', 32, 100)];
    expect(layoutToTex(line)).toBe('x\\in T_{s}^{1}S');
    expect(layoutToTex([...line, at('1', 27, 86.9, 8, false)])).toBe('x\\in T_{s}^{1}S');
  });
});

/**
 * A page set as LaTeX sets display mathematics, drawn here with KaTeX's fonts:
 * prose, then formulas whose numerators and denominators stand on lines of
 * their own over and under drawn fraction bars (one nested in another's
 * denominator, at script size), a root's overbar, a sum's limits over and
 * under it. Each formula must come out as one display formula whose TeX KaTeX
 * draws with the page's symbols, and the prose around it as whole paragraphs.
 */
describe('scripts and limits from where each glyph is drawn', () => {
  const glyph = (text: string, x: number, y: number, size = 10, width = size * 0.6, italic = true) => ({ text, x, y, width, size, bold: false, italic });

  it('reads limits hung beside an integral, and a sum set inline, whatever height the operator font puts its baseline at', () => {
    // cmex hangs ∫ from its top: its baseline is over the raised limit beside it
    const integral = [
      glyph('∫', 0, 108, 10, 5.6, false),
      glyph('1', 6, 106, 7),
      glyph('0', 4, 95, 7),
      glyph('f', 12, 100),
      glyph('(', 18, 100, 10, 4, false),
      glyph('x', 22, 100),
      glyph(')', 28, 100, 10, 4, false),
    ];
    expect(layoutToTex(integral)).toBe('\\int_{0}^{1}f(x)');
    // a sum in a line of text: its limits raised and lowered at its right, its baseline over both of them
    const sum = [
      glyph('∑', 0, 107, 10, 10, false),
      glyph('n', 10.5, 103.6, 7),
      glyph('i', 10.5, 97.6, 7),
      glyph('=', 13, 97.6, 7, 5.4, false),
      glyph('1', 18.4, 97.6, 7, 3.5, false),
      glyph('a', 24, 100),
    ];
    expect(layoutToTex(sum)).toBe('\\sum_{i=1}^{n}a');
  });

  it('gives a limit to the operator it stands under, a script after the summand to the summand, and a limit its own scripts', () => {
    // "i ∈ N" under ∏ is wider than the operator and starts left of it, over the × before it
    const product = [
      glyph('U', 0, 100),
      glyph('×', 10, 100, 10, 7.8, false),
      glyph('∏', 22, 100, 10, 10, false),
      ...[...'i∈N'].map((char, i) => glyph(char, 17 + i * 5, 92, 7, 4.5)),
      glyph('P', 34, 100),
    ];
    expect(layoutToTex(product)).toBe('U\\times\\prod_{i\\in N}P');
    // x_i^2 just after a display sum: its scripts are x's, the sum keeps its limits
    const sum = [
      glyph('∑', 0, 100, 10, 14.4, false),
      ...[...'i=1'].map((char, i) => glyph(char, 2 + i * 4, 88, 7, 4)),
      glyph('n', 5, 113, 7, 4),
      glyph('x', 16, 100),
      glyph('2', 22, 104, 7, 3.5),
      glyph('i', 22, 97.5, 7, 2.5),
    ];
    expect(layoutToTex(sum)).toBe('\\sum_{i=1}^{n}x_{i}^{2}');
    // "V_i ∩ V_j" under an integral: the indices are the Vs' scripts, and the limit goes on after each
    const integral = [
      glyph('∫', 0, 100, 10, 5.6, false),
      glyph('V', 5, 92, 7, 4.5),
      glyph('i', 9.5, 90.5, 5, 1.8),
      glyph('∩', 12, 92, 7, 5.4, false),
      glyph('V', 17.5, 92, 7, 4.5),
      glyph('j', 22, 90.5, 5, 2),
      glyph('f', 27, 100),
    ];
    expect(layoutToTex(integral)).toBe('\\int_{V_{i}\\cap V_{j}}f');
  });

  it('reads rows of cells between big delimiters as a matrix, and rows after a big brace nothing closes as cases', () => {
    const big = (text: string, x: number) => glyph(text, x, 100, 10, 7.4, false);
    // a 2×2 grid between two big delimiters (or after an opening one alone): rows 1.2 em apart, centred on the axis;
    // columns an em apart
    const grid = (open: string, close: string | undefined, rows: string[][]) => [
      big(open, 0),
      ...rows.flatMap((cells, r) => cells.map((text, c) => glyph(text, 9 + c * 16, 106 - r * 12))),
      ...(close ? [big(close, 32)] : []),
    ];
    const equals = (name: string) => [glyph(name, -14, 100), glyph('=', -6, 100, 10, 7.8, false)];
    expect(
      layoutToTex([
        ...equals('M'),
        ...grid('(', ')', [
          ['a', 'b'],
          ['c', 'd'],
        ]),
      ]),
    ).toBe('M=\\begin{pmatrix}a&b\\\\c&d\\end{pmatrix}');
    expect(
      layoutToTex([
        ...grid('[', ']', [
          ['1', '0'],
          ['0', '1'],
        ]),
        glyph('x', 42, 100),
      ]),
    ).toBe('\\begin{bmatrix}1&0\\\\0&1\\end{bmatrix}x');
    expect(
      layoutToTex([
        ...equals('f'),
        ...grid('{', undefined, [
          ['0', 'x'],
          ['1', 'y'],
        ]),
      ]),
    ).toBe('f=\\begin{cases}0&x\\\\1&y\\end{cases}');
  });

  it('reads two lines stacked without a bar between big parentheses as a binomial, between text-size ones as a fraction', () => {
    const stacked = (parenWidth: number) => [
      glyph('(', 0, 100, 10, parenWidth, false),
      glyph('n', 8, 106),
      glyph('k', 8, 94),
      glyph(')', 14, 100, 10, parenWidth, false),
    ];
    // TeX's \bigg( from cmex is 0.74 em wide; a text font's ( about 0.39 em
    expect(layoutToTex(stacked(7.4))).toBe('\\binom{n}{k}');
    expect(layoutToTex(stacked(3.9))).toBe('(\\frac{n}{k})');
  });

  it('reads "====⇒" and "−−−→" drawn long as one arrow, the small lines over and under it as its labels', () => {
    const shaft = (text: string, from: number, count: number) => Array.from({ length: count }, (_, i) => glyph(text, from + i * 5, 100, 10, 7.8, false));
    const label = (text: string, x: number, y: number) => [...text].map((char, i) => glyph(char, x + i * 3.2, y, 7, 3.2));
    // "abc" over a long ⇒: its glyphs stand over several shaft pieces, and are one label
    const over = [...shaft('=', 0, 2), glyph('⇒', 10, 100, 10, 10, false), ...label('abc', 2, 107), glyph('x', 22, 100)];
    expect(layoutToTex(over)).toBe('\\xRightarrow{abc}x');
    // "n → ∞" under a long →, and the same arrow bare
    const under = [glyph('a', -8, 100), ...shaft('−', 0, 3), glyph('→', 15, 100, 10, 10, false), ...label('n', 6, 94), glyph('b', 28, 100)];
    expect(layoutToTex(under)).toBe('a\\xrightarrow[n]{}b');
    expect(layoutToTex([glyph('a', -8, 100), ...shaft('−', 0, 3), glyph('→', 15, 100, 10, 10, false), glyph('b', 28, 100)])).toBe('a\\longrightarrow b');
    // an "=" apart from the arrow is an equals sign still
    expect(
      layoutToTex([glyph('a', 0, 100), glyph('=', 8, 100, 10, 7.8, false), glyph('b', 20, 100), glyph('⇒', 30, 100, 10, 10, false), glyph('c', 44, 100)]),
    ).toBe('a=b\\Rightarrow c');
    for (const tex of ['\\xRightarrow{abc}x', 'a\\xrightarrow[n]{}b']) expect(() => katex.renderToString(tex, { throwOnError: true })).not.toThrow();
  });

  it("reads a small glyph over a small glyph after a relation as a fraction in text style, and keeps a letter's two scripts", () => {
    // α₁ ≤ α/2 as pdfTeX sets it in a line of text (the bar is not read in an inline formula)
    const page = [
      glyph('α', 129.8, 376.6, 10.9, 7),
      glyph('1', 136.8, 375, 8, 4.2, false),
      glyph('≤', 144.6, 376.6, 10.9, 8.5, false),
      glyph('α', 157.3, 380.9, 8, 5.4),
      glyph('2', 157.9, 372.8, 8, 4.2, false),
    ];
    expect(layoutToTex(page)).toBe('\\alpha_{1}\\leq\\frac{\\alpha}{2}');
    expect(layoutToTex([glyph('x', 0, 100), glyph('2', 6, 104, 7, 3.5, false), glyph('i', 6, 97, 7, 2.5)])).toBe('x_{i}^{2}');
  });

  it('reads the zero-width bar pdfTeX starts ↦ with (it extracts as "7") as part of the arrow', () => {
    expect(layoutToTex([glyph('x', 0, 100), glyph('7', 8, 100, 10, 0, false), glyph('→', 8, 100, 10, 10, false), glyph('y', 21, 100)])).toBe('x\\mapsto y');
    // a 7 with its own width is a digit
    expect(layoutToTex([glyph('7', 0, 100, 10, 5, false), glyph('→', 8, 100, 10, 10, false), glyph('y', 21, 100)])).toBe('7\\to y');
  });

  it('reads a ∼ set over an = as ≅ (pdfTeX draws \\cong so)', () => {
    expect(layoutToTex([glyph('S', 0, 100), glyph('∼', 10, 102.5, 10, 7.8, false), glyph('=', 10, 100, 10, 7.8, false), glyph('T', 22, 100)])).toBe(
      'S\\cong T',
    );
  });

  it("gives an upright name's script to the whole name", () => {
    const upright = (text: string, x: number, width: number) => glyph(text, x, 100, 10, width, false);
    expect(layoutToTex([upright('c', 0, 4.4), upright('o', 4.4, 5), upright('s', 9.4, 3.9), glyph('2', 13.5, 104, 7, 3.5, false), glyph('x', 19, 100)])).toBe(
      '\\cos^{2}x',
    );
  });

  it('reads a small line under an operator name (lim, max, arg max) as its limit, not as a script of its first letter', () => {
    const upright = (text: string, x: number, width: number) => glyph(text, x, 100, 10, width, false);
    const lim = [upright('l', 5, 2.8), upright('i', 7.8, 2.8), upright('m', 10.6, 8.3)];
    // n → ∞ centred under "lim", wider than it: it starts left of the name
    const tendsToInfinity = [glyph('n', 3, 93, 7, 4.2), glyph('→', 7.2, 93, 7, 7, false), glyph('∞', 14.2, 93, 7, 7, false)];
    const xSubN = [glyph('x', 23, 100), glyph('n', 28.7, 98.5, 7, 4.2)];
    expect(layoutToTex([...lim, ...tendsToInfinity, ...xSubN, glyph('=', 35, 100, 10, 7.8, false), glyph('0', 45, 100, 10, 5, false)])).toBe(
      '\\lim_{n\\to\\infty}x_{n}=0',
    );
    // a limit narrower than the name, under its middle letter
    const max = [upright('m', 0, 8.3), upright('a', 8.3, 5), upright('x', 13.3, 5.3)];
    expect(
      layoutToTex([
        ...max,
        glyph('x', 8.5, 93, 7, 4),
        glyph('f', 21, 100),
        glyph('(', 26, 100, 10, 4, false),
        glyph('x', 30, 100),
        glyph(')', 36, 100, 10, 4, false),
      ]),
    ).toBe('\\max_{x}f(x)');
    // two words a thin space apart make one name, its limit under the gap between them
    const argmax = [upright('a', 0, 5), upright('r', 5, 3.9), upright('g', 8.9, 5), upright('m', 15.6, 8.3), upright('a', 23.9, 5), upright('x', 28.9, 5.3)];
    expect(layoutToTex([...argmax, glyph('θ', 12, 93, 7, 3.5), glyph('L', 37, 100)])).toBe('\\operatorname*{arg\\,max}_{\\theta}L');
  });

  it("reads a negation slash of no width drawn in one run with the relation it strikes (pdfTeX's \\notin)", async () => {
    const { pages } = await convertLocally(negationPdf(), { ocr: false });
    const formulas = pages[0]!.blocks.filter((block) => block.kind === 'formula');
    expect(formulas.map((block) => (block.kind === 'formula' ? block.tex : undefined))).toEqual(['a\\notin B']);
  });

  it("places each glyph of a run where the operator list draws it, not by sharing the run's width", async () => {
    const file = path.join(import.meta.dirname, '../../node_modules/katex/dist/fonts/KaTeX_Main-Regular.ttf');
    const runs = ['Wii=W', 'mi+1'];
    let widths: number[][] = [];
    const bytes = await drawPdf((doc) => {
      doc.font(file).fontSize(12);
      widths = runs.map((run) => [...run].map((char) => doc.widthOfString(char)));
      runs.forEach((run, index) => doc.text(run, 100, 100 + index * 30, { baseline: 'alphabetic', lineBreak: false }));
    });
    const drawn = await openPdf(bytes);
    try {
      const onPage = await drawn.getPage(1);
      const list = await onPage.getOperatorList();
      const placed = readGlyphPositions(list, (font) => (onPage.commonObjs.get(font) as { fontMatrix?: number[] }).fontMatrix);
      const height = onPage.view[3]!;
      runs.forEach((run, index) => {
        const line = placed.filter((entry) => Math.abs(entry.y - (height - 100 - index * 30)) < 0.01);
        expect(line.map((entry) => entry.text).join('')).toBe(run);
        let x = 100;
        line.forEach((entry, at) => {
          expect(entry.x).toBeCloseTo(x, 2);
          expect(entry.width).toBeCloseTo(widths[index]![at]!, 2);
          expect(entry.size).toBeCloseTo(12, 5);
          x += widths[index]![at]!;
        });
      });
    } finally {
      await drawn.loadingTask.destroy();
    }
  });
});

describe('display formulas over several lines (fraction bars, nested fractions, limits)', () => {
  const SIZE = 11;
  const small = SIZE * SCRIPT_SIZE;
  const drawn: DrawnGlyph[][] = [];
  const PROSE = [
    'The roots of a quadratic equation are found in closed form, which every student',
    'of algebra learns by heart; for the equation with coefficients a, b and c they are',
    'A continued fraction is written with fractions inside fractions, as in the identity',
    'and the sum of the first n whole numbers has a well-known value, namely',
    'which Gauss is said to have found as a schoolboy, by pairing the terms. Its squares add up to',
    'a sum whose limits also stand over and under it, though no fraction bar is drawn.',
  ];
  let result: Awaited<ReturnType<typeof convertLocally>>;

  beforeAll(async () => {
    const bytes = await drawPdf((doc) => {
      const { m, prose, rel, bin, v, n } = mathKit(doc, SIZE);
      const display = (box: ReturnType<MathSetter['row']>, y: number) => {
        const glyphs: DrawnGlyph[] = [];
        drawn.push(glyphs);
        return drawDisplay(doc, box, 300, y, glyphs) + 22;
      };
      prose(PROSE[0]!, 90);
      prose(PROSE[1]!, 104);
      let y = display(
        m.row(
          v('x'),
          rel('='),
          m.frac(
            m.row(n('−'), v('b'), bin('±'), m.sqrt(m.row(m.scripts(v('b'), SIZE, n('2', small)), bin('−'), n('4'), v('a'), v('c')), SIZE)),
            m.row(n('2'), v('a')),
            SIZE,
            true,
          ),
        ),
        134,
      );
      prose(PROSE[2]!, y);
      y = display(
        m.row(
          m.frac(n('1'), m.row(n('1'), bin('+'), m.frac(n('1', small), v('x', small), small, false)), SIZE, true),
          rel('='),
          m.frac(v('x'), m.row(v('x'), bin('+'), n('1')), SIZE, true),
        ),
        y + 30,
      );
      prose(PROSE[3]!, y);
      y = display(
        m.row(
          m.limits(m.text('∑', 'size2', SIZE), SIZE, v('n', small), m.row(v('i', small), n('=', small), n('1', small))),
          0.17 * SIZE,
          v('i'),
          rel('='),
          m.frac(m.row(v('n'), n('('), v('n'), bin('+'), n('1'), n(')')), n('2'), SIZE, true),
        ),
        y + 34,
      );
      prose(PROSE[4]!, y);
      y = display(
        m.row(
          m.limits(m.text('∏', 'size2', SIZE), SIZE, v('n', small), m.row(v('k', small), n('=', small), n('1', small))),
          0.17 * SIZE,
          v('k'),
          rel('='),
          v('n'),
          n('!'),
        ),
        y + 34,
      );
      prose(PROSE[5]!, y);
    });
    result = await convertLocally(bytes, { ocr: false });
  });

  it.each([
    { index: 0, name: 'a fraction with a root in its numerator', tex: 'x=\\frac{-b\\pm\\sqrt{b^{2}-4ac}}{2a}' },
    { index: 1, name: 'a fraction nested in a denominator, beside another', tex: '\\frac{1}{1+\\frac{1}{x}}=\\frac{x}{x+1}' },
    { index: 2, name: 'a sum with limits over and under it', tex: '\\sum_{i=1}^{n}i=\\frac{n(n+1)}{2}' },
    { index: 3, name: 'a product with limits and no fraction bar', tex: '\\prod_{k=1}^{n}k=n!' },
  ])('$name: one display formula whose TeX KaTeX draws as the page', ({ index, tex: expected }) => {
    const formulas = result.pages[0]!.blocks.filter((block) => block.kind === 'formula');
    expect(formulas).toHaveLength(4);
    const formula = formulas[index]!;
    expect(formula.kind === 'formula' && formula.display).toBe(true);
    const tex = formula.kind === 'formula' ? formula.tex : undefined;
    expect(tex).toBe(expected);
    const onPage = drawn[index]!.flatMap((glyph) => [...glyph.text].filter((char) => char.trim() !== '')).map(normalise);
    const rendered = katexSymbols(tex!).map((entry) => entry.char);
    expect([...rendered].sort()).toEqual([...onPage].sort());
    // the full-size glyphs of the row most of them share (a numerator, the main line) read in the page's order
    const full = drawn[index]!.filter((glyph) => glyph.size === SIZE);
    const count = (y: number) => full.filter((glyph) => glyph.y === y).length;
    const baseline = [...full].sort((a, b) => count(b.y) - count(a.y))[0]!.y;
    const line = full
      .filter((glyph) => glyph.y === baseline)
      .sort((a, b) => a.x - b.x)
      .flatMap((glyph) => [...glyph.text].filter((char) => char.trim() !== '').map(normalise));
    let at = 0;
    for (const char of rendered) if (char === line[at]) at++;
    expect(at, `${line.join('')} in ${rendered.join('')}`).toBe(line.length);
  });

  it("keeps the prose around the formulas as whole paragraphs, without the formulas' pieces", () => {
    const paragraphs = result.pages[0]!.blocks.filter((block) => block.kind === 'paragraph').map((block) =>
      inlineText(block.kind === 'paragraph' ? block.content : []),
    );
    expect(paragraphs).toEqual([`${PROSE[0]} ${PROSE[1]}`, PROSE[2], PROSE[3], PROSE[4], PROSE[5]]);
    expect(result.pages[0]!.blocks.map((block) => block.kind)).toEqual([
      'paragraph',
      'formula',
      'paragraph',
      'formula',
      'paragraph',
      'formula',
      'paragraph',
      'formula',
      'paragraph',
    ]);
  });

  it('leaves a table of numbers under a rule alone: its cells stand apart, no numerator and denominator', async () => {
    const bytes = await drawPdf((doc) => {
      doc.font('Helvetica').fontSize(10);
      const line = (text: string, y: number) => doc.text(text, 72, y, { lineBreak: false });
      line('The yearly changes of the three indicators are given in the table below, in percent.', 300);
      line('Each column holds one year; the first row under the rule is the first indicator.', 314);
      const cells = (texts: string[], y: number) => texts.forEach((text, column) => doc.text(text, 120 + column * 90, y, { lineBreak: false }));
      cells(['2019', '2020', '2021'], 340);
      doc.moveTo(110, 354).lineTo(390, 354).lineWidth(0.5).stroke();
      cells(['-1.5', '2.0', '-0.3'], 359);
      cells(['0.4', '-2.2', '1.0'], 373);
      line('The changes were small in every year, and none of them lasted into the next one.', 400);
    });
    const { pages } = await convertLocally(bytes, { ocr: false });
    expect(pages[0]!.blocks.some((block) => block.kind === 'formula')).toBe(false);
    const text = JSON.stringify(pages[0]!.blocks);
    for (const cell of ['2019', '2021', '-1.5', '-2.2', '1.0']) expect(text).toContain(cell);
  });

  it('reads a matrix of fractions (bars stacked one under another) as separate fractions, and a bar with nothing over it as no fraction but an overline', () => {
    const glyph = (text: string, x: number, y: number) => ({ text, x, y, width: 6, size: 10, bold: false, italic: true });
    const bars = [
      { x1: 0, x2: 8, y: 100 },
      { x1: 0, x2: 8, y: 82 },
    ];
    // a over b, then c over d, each against its own bar
    expect(layoutToTex([glyph('a', 1, 103), glyph('b', 1, 91), glyph('c', 1, 85), glyph('d', 1, 73)], bars)).toBe('\\frac{a}{b}\\frac{c}{d}');
    expect(layoutToTex([glyph('b', 1, 91), glyph('+', 9, 91)], [{ x1: 0, x2: 8, y: 100 }])).toBe('\\overline{b}+');
    // a bar over a lowered piece alone is a fraction's whose numerator is lost: no overline, no fraction
    expect(layoutToTex([glyph('a', 1, 95), glyph('b', 10, 87), glyph('+', 18, 95)], [{ x1: 9, x2: 17, y: 96 }]) ?? '').not.toContain('overline');
    // pdfTeX's negation slash is a zero-width glyph that extracts as "6" over the relation it negates
    expect(layoutToTex([glyph('a', 0, 50), { ...glyph('6', 8, 50), width: 0 }, glyph('=', 8, 50), glyph('0', 16, 50)])).toBe('a\\neq0');
  });
});

describe('limits under operator names on a page', () => {
  const SIZE = 11;
  const small = SIZE * SCRIPT_SIZE;

  it('reads lim and max with a small line under them as the name and its limit, as KaTeX draws them', async () => {
    const drawn: DrawnGlyph[][] = [];
    const bytes = await drawPdf((doc) => {
      const { m, prose, rel, v, n } = mathKit(doc, SIZE);
      const display = (box: ReturnType<MathSetter['row']>, y: number) => {
        const glyphs: DrawnGlyph[] = [];
        drawn.push(glyphs);
        return drawDisplay(doc, box, 300, y, glyphs) + 22;
      };
      prose('A sequence converges to zero when its terms come as close to zero as one likes, which is written', 90);
      let y = display(
        m.row(
          m.limits(n('lim'), SIZE, undefined, m.row(v('n', small), n('→', small), n('∞', small))),
          0.17 * SIZE,
          m.scripts(v('x'), SIZE, undefined, v('n', small)),
          rel('='),
          n('0'),
        ),
        124,
      );
      prose('and the largest value a function takes on a closed interval is its maximum, written as', y);
      y = display(m.row(m.limits(n('max'), SIZE, undefined, v('x', small)), 0.17 * SIZE, v('f'), n('('), v('x'), n(')'), rel('='), n('1')), y + 30);
      prose('where the variable under the name runs over the whole interval, from one end to the other.', y);
    });
    const { pages } = await convertLocally(bytes, { ocr: false });
    const formulas = pages[0]!.blocks.filter((block) => block.kind === 'formula');
    expect(formulas.map((block) => (block.kind === 'formula' ? block.tex : undefined))).toEqual(['\\lim_{n\\to\\infty}x_{n}=0', '\\max_{x}f(x)=1']);
    formulas.forEach((formula, index) => {
      const onPage = drawn[index]!.flatMap((glyph) => [...glyph.text].filter((char) => char.trim() !== '')).map(normalise);
      // KaTeX puts an invisible function application (U+2061) after an operator name, which draws nothing
      const rendered = katexSymbols(formula.kind === 'formula' ? formula.tex! : '')
        .map((entry) => entry.char)
        .filter((char) => char !== '\u2061');
      expect([...rendered].sort()).toEqual([...onPage].sort());
    });
  });
});

describe('integrals whose limits stand on lines of their own', () => {
  const SIZE = 11;
  const small = SIZE * SCRIPT_SIZE;

  it('reads a display integral with its limits over and under it as one formula', async () => {
    const drawn: DrawnGlyph[] = [];
    const bytes = await drawPdf((doc) => {
      const { m, prose, rel, v, n } = mathKit(doc, SIZE);
      prose('The area under the graph of a function between two points is its integral between them, here', 90);
      const end = drawDisplay(
        doc,
        m.row(
          m.limits(m.text('∫', 'size2', SIZE), SIZE, n('1', small), n('0', small)),
          0.17 * SIZE,
          v('f'),
          n('('),
          v('x'),
          n(')'),
          v('d'),
          v('x'),
          rel('='),
          n('1'),
        ),
        300,
        130,
        drawn,
      );
      prose('which is the whole of the area, since the function is a density and adds up to one over the line.', end + 22);
    });
    const { pages } = await convertLocally(bytes, { ocr: false });
    const formulas = pages[0]!.blocks.filter((block) => block.kind === 'formula');
    expect(formulas.map((block) => (block.kind === 'formula' ? block.tex : undefined))).toEqual(['\\int_{0}^{1}f(x)dx=1']);
    expect(pages[0]!.blocks.map((block) => block.kind)).toEqual(['paragraph', 'formula', 'paragraph']);
  });

  it("keeps a page's columns when an integral's limits join its line (math-equations-katex: the limits had propped up a sparse column)", async () => {
    const { pages } = await convertLocally(new Uint8Array(readFileSync(path.join(CORPUS_DIR, 'math-equations-katex.pdf'))), { ocr: false });
    const blocks = pages[0]!.blocks;
    const formulas = blocks.flatMap((block) => (block.kind === 'formula' ? [block.tex] : []));
    expect(formulas).toContain('\\int_{a}^{b}f(x)dx=F(b)-F(a)');
    // two columns read one after the other: the left column's headings come before the right column's
    const headings = blocks.flatMap((block) => (block.kind === 'heading' ? [inlineText(block.content)] : []));
    expect(headings.indexOf('3. The Fundamental Theorem of Calculus')).toBeGreaterThan(headings.indexOf("1. Euler's Identity"));
    expect(headings.indexOf('2. Pythagorean Theorem')).toBeGreaterThan(headings.indexOf('3. The Fundamental Theorem of Calculus'));
  });

  it('lays out from its geometry a page whose structure tree leaves most words out, so every formula of the page carries its TeX', async () => {
    // Chrome tags the page's boxes, the first formula's "e" as a Figure, and leaves 118 of its 170 words untagged
    const { pages } = await convertLocally(new Uint8Array(readFileSync(path.join(CORPUS_DIR, 'math-equations-katex.pdf'))), { ocr: false });
    const page = pages[0]!;
    const formulas = page.blocks.flatMap((block) => (block.kind === 'formula' ? [block.tex] : []));
    expect(formulas).toEqual(
      expect.arrayContaining([
        'e^{i\\pi}+1=0',
        'a^{2}+b^{2}=c^{2}',
        '\\nabla\\cdot\\mathbf{E}=\\frac{\\rho}{\\varepsilon_{0}}',
        '\\nabla\\times\\mathbf{E}=-\\frac{\\partial\\mathbf{B}}{\\partial t}',
      ]),
    );
    expect(formulas).toHaveLength(7);
    // the cards' drop shadows are pictures whose only ink is at their edges: no figures to describe
    expect(page.blocks.filter((block) => block.kind === 'figure' && !block.decorative)).toEqual([]);
    expect(page.warnings).toContainEqual(expect.stringContaining('structure tree leaves 118 of its 170 words out'));
  });
});

describe('display lines aligned at their equals sign', () => {
  const SIZE = 11;
  const small = SIZE * SCRIPT_SIZE;

  it('reads consecutive display lines whose = stand one under another as one aligned formula', async () => {
    const drawn: DrawnGlyph[] = [];
    const bytes = await drawPdf((doc) => {
      const { m, prose, v, n, bin } = mathKit(doc, SIZE);
      const equals = m.row(0.28 * SIZE, n('='), 0.28 * SIZE);
      prose('Squaring a sum term by term and collecting the like terms, one line at a time, gives', 90);
      const left = m.row(n('('), v('a'), bin('+'), n('1'), m.scripts(n(')'), SIZE, n('2', small)));
      // each line's = at the same x: TeX's align puts the left sides flush right against it
      const at = 230;
      left.draw(doc, at - left.width, 130, drawn);
      m.row(equals, n('('), v('a'), bin('+'), n('1'), n(')'), n('('), v('a'), bin('+'), n('1'), n(')')).draw(doc, at, 130, drawn);
      m.row(equals, m.scripts(v('a'), SIZE, n('2', small)), bin('+'), n('2'), v('a'), bin('+'), n('1')).draw(doc, at, 150, drawn);
      prose('which every student of algebra has written out by hand at least once, and most of them twice.', 180);
    });
    const { pages } = await convertLocally(bytes, { ocr: false });

    const formulas = pages[0]!.blocks.filter((block) => block.kind === 'formula');
    expect(formulas.map((block) => (block.kind === 'formula' ? block.tex : undefined))).toEqual([
      '\\begin{aligned}(a+1)^{2}&=(a+1)(a+1)\\\\&=a^{2}+2a+1\\end{aligned}',
    ]);
    const onPage = drawn.flatMap((glyph) => [...glyph.text].filter((char) => char.trim() !== '')).map(normalise);
    const rendered = katexSymbols(formulas[0]!.kind === 'formula' ? formulas[0]!.tex! : '').map((entry) => entry.char);
    expect([...rendered].sort()).toEqual([...onPage].sort());
  });
});

describe('a page set by pdfTeX with TeX Live’s own ToUnicode for cmex10', () => {
  // the map names only cmex10's stacking pieces: pdf.js spells its other glyphs by their codes, "P" for ∑, "Z" for ∫
  const fixture = path.join(import.meta.dirname, '../fixtures/tex/arxiv-math.pdf');

  it('reads the big operators by their glyph codes, in display formulas and in prose', async () => {
    const { pages } = await convertLocally(new Uint8Array(readFileSync(fixture)), { ocr: false });
    const blocks = pages[0]!.blocks;
    const formulas = blocks.flatMap((block) => (block.kind === 'formula' ? [block.tex] : []));
    expect(formulas).toEqual([
      "\\int_{0}^{1}|u'(t)|^{2}dt\\leq\\frac{1}{\\pi^{2}}\\int_{0}^{1}|u''(t)|^{2}dt.\\tag{1}",
      '\\sum_{i=1}^{n}x_{i}=\\int_{a}^{b}f(x)dx+\\prod_{j=1}^{m}y_{j}+\\bigcup_{k}A_{k}',
    ]);
    const text = blocks.map((block) => (block.kind === 'paragraph' ? inlineText(block.content) : '')).join(' ');
    expect(text).not.toMatch(/\b[PZ]\b/);
  });

  it('reads the mathematics of its prose as inline formulas, each with the TeX of its glyphs, the words around them as text', async () => {
    const { pages } = await convertLocally(new Uint8Array(readFileSync(fixture)), { ocr: false });
    const content = pages[0]!.blocks.flatMap((block) => (block.kind === 'paragraph' ? block.content : []));
    const inline = content.flatMap((node) => (node.kind === 'math' ? [node.tex] : []));
    expect(inline).toEqual(
      expect.arrayContaining([
        '\\Omega\\subset\\mathbb{R}^{n}',
        '-\\Delta u=f',
        '\\|f\\|_{L^{2}(\\Omega)}\\leq C',
        'f(x)=O(x^{2})',
        '\\sum_{k=1}^{N}a_{k}x^{k}',
        '|x|<1',
        'g\\cdot x=x',
        'x\\in X',
      ]),
    );
    // prose stays prose, and the clause's comma or full stop stays out of the formula
    const words = content.flatMap((node) => (node.kind === 'text' ? [node.text] : [])).join('|');
    expect(words).toContain(' be a bounded domain and let ');
    expect(words).toContain(', the sum ');
    expect(content.find((node) => node.kind === 'math' && node.tex === '|x|<1')).toMatchObject({ text: '|x| < 1' });
  });
});

describe('formulas against the TeX they were set from (test/fixtures/tex/formulas*.pdf, bench/formula-truth.mjs)', () => {
  const dir = path.join(import.meta.dirname, '../fixtures/tex');
  const read = async (name: string) => {
    const expected = JSON.parse(readFileSync(path.join(dir, `${name}.json`), 'utf8')) as { display: string[]; inline: string[] };
    const { pages } = await convertLocally(new Uint8Array(readFileSync(path.join(dir, `${name}.pdf`))), { ocr: false });
    const ours = formulasOf(pages);
    return { pages, missed: [...expected.display, ...expected.inline].filter((tex) => drawnWithin(tex, ours) === undefined) };
  };

  /** A fixture page read: the source formulas it misses are `missed`, and its display formulas' TeX holds each of `holds`. */
  const expectRead = async (name: string, holds: string[], missed: string[] = []) => {
    const result = await read(name);
    expect(result.missed).toEqual(missed);
    const tex = result.pages.flatMap((page) => page.blocks).flatMap((block) => (block.kind === 'formula' && block.tex ? [block.tex] : []));
    expect(tex).toEqual(expect.arrayContaining(holds));
    return { pages: result.pages, tex };
  };

  it('reads display and inline formulas of arXiv-like pages so that KaTeX draws the source’s symbols in their places', async () => {
    // a line that is one formula is a display, even where its words are operator names (\operatorname{Hom}); a condition
    // after \quad is its text; two equations set apart by ", \qquad", one a fraction over lines of its own, are one row
    await expectRead('formulas', [
      'H^{k}(X;\\mathbb{Z})\\cong\\operatorname{Hom}(H_{k}(X),\\mathbb{Z})',
      '\\partial_{t}u-\\Delta u=f\\text{ in }\\Omega\\times(0,T)',
      'a_{n+1}=\\frac{a_{n}+b_{n}}{2},\\qquad b_{n+1}=\\sqrt{a_{n}b_{n}}',
    ]);
    // a root's index; a big \left( (cmex's code 0x20, which pdf.js gives as a space and leaves out of the text) drawn
    // again from the operator list; an upright \mathrm name set in the text face is not read yet
    await expectRead(
      'formulas2',
      ['\\sqrt[3]{x^{3}+y^{3}}\\leq|x|+|y|', '(\\sum_{i=1}^{n}a_{i}b_{i})^{2}\\leq\\sum_{i=1}^{n}a_{i}^{2}\\sum_{i=1}^{n}b_{i}^{2}'],
      ['\\mathrm{SO}(3)'],
    );
    // aligned inequalities, a sum's limit at a page's foot (not page "x"), a sum whose line ends in a condition, the
    // heat kernel's fraction in an exponent (its numerator's square in the one face smaller than script size)
    const third = await expectRead('formulas3', []);
    expect(third.tex.some((tex) => tex.includes('e^{-\\frac{(x-y)^{2}}{4t}}'))).toBe(true);
    // a fraction set in a line of prose (\tfrac{1}{2}: digits raised and lowered over a bar) is an inline formula, its
    // denominator no paragraph of its own
    const prose = third.pages.flatMap((page) => page.blocks).flatMap((block) => (block.kind === 'paragraph' ? block.content : []));
    expect(prose).toContainEqual({ kind: 'math', tex: '\\frac{1}{2}', text: '12' });
    // machine learning's and analysis' kinds: a fraction whose parts hold subscripts ("ezi", "∂wij": letters of the
    // math faces are variables, not words), a function's name before its parenthesis (softmax(z)), two operator
    // names with limits side by side, a vmatrix's bars drawn by cmex code 0x0C (which pdf.js drops from the text), a
    // sum's limit over two lines (\substack, its ≠ a negation slash over =), \iint as two integral signs set close,
    // floors and ceilings, (mod n)
    const fourth = await expectRead('formulas4', [
      '\\operatorname{softmax}(z)_{i}=\\frac{e^{z_{i}}}{\\sum_{j=1}^{K}e^{z_{j}}}\\tag{1}',
      '\\frac{\\partial\\mathcal{L}}{\\partial w_{ij}}=\\delta_{j}x_{i}',
      '\\min_{\\theta}\\max_{\\phi}V(D_{\\phi},G_{\\theta})',
      '\\begin{vmatrix}a&b\\\\c&d\\end{vmatrix}=ad-bc',
    ]);
    expect(fourth.tex.some((tex) => tex.startsWith('\\sum_{\\substack{i,j=1\\\\i\\neq j}}^{n}'))).toBe(true);
    expect(fourth.tex.some((tex) => tex.startsWith('\\iint_{D}'))).toBe(true);
    // physics' and linear algebra's: a root over a fraction, roots in a fraction's parts, a matrix whose middle row is
    // \vdots and \ddots (periods one over another), an \underbrace's label, \xrightarrow's labels (a head drawn over
    // its whole shaft), a case split's "if" and "otherwise", a \widetilde (cmex's wide tilde put on its letter), a
    // \vec in prose (its letter where the page draws it, not where pdf.js's text puts it)
    const fifth = await expectRead('formulas5', [
      '\\sqrt{\\frac{a}{b}}=\\frac{\\sqrt{a}}{\\sqrt{b}}\\tag{4}',
      '\\begin{pmatrix}a_{11}&\\cdots &a_{1n}\\\\\\vdots&\\ddots&\\vdots\\\\a_{m1}&\\cdots &a_{mn}\\end{pmatrix}',
      '\\underbrace{1+1+\\cdots +1}_{n}=n',
      'A\\xrightarrow{f}B\\xrightarrow{g}C',
      '|x|=\\begin{cases}x&\\text{ if }x\\geq0\\\\-x&\\text{ otherwise }\\end{cases}',
    ]);
    // a brace's tips are drawing, not the formula's text a reader hears
    const braced = fifth.pages.flatMap((page) => page.blocks).find((block) => block.kind === 'formula' && block.tex?.startsWith('\\underbrace'));
    expect(braced?.kind === 'formula' && braced.text).toBe('1 + 1 + · · · + 1 = n n');
    // the first page again set in Times (mathptmx): variables in the text italic, Greek in URW's Symbol, a ∑ bigger
    // than the body; Symbol's φ is not told from ϕ yet
    await expectRead(
      'formulas6',
      ['\\sum_{n=1}^{\\infty}\\frac{1}{n^{2}}=\\frac{\\pi^{2}}{6}'],
      ['\\varphi(n) = n \\prod_{p \\mid n} \\left(1 - \\frac{1}{p}\\right)'],
    );
    // the fourth page set in Palatino (mathpazo): the text face's comma and dots in a list ("x₁, …, xₙ") and in ⟨u, v⟩,
    // a decimal number, a ∏ and ∑ bigger than the body (no say in the line's size), bold vectors beside a relation or an
    // italic variable; a \substack and a \frac{a}{b} in prose are not read yet
    const seventh = await expectRead(
      'formulas7',
      ['\\prod_{i=1}^{n}(1+x_{i})\\geq1+\\sum_{i=1}^{n}x_{i}', '\\mathbf{y}=W\\mathbf{x}+\\mathbf{b}'],
      ['\\sum_{\\substack{i, j = 1 \\\\ i \\neq j}}^{n} a_{ij} = 0', '\\frac{a}{b}'],
    );
    const inline = seventh.pages
      .flatMap((page) => page.blocks)
      .flatMap((block) => (block.kind === 'paragraph' ? block.content : []))
      .flatMap((run) => (run.kind === 'math' ? [run.tex] : []));
    expect(inline).toEqual(expect.arrayContaining(['x_{1},\\ldots ,x_{n}', '\\langle u,v\\rangle', '\\beta_{1}=0.9']));
  });
});

describe('inline formulas, bounded', () => {
  const item = (text: string, x: number, font: string): TextItem => ({ text, x, y: 100, width: text.length * 5, size: 10, font, eol: false, artifact: false });

  it('reads a stretch of a math face as an inline formula, and leaves a line of thousands of math glyphs as text', () => {
    const reader: GlyphReader = { glyphsOf: (entry) => [{ ...entry, bold: false, italic: true }], readable: () => true };
    const short = buildSegments([item('Let ', 0, 'text'), item('x', 20, 'math'), item(' be.', 25, 'text')], []);
    const long = buildSegments([item('Then ', 0, 'text'), item('x'.repeat(2000), 25, 'math')], [], [], new Set());
    markInlineMath([...short, ...long], new Set(['math']), reader);
    expect(short[0]!.runs.filter((run) => run.math).map((run) => run.math)).toEqual(['x']);
    expect(long[0]!.runs.some((run) => run.math)).toBe(false);
  });

  it("leaves a contents line's leader dots as text though TeX draws them in a math face", () => {
    const reader: GlyphReader = { glyphsOf: (entry) => [{ ...entry, bold: false, italic: false }], readable: () => true };
    const [line] = buildSegments([item('1 Introduction ', 0, 'text'), item('. . . . . . . . . .', 80, 'math'), item(' 1', 180, 'text')], []);
    markInlineMath([line!], new Set(['math']), reader);
    expect(line!.runs.some((run) => run.math)).toBe(false);
    expect(line!.runs.map((run) => run.text).join('')).toBe('1 Introduction . . . . . . . . . . 1');
  });

  it("leaves an author's affiliation marks from TeX's symbol font as text, and a raised star beside a variable as mathematics", () => {
    const reader: GlyphReader = { glyphsOf: (entry) => [{ ...entry, bold: false, italic: false }], readable: () => true };
    const raised = (text: string, x: number, font: string): TextItem => ({ ...item(text, x, font), y: 103.5, size: 7, width: text.length * 3.5 });
    const [authors] = buildSegments(
      [item('Andreas Gal', 0, 'text'), raised('∗', 55, 'math'), raised('+', 59, 'text'), item(', Brendan Eich', 63, 'text'), raised('∗', 133, 'math')],
      [],
    );
    const [formula] = buildSegments([item('the dual ', 0, 'text'), item('V', 45, 'italic'), raised('∗', 50, 'math'), item(' of the space', 54, 'text')], []);
    markInlineMath([authors!, formula!], new Set(['math', 'italic']), reader);
    expect(authors!.runs.some((run) => run.math)).toBe(false);
    expect(authors!.runs.map((run) => run.text).join('')).toBe('Andreas Gal∗+, Brendan Eich∗');
    expect(formula!.runs.some((run) => run.math)).toBe(true);
  });
});
