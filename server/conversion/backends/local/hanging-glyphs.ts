import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { fontIdsWhere } from './font-styles.ts';
import type { PlacedGlyph } from './glyph-positions.ts';
import { AXIS } from './math-layout.ts';
import { type TextItem, withAccentsOnTheirLetters } from './text-layer.ts';

/**
 * TeX's extension font (cmex10, Latin Modern's lmex10) draws its big
 * delimiters and big operators hanging from their origin: the glyph's top
 * is at its baseline and all of it below, centred on the math axis of the
 * line it belongs to. Read as text, a \bigg( stands 1.4 em over its line, a
 * display ∑ 0.9 em over it: the line building takes it for a line of its
 * own, a formula's area reaches up to the prose above it, and a sum's limits
 * seem level with it. Seated on the baseline of the line it is centred on,
 * each is one more glyph of that line.
 */

/** TeX's symbol fonts, whose radical sign hangs as the extension font's glyphs do. */
const SYMBOL_FONT = /(?:^|\+)(?:CMSY\d|LMMathSymbols|lmsy\d|rm-lmsy)/i;

export function symbolFontIds(page: PDFPageProxy, items: { font: string }[]): Set<string> {
  return fontIdsWhere(page, items, (font) => SYMBOL_FONT.test(font.name ?? ''));
}

/** Extension fonts by name, subset prefix or not ("YMYJLL+CMEX10", "LMMathExtension10-Regular"). */
const EXTENSION_FONT = /(?:^|\+)(?:CMEX\d|LMMathExtension|lmex\d|rm-lmex)/i;

/** Hanging glyphs a page may have seated: a page of mathematics has a few hundred. */
const MAX_HANGING = 5_000;
/** How far over the baseline a hanging glyph's top stands: cmex's delimiters are 0.04 em tall, the rest of them is depth. */
const HEIGHT = 0.04;

/** Every height (top to bottom, in em) a glyph of the font comes in: its text sizes and display sizes. */
const DELIMITER_SIZES = [1.2, 1.8, 2.4, 3.0];
const SIZES = new Map<string, number[]>([
  ...[...'()[]{}⟨⟩〈〉⌊⌋⌈⌉/'].map((char): [string, number[]] => [char, DELIMITER_SIZES]),
  ...[...'∑∏∐⋃⋂⨁⨂⨀⨄⨆⋀⋁'].map((char): [string, number[]] => [char, [1.0, 1.4]]),
  ...[...'∫∮'].map((char): [string, number[]] => [char, [1.111, 2.222]]),
  // cmsy's radical, then cmex's four
  ['√', [1.0, 1.2, 1.8, 2.4, 3.0]],
]);
/**
 * cmex10's widths (em) of those sizes, where the glyphs differ in width: the width says which
 * size is drawn, so a matrix's parenthesis is not seated on its first row's line.
 */
const WIDTHS = new Map<string, number[]>([
  ...[...'()'].map((char): [string, number[]] => [char, [0.458, 0.597, 0.736, 0.792]]),
  ...[...'[]'].map((char): [string, number[]] => [char, [0.417, 0.472, 0.528, 0.583]]),
  ...[...'{}'].map((char): [string, number[]] => [char, [0.583, 0.667, 0.75, 0.806]]),
  ['∑', [1.056, 1.444]],
  ['∏', [0.944, 1.278]],
  ...[...'⋃⋂'].map((char): [string, number[]] => [char, [0.833, 1.111]]),
]);

/** The sizes a glyph this wide can be: the one its width names, else any. */
function sizesOf(glyph: string, widthEm: number): number[] | undefined {
  const sizes = SIZES.get(glyph);
  const index = WIDTHS.get(glyph)?.findIndex((width) => Math.abs(width - widthEm) <= 0.01) ?? -1;
  return sizes && index >= 0 ? [sizes[index]!] : sizes;
}

/**
 * Pieces TeX stacks into a delimiter taller than its biggest glyph (a
 * matrix's parentheses, a case split's brace, a norm's bars): the
 * delimiter they make and each piece's height. pdf.js spells the pieces with
 * Adobe's private-use code points (parenlefttp is U+F8EB).
 */
const PIECES = new Map<string, { delimiter: string; height: number }>([
  ['\uf8eb', { delimiter: '(', height: 1.8 }],
  ['\uf8ec', { delimiter: '(', height: 0.6 }],
  ['\uf8ed', { delimiter: '(', height: 1.8 }],
  ['\uf8f6', { delimiter: ')', height: 1.8 }],
  ['\uf8f7', { delimiter: ')', height: 0.6 }],
  ['\uf8f8', { delimiter: ')', height: 1.8 }],
  ['\uf8ee', { delimiter: '[', height: 1.8 }],
  ['\uf8ef', { delimiter: '[', height: 0.6 }],
  ['\uf8f0', { delimiter: '[', height: 1.8 }],
  ['\uf8f9', { delimiter: ']', height: 1.8 }],
  ['\uf8fa', { delimiter: ']', height: 0.6 }],
  ['\uf8fb', { delimiter: ']', height: 1.8 }],
  ['\uf8f1', { delimiter: '{', height: 0.9 }],
  ['\uf8f2', { delimiter: '{', height: 1.8 }],
  ['\uf8f3', { delimiter: '{', height: 0.9 }],
  ['\uf8fc', { delimiter: '}', height: 0.9 }],
  ['\uf8fd', { delimiter: '}', height: 1.8 }],
  ['\uf8fe', { delimiter: '}', height: 0.9 }],
  // the brace's extension serves both sides: the stack it is in says which
  ['\uf8f4', { delimiter: '', height: 0.3 }],
  ['∣', { delimiter: '|', height: 0.6 }],
  ['|', { delimiter: '|', height: 0.6 }],
  ['∥', { delimiter: '‖', height: 0.6 }],
  ['‖', { delimiter: '‖', height: 0.6 }],
]);

/** The page's fonts that are TeX extension fonts, from the names pdf.js loaded with the operator list. */
export function extensionFontIds(page: PDFPageProxy, items: { font: string }[]): Set<string> {
  return fontIdsWhere(page, items, (font) => EXTENSION_FONT.test(font.name ?? ''));
}

/**
 * cmex10's glyphs by code, from 0: what each one is. TeX Live's own ToUnicode for the font maps only the stacking
 * pieces (0x30-0x43, Adobe's private-use code points) and a few more, and pdf.js spells every other glyph by its code:
 * "P" for the text ∑, "Z" for the display ∫, "hnD" for \Bigl[ \Bigl\{ \Bigl\langle.
 */
const CMEX_CODES = [
  ...'()[]⌊⌋⌈⌉{}⟨⟩|‖/\\',
  ...'()()[]⌊⌋⌈⌉{}⟨⟩/\\',
  ...'()[]⌊⌋⌈⌉{}⟨⟩/\\/\\',
  ...Array.from({ length: 0x14 }, () => undefined),
  ...'⟨⟩⨆⨆∮∮⨀⨀⨁⨁⨂⨂∑∏∫⋃⋂⨄⋀⋁∑∏∫⋃⋂⨄⋀⋁∐∐',
  // wide hats and tildes (\widehat, \widetilde), as the spacing accents the text layer puts on their letters
  ...'ˆˆˆ˜˜˜',
  ...'[]⌊⌋⌈⌉{}√√√√',
  // the horizontal brace's tips as the presentation forms pdf.js gives them elsewhere: an underbrace's ends and an
  // overbrace's middle point down (math-layout.ts' braces)
  ...['', '', '', '‖', '↑', '↓', '︷', '︷', '︸', '︸', '⇑', '⇓'],
];

/**
 * The items of the extension fonts that pdf.js spells by glyph code (a run of such a font holds a letter or a control
 * character, which no glyph of the font is), spelled as the glyphs they draw. `drawn` is the extension fonts' glyphs
 * as the page draws them, in the items' space: a run of several glyphs (amsmath's \\iint, two integral signs kerned
 * into each other) becomes one item per glyph where it is drawn, and code 0x20 (\\biggl( ), which pdf.js takes for a
 * space and leaves out of the text, comes back as an item of its own.
 */
export function spellExtensionGlyphs(items: TextItem[], extensionFonts: Set<string>, drawn: readonly PlacedGlyph[] = []): TextItem[] {
  const byCode = new Set(
    items.filter((item) => extensionFonts.has(item.font) && /[A-Za-z\u0000-\u001f]/.test(item.codes ?? item.text)).map((item) => item.font),
  );
  if (byCode.size === 0) return items;
  const spell = (text: string) => [...text].map((char) => (char === ' ' ? char : (CMEX_CODES[char.codePointAt(0)!] ?? char))).join('');
  const spelled = items.flatMap((item): TextItem[] => {
    // a space between glyphs may be pdf.js's own, not the code of \Biggl(: spaces stay spaces (a control character,
    // whitespace to trim(), is a glyph's code: 0x0C is the vertical bar's piece)
    if (!byCode.has(item.font) || (item.codes ?? item.text).replaceAll(' ', '') === '') return [item];
    const { codes, ...rest } = item;
    const chars = [...(codes ?? item.text)].filter((char) => char !== ' ');
    const glyphs =
      chars.length > 1
        ? drawn.filter(
            (glyph) =>
              glyph.font === item.font && glyph.text !== ' ' && Math.abs(glyph.y - item.y) < 0.5 && glyph.x >= item.x - 0.5 && glyph.x <= item.x + item.width,
          )
        : [];
    if (glyphs.length !== chars.length) return [{ ...rest, text: spell(codes ?? item.text) }];
    return glyphs.map((glyph, index) => ({ ...rest, text: spell(chars[index]!), x: glyph.x, width: glyph.width }));
  });
  // glyphs the text content leaves out: code 0x20, and control codes pdf.js may drop (0x0C, a bar's piece)
  for (const glyph of drawn) {
    if (!byCode.has(glyph.font) || glyph.width <= 0) continue;
    const code = glyph.spaceCode ?? (glyph.text.length === 1 && glyph.text.codePointAt(0)! < 0x20 ? glyph.text.codePointAt(0) : undefined);
    const text = code === undefined ? undefined : CMEX_CODES[code];
    if (!text) continue;
    // unless the text content has it after all (a control code it kept, spelled above)
    const read = items.some(
      (item) =>
        item.font === glyph.font &&
        Math.abs(item.y - glyph.y) < 0.5 &&
        Math.abs(item.x - glyph.x) < 0.5 &&
        (item.codes !== undefined || item.text.trim() !== ''),
    );
    if (!read) spelled.push({ text, x: glyph.x, y: glyph.y, width: glyph.width, size: glyph.size, font: glyph.font, eol: false, artifact: false });
  }
  // a wide accent spelled here goes on its letter as the text layer's accents do
  return spelled.some((item) => item.text === 'ˆ' || item.text === '˜') ? withAccentsOnTheirLetters(spelled) : spelled;
}

/**
 * The items with each hanging glyph of an extension font seated on the
 * baseline of the line it is centred on: a glyph comes in a few heights, and
 * the one whose centre puts a baseline where a line beside it stands is the
 * one drawn. Stacked pieces become their one delimiter first. A glyph whose
 * width names its size (and a stack, whose height is its own) is seated by
 * that size when no line stands beside it; any other keeps its place.
 */
export function seatHangingGlyphs(items: TextItem[], extensionFonts: Set<string>, symbolFonts: Set<string> = new Set()): TextItem[] {
  if (extensionFonts.size === 0 && symbolFonts.size === 0) return items;
  // pdf.js runs neighbouring glyphs of one font together ("((" of two \Bigg parentheses): each is seated alone
  const split = items.flatMap((item) => (extensionFonts.has(item.font) && [...item.text.trim()].length > 1 ? glyphsOf(item) : [item]));
  // the symbol font's radical hangs as the extension font's glyphs do
  const isHanging = (item: TextItem) => extensionFonts.has(item.font) || (symbolFonts.has(item.font) && item.text.trim() === '√');
  const hanging = split.filter((item) => isHanging(item) && item.text.trim() !== '');
  // a page of mathematics hangs a few hundred; one that hangs more is left as drawn rather than searched glyph by glyph
  if (hanging.length === 0 || hanging.length > MAX_HANGING) return items;
  // the lines' items by their baseline rounded to a point: a glyph looks only at the rows its heights put a baseline on
  const rows = new Map<number, TextItem[]>();
  for (const item of items) {
    if (isHanging(item) || item.text.trim() === '' || item.rotated) continue;
    const row = Math.round(item.y);
    const list = rows.get(row);
    if (list) list.push(item);
    else rows.set(row, [item]);
  }
  const seated = new Map<TextItem, TextItem | null>();
  for (const stack of stacks(hanging)) {
    const first = stack[0]!;
    const size = first.size;
    const glyph = first.text.trim();
    let heights: number[];
    const top = first.y + HEIGHT * size;
    let text = glyph;
    if (stack.length > 1 || PIECES.has(glyph)) {
      const last = stack.at(-1)!;
      // a stack of the brace's extension alone does not say its side: left as drawn
      const delimiter = stack.map((piece) => PIECES.get(piece.text.trim())!.delimiter).find((candidate) => candidate !== '');
      if (!delimiter) continue;
      text = delimiter;
      heights = [(top - (last.y - (PIECES.get(last.text.trim())!.height - HEIGHT) * size)) / size];
    } else {
      const sizes = sizesOf(glyph, first.width / size);
      if (!sizes) continue;
      heights = sizes;
    }
    // a glyph whose width names its size needs no line beside it to say where its baseline is (a matrix opening a
    // formula stands beside its rows, its line's first glyph after its close)
    const line =
      (text === '√' ? radicandLine(first, heights, top, rows) : lineFor(first, heights, top, rows)) ??
      (heights.length === 1 && text !== '√' ? { baseline: top - (heights[0]! * size) / 2 - AXIS * size, height: heights[0]! } : undefined);
    if (!line) continue;
    const reach = { top, bottom: top - line.height * size };
    seated.set(first, { ...first, text, y: line.baseline, width: Math.max(...stack.map((piece) => piece.width)), reach });
    for (const piece of stack.slice(1)) seated.set(piece, null);
  }
  if (seated.size === 0) return items;
  const out: TextItem[] = [];
  for (const item of split) {
    const replaced = seated.get(item);
    if (replaced === undefined) out.push(item);
    else if (replaced !== null) out.push(replaced);
  }
  return out;
}

/** A run's glyphs as items of their own, the run's width shared among them (an extension font's glyphs of one size are one width). */
function glyphsOf(item: TextItem): TextItem[] {
  const chars = [...item.text.trim()];
  const step = item.width / chars.length;
  return chars.map((char, index) => ({ ...item, text: char, x: item.x + step * index, width: step }));
}

/** The baseline a glyph of one of these heights, hanging from `top`, is centred on, where a full-size line beside it stands there, and that height. */
function lineFor(glyph: TextItem, heights: number[], top: number, rows: Map<number, TextItem[]>): { baseline: number; height: number } | undefined {
  const size = glyph.size;
  const beside = (line: TextItem) =>
    Math.abs(line.size - size) <= size * 0.2 && line.x <= glyph.x + glyph.width + size * 2 && line.x + line.width >= glyph.x - size * 2;
  const reach = Math.ceil(size * 0.15);
  let best: { baseline: number; height: number; off: number } | undefined;
  for (const height of heights) {
    const baseline = top - (height * size) / 2 - AXIS * size;
    for (let row = Math.round(baseline) - reach; row <= Math.round(baseline) + reach; row++) {
      for (const line of rows.get(row) ?? []) {
        const off = Math.abs(line.y - baseline);
        if (beside(line) && off <= size * 0.15 && (!best || off < best.off)) best = { baseline: line.y, height, off };
      }
    }
  }
  return best;
}

/**
 * The line a radical sign stands on: a radical is not centred on the axis but set with its top at the rule over its
 * radicand, so its baseline is the highest line beside it at least half a size under its top, within its heights.
 */
function radicandLine(glyph: TextItem, heights: number[], top: number, rows: Map<number, TextItem[]>): { baseline: number; height: number } | undefined {
  const size = glyph.size;
  const deepest = Math.max(...heights);
  for (let row = Math.floor(top - size * 0.5); row >= Math.ceil(top - deepest * size); row--) {
    const line = (rows.get(row) ?? []).find(
      (item) => Math.abs(item.size - size) <= size * 0.3 && item.x <= glyph.x + glyph.width + size * 0.5 && item.x + item.width >= glyph.x,
    );
    if (!line) continue;
    // the sign reaches down past the baseline by its depth: the smallest height that does
    const height = [...heights].sort((a, b) => a - b).find((candidate) => top - candidate * size <= line.y) ?? deepest;
    return { baseline: line.y, height };
  }
  return undefined;
}

/** Hanging glyphs grouped into stacks: pieces one under the next at one x, each starting where the one above ends; any other glyph alone. */
function stacks(hanging: TextItem[]): TextItem[][] {
  const out: TextItem[][] = [];
  const sorted = [...hanging].sort((a, b) => b.y - a.y);
  const open: TextItem[][] = [];
  for (const item of sorted) {
    const piece = PIECES.get(item.text.trim());
    const stack = piece
      ? open.find((candidate) => {
          const last = candidate.at(-1)!;
          const lastPiece = PIECES.get(last.text.trim())!;
          const bottom = last.y - (lastPiece.height - HEIGHT) * last.size;
          return Math.abs(last.x - item.x) <= 0.5 && Math.abs(item.y + HEIGHT * item.size - bottom) <= item.size * 0.2;
        })
      : undefined;
    if (stack) stack.push(item);
    else {
      const fresh = [item];
      out.push(fresh);
      if (piece) open.push(fresh);
    }
  }
  return out;
}
