import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { seatHangingGlyphs } from '../../server/conversion/backends/local/hanging-glyphs.ts';
import type { TextItem } from '../../server/conversion/backends/local/text-layer.ts';
import type { Block } from '../../server/conversion/model.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { convertLocally, inlineText } from '../helpers/local-pages.ts';

/**
 * TeX's extension font hangs its big delimiters and operators from their
 * origin, centred on the math axis of their line: seated on that line's
 * baseline, they are read as part of it.
 */

const SIZE = 10;
const item = (text: string, x: number, y: number, width: number, font = 'body'): TextItem => ({
  text,
  x,
  y,
  width,
  size: SIZE,
  font,
  eol: false,
  artifact: false,
});
const EXTENSION = new Set(['cmex']);

describe('glyphs of an extension font', () => {
  it('seats a \\bigg( on the line it is centred on, and a display sum on its own line', () => {
    // a \bigg( is 2.4 em tall: hanging from 0.04 em over the top, its middle is the axis of the line at y = 100
    const top = 100 + (0.25 + 1.2 - 0.04) * SIZE;
    const open = item('(', 20, top, 7.4, 'cmex');
    const sum = item('∑', 60, 200 + (0.25 + 0.7) * SIZE, 14.4, 'cmex');
    const items = [item('x =', 0, 100, 18), open, item('a + b', 28, 100, 25), item('n', 62, 212, 4), item('y =', 40, 200, 18), sum, item('z', 76, 200, 5)];
    const seated = seatHangingGlyphs(items, EXTENSION);
    expect(seated.find((entry) => entry.text === '(')).toMatchObject({ y: 100, x: 20 });
    expect(seated.find((entry) => entry.text === '∑')).toMatchObject({ y: 200 });
    // everything else as it was
    expect(seated.filter((entry) => entry.font !== 'cmex')).toEqual(items.filter((entry) => entry.font !== 'cmex'));
  });

  it('makes a stack of pieces (a matrix parenthesis: top, extension, bottom) one delimiter on its middle line', () => {
    // each end piece is 1.8 em tall, the extension 0.6 em: 4.2 em, centred on the axis of the line at y = 300
    const top = 300 + (0.25 + 2.1 - 0.04) * SIZE;
    const pieces = [
      item('\uf8eb', 10, top, 8.75, 'cmex'),
      item('\uf8ec', 10, top - 1.8 * SIZE, 8.75, 'cmex'),
      item('\uf8ed', 10, top - 2.4 * SIZE, 8.75, 'cmex'),
    ];
    const seated = seatHangingGlyphs(
      [...pieces, item('a b', 20, 300 + 1.2 * SIZE, 14), item('c d', 20, 300 - 1.2 * SIZE, 14), item('M =', -20, 300, 18)],
      EXTENSION,
    );
    const delimiters = seated.filter((entry) => entry.font === 'cmex');
    expect(delimiters).toEqual([expect.objectContaining({ text: '(', y: 300, x: 10 })]);
  });

  it('seats a glyph whose width names its size without a line beside it; leaves one that could be any size, and other fonts, alone', () => {
    // an angle bracket's sizes are not told apart by width: with no line at any of its heights' axes it stays
    const angle = item('〈', 20, 500, 6, 'cmex');
    const prose = item('(', 200, 500, 3.9);
    const items = [angle, prose, item('far below', 0, 400, 40)];
    expect(seatHangingGlyphs(items, EXTENSION)).toEqual(items);
    expect(seatHangingGlyphs(items, new Set())).toBe(items);
    // a \bigg( (0.736 em wide) is 2.4 em tall wherever it stands: the first glyph of a formula of matrices
    const [seated] = seatHangingGlyphs([item('(', 20, 500, 7.36, 'cmex')], EXTENSION);
    expect(seated!.y).toBeCloseTo(500 + (0.04 - 1.2 - 0.25) * SIZE, 5);
    expect(seated!.reach).toEqual({ top: 500 + 0.04 * SIZE, bottom: 500 + (0.04 - 2.4) * SIZE });
  });

  it('seats each of the glyphs pdf.js ran together ("((" of two parentheses)', () => {
    const top = 100 + (0.25 + 1.2 - 0.04) * SIZE;
    const seated = seatHangingGlyphs([item('((', 0, top, 14.72, 'cmex'), item('a', 16, 100, 5)], EXTENSION);
    expect(seated.map((entry) => [entry.text, entry.x, entry.y])).toEqual([
      ['(', 0, 100],
      ['(', 7.36, 100],
      ['a', 16, 100],
    ]);
  });
});

describe('display formulas with big delimiters and operators (geotopo-117-pages.pdf, pdfTeX with cmex10)', () => {
  const blocksOf = async (page: number) => {
    const bytes = new Uint8Array(readFileSync(path.join(CORPUS_DIR, 'geotopo-117-pages.pdf')));
    const { pages } = await convertLocally(bytes, { name: 'geotopo-117-pages.pdf', pages: [page] });
    return pages[0]!.blocks;
  };
  const convert = async (page: number) =>
    (await blocksOf(page)).filter((block): block is Extract<Block, { kind: 'formula' }> => block.kind === 'formula').map((block) => block.tex);

  it("keeps a matrix's last denominators in its formula, not in a paragraph after it (p.34)", async () => {
    const blocks = await blocksOf(34);
    const jacobian = blocks.find((block) => block.kind === 'formula' && block.tex?.startsWith('J_{F}(u,v)=\\begin{pmatrix}\\frac'));
    expect(jacobian).toMatchObject({ text: expect.stringMatching(/∂z \(p\) ∂z\(p\) ∂u ∂v$/) });
    expect(blocks.filter((block) => block.kind === 'paragraph' && inlineText(block.content).trim() === '∂u ∂v')).toEqual([]);
  });

  it('reads the vectors in big parentheses of p.92 as formulas, none taking a line of prose or a neighbour script', async () => {
    const tex = await convert(92);
    expect(tex).toEqual(
      expect.arrayContaining([
        // the condition set after the display on its line is the formula's, as text
        '\\gamma(t)=(r\\cdot\\cos\\frac{t}{r},r\\cdot\\sin\\frac{t}{r})\\text{ für }t\\in[0,2\\pi r]',
        '=(-\\sin\\frac{t}{r},\\cos\\frac{t}{r})',
        'n(t)=(-\\cos\\frac{t}{r},-\\sin\\frac{t}{r})',
        '\\|n(t)\\|=\\|(-\\cos\\frac{t}{r},-\\sin\\frac{t}{r})\\|',
        '=(-\\sin\\frac{t}{r})^{2}-(-\\cos\\frac{t}{r})\\cdot\\cos\\frac{t}{r}',
        '=\\frac{1}{r}\\cdot(-\\cos\\frac{t}{r},-\\sin\\frac{t}{r})',
      ]),
    );
  });

  it('reads matrices: the Jacobian of p.36 with fractions in its cells, the products of p.86, the column vectors of p.111', async () => {
    expect(await convert(36)).toContain(
      '\\det\\begin{pmatrix}\\frac{\\partial x}{\\partial u}&\\frac{\\partial x}{\\partial v}\\\\\\frac{\\partial y}{\\partial u}&\\frac{\\partial y}{\\partial v}\\end{pmatrix}(v_{0})\\neq0',
    );
    expect(await convert(86)).toContain(
      '\\begin{pmatrix}a&b\\\\c&d\\end{pmatrix}\\cdot\\begin{pmatrix}\\frac{1}{a}&0\\\\0&a\\end{pmatrix}=\\begin{pmatrix}1&ab\\\\\\frac{c}{a}&ad\\end{pmatrix}',
    );
    // the page prints b_3 in the middle of both vectors
    expect(await convert(111)).toContain(
      'a\\times b:=\\begin{pmatrix}a_{1}\\\\b_{3}\\\\a_{3}\\end{pmatrix}\\times\\begin{pmatrix}a_{1}\\\\b_{3}\\\\a_{3}\\end{pmatrix}=\\begin{pmatrix}a_{2}b_{3}-a_{3}b_{2}\\\\a_{3}b_{1}-a_{1}b_{3}\\\\a_{1}b_{2}-a_{2}b_{1}\\end{pmatrix}',
    );
  });

  it('reads the case split of p.10 with its conditions in words', async () => {
    expect(await convert(10)).toContain('d(x,y)=\\begin{cases}0&\\text{ falls }x=y\\\\1&\\text{ falls }x\\neq y\\end{cases}');
  });

  it('gives the display sums and integrals of p.99 their limits, and the summands their scripts', async () => {
    const tex = await convert(99);
    expect(tex).toEqual(expect.arrayContaining(['\\int_{S}fdA=\\sum_{i=1}^{n}\\int_{V_{i}}fdA', '-\\sum_{i\\neq j}\\int_{V_{i}\\cap V_{j}}fdA']));
  });
});
