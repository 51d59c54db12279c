import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { OPS } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { OperatorList } from './drawing.ts';
import type { TextItem } from './text-layer.ts';

/**
 * Where each glyph of a page is drawn, from the operator list: pdf.js's text
 * content gives a run's start and its total width only, so a glyph inside a
 * run could only be guessed at (the run's width shared evenly, a wide "W"
 * and a narrow "i" alike). The operator list has every glyph's advance in its
 * font's units; with the text state (font matrix, size, character and word
 * spacing, horizontal scale, rise, text and line matrices) and the transform
 * in force, each glyph's origin and advance are exact, in page space.
 */

/**
 * One glyph as drawn: its Unicode, its origin and advance along the line, its size, the font's id (as text items name
 * it), and its code in the font where pdf.js took it for a space (the text content leaves such a glyph out).
 */
export type PlacedGlyph = { text: string; x: number; y: number; width: number; size: number; font: string; spaceCode?: number };

type Matrix = [number, number, number, number, number, number];
const IDENTITY: Matrix = [1, 0, 0, 1, 0, 0];
const multiply = ([a, b, c, d, e, f]: Matrix, [A, B, C, D, E, F]: Matrix): Matrix => [
  a * A + b * C,
  a * B + b * D,
  c * A + d * C,
  c * B + d * D,
  e * A + f * C + E,
  e * B + f * D + F,
];

type TextState = {
  ctm: Matrix;
  font: string;
  fontSize: number;
  fontMatrix: number[];
  charSpacing: number;
  wordSpacing: number;
  hScale: number;
  leading: number;
  rise: number;
};

/** pdf.js passes a matrix as an array or a typed array, depending on the operator and version. */
const isNumbers = (value: unknown): value is ArrayLike<number> => Array.isArray(value) || ArrayBuffer.isView(value);

type GlyphArg = { unicode?: string; width?: number; isSpace?: boolean; originalCharCode?: number } | number | null;

/**
 * The font matrix of each font the page uses (glyph units to text space: 1/1000 for most fonts, a Type 3
 * font's own), read from pdf.js's loaded fonts; a font not loaded has none and its glyphs are not placed.
 */
function fontAdvances(fontMatrixOf: (font: string) => number[] | undefined) {
  const known = new Map<string, number[] | undefined>();
  return (font: string) => {
    if (!known.has(font)) known.set(font, fontMatrixOf(font));
    return known.get(font);
  };
}

const placedByList = new WeakMap<OperatorList, PlacedGlyph[]>();

/**
 * The page's glyphs as drawn (readGlyphPositions with the fonts pdf.js loaded), read once per operator list: the
 * extension fonts' spelling and the formulas' reader both ask. Shared: callers do not change them.
 */
export function pageGlyphPositions(page: PDFPageProxy, list: OperatorList): readonly PlacedGlyph[] {
  let placed = placedByList.get(list);
  if (!placed) {
    placed = readGlyphPositions(list, (font) =>
      page.commonObjs.has(font) ? ((page.commonObjs.get(font) as { fontMatrix?: number[] } | null)?.fontMatrix ?? [0.001, 0, 0, 0.001, 0, 0]) : undefined,
    );
    placedByList.set(list, placed);
  }
  return placed;
}

/** Every horizontal glyph the page draws, in page space (y up), in drawing order. */
export function readGlyphPositions(list: OperatorList, fontMatrixOf: (font: string) => number[] | undefined): PlacedGlyph[] {
  const matrixOf = fontAdvances(fontMatrixOf);
  const out: PlacedGlyph[] = [];
  const stack: TextState[] = [];
  let state: TextState = {
    ctm: IDENTITY,
    font: '',
    fontSize: 0,
    fontMatrix: [0.001, 0, 0, 0.001, 0, 0],
    charSpacing: 0,
    wordSpacing: 0,
    hScale: 1,
    leading: 0,
    rise: 0,
  };
  let textMatrix: Matrix = IDENTITY;
  let lineMatrix: Matrix = IDENTITY;
  const moveLine = (tx: number, ty: number) => {
    lineMatrix = multiply([1, 0, 0, 1, tx, ty], lineMatrix);
    textMatrix = lineMatrix;
  };
  for (let index = 0; index < list.fnArray.length; index++) {
    const op = list.fnArray[index];
    const args = list.argsArray[index] as unknown[] | null;
    switch (op) {
      case OPS.save:
        stack.push({ ...state });
        break;
      case OPS.restore:
        state = stack.pop() ?? state;
        break;
      case OPS.transform:
        state.ctm = multiply(args as Matrix, state.ctm);
        break;
      case OPS.paintFormXObjectBegin:
        stack.push({ ...state });
        if (isNumbers(args?.[0])) state.ctm = multiply(Array.from(args[0]) as Matrix, state.ctm);
        break;
      case OPS.paintFormXObjectEnd:
        state = stack.pop() ?? state;
        break;
      case OPS.beginText:
        textMatrix = IDENTITY;
        lineMatrix = IDENTITY;
        break;
      case OPS.setFont: {
        const [font, size] = args as [string, number];
        state.font = font;
        state.fontSize = size;
        state.fontMatrix = matrixOf(font) ?? [];
        break;
      }
      case OPS.setCharSpacing:
        state.charSpacing = args![0] as number;
        break;
      case OPS.setWordSpacing:
        state.wordSpacing = args![0] as number;
        break;
      case OPS.setHScale:
        state.hScale = (args![0] as number) / 100;
        break;
      case OPS.setLeading:
        state.leading = args![0] as number;
        break;
      case OPS.setTextRise:
        state.rise = args![0] as number;
        break;
      case OPS.setTextMatrix:
        textMatrix = Array.from((isNumbers(args?.[0]) ? args[0] : args) as ArrayLike<number>) as Matrix;
        lineMatrix = textMatrix;
        break;
      case OPS.moveText:
        moveLine(args![0] as number, args![1] as number);
        break;
      case OPS.setLeadingMoveText:
        state.leading = -(args![1] as number);
        moveLine(args![0] as number, args![1] as number);
        break;
      case OPS.nextLine:
        moveLine(0, -state.leading);
        break;
      case OPS.showText: {
        const glyphs = (args?.[0] ?? []) as GlyphArg[];
        const scale = state.fontMatrix[0];
        if (scale === undefined || state.fontMatrix[1] !== 0 || state.fontSize === 0) break;
        const toPage = multiply(textMatrix, state.ctm);
        const size = Math.hypot(toPage[0], toPage[1]) * Math.abs(state.fontSize);
        // along the line only: a turned or mirrored run's glyphs are not placed (a negative size mirrors), but still advance the line
        const placed = Math.abs(toPage[1]) <= 1e-6 * Math.abs(toPage[0]) && toPage[0] > 0 && state.fontSize > 0;
        let x = 0;
        for (const glyph of glyphs) {
          if (typeof glyph === 'number') {
            x -= (glyph * state.fontSize) / 1000;
            continue;
          }
          if (!glyph) continue;
          const spacing = (glyph.isSpace ? state.wordSpacing : 0) + state.charSpacing;
          const advance = (glyph.width ?? 0) * scale * state.fontSize;
          const origin = x * state.hScale;
          if (placed)
            out.push({
              text: glyph.unicode ?? '',
              x: toPage[0] * origin + toPage[2] * state.rise + toPage[4],
              y: toPage[1] * origin + toPage[3] * state.rise + toPage[5],
              width: advance * state.hScale * toPage[0],
              size,
              font: state.font,
              ...(glyph.isSpace && glyph.originalCharCode !== undefined ? { spaceCode: glyph.originalCharCode } : {}),
            });
          x += advance + spacing;
        }
        textMatrix = multiply([1, 0, 0, 1, x * state.hScale, 0], textMatrix);
        break;
      }
    }
  }
  return out;
}

/**
 * Items holding an accent the text layer put on its letter (text-layer.ts), placed where the page draws that letter:
 * pdf.js gives a math accent (\\vec's arrow) no advance in its text content where the page has one, so the letter
 * drawn after it comes a few points left of where it stands ("take" and \\vec{v} ran together). `drawn` is in the
 * items' space.
 */
export function reseatAccented(items: TextItem[], drawn: readonly PlacedGlyph[]): TextItem[] {
  const byRow = new Map<number, PlacedGlyph[]>();
  for (const glyph of drawn) {
    const row = byRow.get(Math.round(glyph.y));
    if (row) row.push(glyph);
    else byRow.set(Math.round(glyph.y), [glyph]);
  }
  return items.map((item) => {
    const base = item.text.normalize('NFD').match(/^(\P{M})\p{M}+$/u)?.[1];
    if (!base) return item;
    const row = Math.round(item.y);
    const glyph = [...(byRow.get(row - 1) ?? []), ...(byRow.get(row) ?? []), ...(byRow.get(row + 1) ?? [])]
      .filter(
        (candidate) =>
          candidate.font === item.font && candidate.text === base && Math.abs(candidate.y - item.y) < 0.5 && Math.abs(candidate.x - item.x) < item.size,
      )
      .sort((a, b) => Math.abs(a.x - item.x) - Math.abs(b.x - item.x))[0];
    return glyph && Math.abs(glyph.x - item.x) > 0.5 ? { ...item, x: glyph.x, width: glyph.width } : item;
  });
}

export const SOFT_HYPHEN = '\u00AD';

/** Whether the page draws a glyph its font maps to the soft hyphen: a cheap look before placing every glyph. */
export function drawsSoftHyphen(list: OperatorList): boolean {
  for (let index = 0; index < list.fnArray.length; index++) {
    if (list.fnArray[index] !== OPS.showText) continue;
    const glyphs = ((list.argsArray[index] as unknown[] | null)?.[0] ?? []) as GlyphArg[];
    for (const glyph of glyphs) if (typeof glyph === 'object' && glyph?.unicode === SOFT_HYPHEN) return true;
  }
  return false;
}

/**
 * A line-end hyphen the font maps to the soft hyphen (LaTeX's tagging does, and word processors for an optional
 * hyphen) is drawn on the page, but pdf.js's text content leaves it out with its width, so "in-" over "cluding"
 * reads "in cluding". The item the drawn hyphen ends takes it back, as a hyphen the paragraphs then join across.
 * `hyphens` (the drawn soft hyphens) are in the items' space.
 */
export function restoreSoftHyphens(items: TextItem[], hyphens: readonly PlacedGlyph[]): TextItem[] {
  if (hyphens.length === 0) return items;
  return items.map((item) => {
    if (item.rotated || item.text.endsWith('-')) return item;
    const end = item.x + item.width;
    const hyphen = hyphens.find((glyph) => Math.abs(glyph.y - item.y) < 0.5 && Math.abs(glyph.x - end) < item.size * 0.2 && glyph.font === item.font);
    return hyphen ? { ...item, text: `${item.text}-`, width: hyphen.x + hyphen.width - item.x } : item;
  });
}
