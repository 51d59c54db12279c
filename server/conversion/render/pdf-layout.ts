import bidiModule from 'bidi-js';
import { FONTS, faceInfo, fontkitReverses, fontRuns, type FontStyle } from './pdf-fonts.ts';
import { isRtl } from './text.ts';

type Doc = PDFKit.PDFDocument;

// bidi-js is CommonJS whose module.exports is the factory, while its typings declare it as `default`.
const bidi = (bidiModule as unknown as typeof bidiModule.default)();

export type StyledRun = { text: string; font: FontStyle; link?: string; lang?: string };

export type LineLayout = {
  width: number;
  lineGap: number;
  /** Absent: right-to-left paragraphs align right, others left. */
  align?: 'left' | 'right' | 'center';
  /** The text's language: a right-to-left one makes every paragraph right-to-left, and it orders the CJK faces. */
  lang?: string;
};

/** One stretch of a line drawn with one face at one bidi level; x is from the line's left edge. */
type Piece = { run: number; text: string; font: string; x: number; features?: [] };
type Line = { pieces: Piece[]; ascent: number; height: number; mixed: boolean };

// Formatting characters steer the bidi algorithm but have no glyph to draw.
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const SPACE = /\s/;
// Ideographs and kana may break anywhere, but not before closing punctuation and small kana
// nor after opening brackets (the basic kinsoku rules).
const BREAK_ANYWHERE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u3000-\u303f\uff00-\uffef]/u;
const NO_LINE_START = /[、。，．,.:;!?)\]}｝〕〉》」』】〙〗〟’”ー々ぁぃぅぇぉっゃゅょゎゕゖァィゥェォッャュョヮヵヶ・：；！？）]/u;
const NO_LINE_END = /[([{｛〔〈《「『【〘〖〝‘“（]/u;
// Thai writes no spaces between words; the platform's dictionary finds where words end.
const THAI = /\p{Script=Thai}/u;

/**
 * Text that pdfkit cannot lay out itself: runs whose characters DejaVu lacks (CJK, Thai,
 * Devanagari) or that run right to left. Each run is split by face (pdf-fonts.ts), lines are
 * broken here, and each line is reordered with the Unicode bidi algorithm and drawn piece by
 * piece in visual order, shaped by fontkit. Visual order is what most PDF producers write and
 * what extractors expect: pdftotext and pdf.js turn right-to-left runs back into logical order
 * (a content-order alternative tried here scrambled pdftotext's spacing and split pdf.js's text
 * into single glyphs). Readers that follow content order get the logical text from /ActualText,
 * which callers set. Glyph-level limit: a lam-alef ligature or a mirrored bracket is one glyph
 * with one Unicode mapping, which extractors reverse along with the line, so its letters come
 * out swapped; only /ActualText has them right.
 */
export class ScriptText {
  readonly height: number;
  #doc: Doc;
  #runs: StyledRun[];
  #size: number;
  #lines: Line[];
  #tops: (number | undefined)[] = [];
  #cursor: number | undefined;
  #x = 0;
  #clipBottom: number | undefined;

  constructor(doc: Doc, runs: StyledRun[], size: number, layout: LineLayout) {
    this.#doc = doc;
    this.#runs = runs;
    this.#size = size;
    let text = '';
    const runOf: number[] = [];
    const fontOf: string[] = [];
    runs.forEach((run, r) => {
      for (const part of fontRuns(run.text, run.font, run.lang ?? layout.lang)) {
        text += part.text;
        for (let k = 0; k < part.text.length; k++) {
          runOf.push(r);
          fontOf.push(part.font);
        }
      }
    });
    const levels = bidi.getEmbeddingLevels(text, isRtl(layout.lang) ? 'rtl' : undefined);
    const measure = (start: number, end: number): number => {
      let width = 0;
      for (let a = start; a < end; ) {
        let b = a + 1;
        while (b < end && fontOf[b] === fontOf[a]) b++;
        width += this.#width(text.slice(a, b), fontOf[a]!);
        a = b;
      }
      return width;
    };
    this.#lines = breakLines(text, measure, layout.width).map(([start, end]) => {
      let stop = end;
      while (stop > start && SPACE.test(text[stop - 1]!)) stop--;
      const paragraphLevel = levels.paragraphs.find((p: { start: number; end: number }) => start >= p.start && start <= p.end)?.level ?? 0;
      const { pieces, levels: pieceLevels } = this.#pieces(text, levels, runOf, fontOf, start, stop);
      const lineWidth = pieces.reduce((sum, p) => sum + p.x, 0);
      const align = layout.align ?? (paragraphLevel % 2 === 1 ? 'right' : 'left');
      let x = align === 'right' ? layout.width - lineWidth : align === 'center' ? (layout.width - lineWidth) / 2 : 0;
      for (const piece of pieces) {
        const width = piece.x;
        piece.x = x;
        x += width;
      }
      const fonts = pieces.length > 0 ? [...new Set(pieces.map((p) => p.font))] : [FONTS[runs[runOf[start] ?? 0]?.font ?? 'regular']];
      const metrics = fonts.map(faceInfo);
      const ascent = (Math.max(...metrics.map((m) => m.ascender)) * size) / 1000;
      const height = (Math.max(...metrics.map((m) => m.ascender - m.descender + m.lineGap)) * size) / 1000 + layout.lineGap;
      return { pieces, ascent, height, mixed: paragraphLevel % 2 === 0 && pieceLevels.some((level) => level % 2 === 1) };
    });
    this.height = this.#lines.reduce((sum, line) => sum + line.height, 0);
  }

  #width(text: string, font: string): number {
    // Word by word, which pdfkit caches per document: shaping does not cross spaces, and the
    // total advance does not depend on the order the words are laid out in.
    return this.#doc.font(font).fontSize(this.#size).widthOfString(text);
  }

  /** A line's pieces in visual order; each piece's x holds its width until the line is aligned. */
  #pieces(
    text: string,
    levels: ReturnType<typeof bidi.getEmbeddingLevels>,
    runOf: number[],
    fontOf: string[],
    start: number,
    stop: number,
  ): { pieces: Piece[]; levels: number[] } {
    const order: number[] = [];
    for (let i = start; i < stop; i++) order.push(i);
    if (stop > start) {
      for (const [a, b] of bidi.getReorderSegments(text, levels, start, stop - 1) as [number, number][]) {
        order.splice(a - start, b - a + 1, ...order.slice(a - start, b - start + 1).reverse());
      }
    }
    const spans: { a: number; b: number; level: number }[] = [];
    for (const i of order) {
      const level = levels.levels[i]!;
      const span = spans.at(-1);
      const rtl = level % 2 === 1;
      if (span && span.level === level && runOf[span.a] === runOf[i] && fontOf[span.a] === fontOf[i] && (rtl ? i === span.a - 1 : i === span.b)) {
        if (rtl) span.a = i;
        else span.b = i + 1;
      } else {
        spans.push({ a: i, b: i + 1, level });
      }
    }
    const pieces: Piece[] = [];
    const pieceLevels: number[] = [];
    for (const { a, b, level } of spans) {
      const rtl = level % 2 === 1;
      let logical = text.slice(a, b);
      if (rtl) logical = Array.from(logical, (ch) => bidi.getMirroredCharacter(ch) ?? ch).join('');
      logical = logical.replace(BIDI_CONTROLS, '');
      if (logical === '') continue;
      // fontkit shapes a string in logical order and reverses it itself when it starts with a
      // right-to-left script; anything else it leaves, so that is where we reverse. Such a piece
      // is drawn shaped whole (features given): pdfkit otherwise shapes word by word and lays the
      // words out left to right.
      const reverses = fontkitReverses(logical);
      const draw = rtl !== reverses ? Array.from(logical).reverse().join('') : logical;
      const font = fontOf[a]!;
      pieces.push({ run: runOf[a]!, text: draw, font, x: this.#width(draw, font), ...(reverses ? { features: [] as [] } : {}) });
      pieceLevels.push(level);
    }
    return { pieces, levels: pieceLevels };
  }

  /**
   * Closures that draw one run's pieces at left edge x, lines flowing down from the current
   * position onto new pages as needed; each becomes one marked-content item. Runs must be drawn
   * in order (a paragraph's runs are drawn one structure element at a time); the last run's
   * last closure leaves the position below the text.
   */
  parts(x: number, run: number): (() => void)[] {
    const groups: { line: number; piece: Piece }[][] = [];
    this.#lines.forEach((line, l) => {
      for (const piece of line.pieces) {
        if (piece.run !== run) continue;
        const last = groups.at(-1);
        // pdf.js joins touching pieces into one string and guesses its direction from the share of
        // right-to-left letters, which scrambles a right-to-left phrase in a left-to-right line;
        // there each piece gets its own marked content, which pdf.js keeps apart.
        if (last && !line.mixed && !this.#lines[last[0]!.line]!.mixed) last.push({ line: l, piece });
        else groups.push([{ line: l, piece }]);
      }
    });
    const parts = groups.map((group) => () => {
      this.#x = x;
      for (const { line, piece } of group) this.#drawPiece(line, piece);
    });
    if (run === this.#runs.length - 1) {
      const last = parts.pop();
      parts.push(() => {
        this.#x = x;
        last?.();
        this.#finish();
      });
    }
    return parts;
  }

  /** Draws everything in a fixed box without breaking pages, leaving out lines that do not fit (table cells, running headers). */
  drawIn(x: number, y: number, maxHeight: number): void {
    this.#x = x;
    this.#cursor = y;
    this.#clipBottom = y + maxHeight;
    this.#lines.forEach((line, l) => line.pieces.forEach((piece) => this.#drawPiece(l, piece)));
    this.#finish();
  }

  #drawPiece(l: number, piece: Piece): void {
    const doc = this.#doc;
    const line = this.#lines[l]!;
    const top = this.#place(l);
    if (top === undefined) return;
    const link = this.#runs[piece.run]!.link;
    doc.font(piece.font).fontSize(this.#size);
    // A numeric baseline puts every face's baseline at the line's, whatever its ascent.
    doc.text(piece.text, this.#x + piece.x, top, {
      lineBreak: false,
      baseline: -line.ascent,
      ...(piece.features ? { features: piece.features } : {}),
      ...(link ? { link } : {}),
    });
  }

  /** The top of line l, placing the lines before it first; undefined when it falls outside the clip box. */
  #place(l: number): number | undefined {
    const doc = this.#doc;
    while (this.#tops.length <= l) {
      const line = this.#lines[this.#tops.length]!;
      let top = this.#cursor ?? doc.y;
      if (this.#clipBottom !== undefined) {
        this.#tops.push(top + line.height <= this.#clipBottom ? top : undefined);
      } else {
        if (top + line.height > doc.page.height - doc.page.margins.bottom && top > doc.page.margins.top) {
          doc.continueOnNewPage();
          top = doc.y;
        }
        this.#tops.push(top);
      }
      this.#cursor = top + line.height;
    }
    return this.#tops[l];
  }

  #finish(): void {
    if (this.#lines.length > 0) this.#place(this.#lines.length - 1);
    const doc = this.#doc;
    doc.x = this.#x;
    if (this.#cursor !== undefined) doc.y = this.#cursor;
    doc.font(FONTS.regular);
  }
}

/** Where lines may end: after spaces, around ideographs and kana, between Thai words; '\n' forces an end. */
function breakLines(text: string, measure: (start: number, end: number) => number, width: number): [number, number][] {
  const lines: [number, number][] = [];
  let start = 0;
  for (const hard of text.split('\n')) {
    const end = start + hard.length;
    breakParagraph(text, start, end, measure, width, lines);
    start = end + 1;
  }
  return lines;
}

function breakParagraph(text: string, start: number, end: number, measure: (a: number, b: number) => number, width: number, lines: [number, number][]): void {
  const thaiBreaks = new Set<number>();
  const slice = text.slice(start, end);
  if (THAI.test(slice)) for (const { index } of new Intl.Segmenter('th', { granularity: 'word' }).segment(slice)) thaiBreaks.add(start + index);
  const opportunities: number[] = [];
  for (let i = start + 1; i < end; i++) {
    const before = text[i - 1]!;
    const after = text[i]!;
    if (SPACE.test(after) || /[\udc00-\udfff]/.test(after)) continue;
    const pair = text.slice(Math.max(start, i - 2), i);
    const prev = /[\ud800-\udbff][\udc00-\udfff]$/.test(pair) ? pair : before;
    const next = text.codePointAt(i)! > 0xffff ? text.slice(i, i + 2) : after;
    if (SPACE.test(before)) opportunities.push(i);
    else if ((BREAK_ANYWHERE.test(prev) || BREAK_ANYWHERE.test(next)) && !NO_LINE_START.test(next) && !NO_LINE_END.test(prev)) opportunities.push(i);
    else if (thaiBreaks.has(i) && THAI.test(prev) && THAI.test(next)) opportunities.push(i);
  }
  opportunities.push(end);
  let lineStart = start;
  let used = 0;
  let wordStart = start;
  for (const wordEnd of opportunities) {
    let trimmed = wordEnd;
    while (trimmed > wordStart && SPACE.test(text[trimmed - 1]!)) trimmed--;
    const wordWidth = measure(wordStart, trimmed);
    if (used > 0 && used + wordWidth > width) {
      lines.push([lineStart, wordStart]);
      lineStart = wordStart;
      used = 0;
    }
    if (wordWidth > width) {
      // A word wider than the line is cut between graphemes.
      for (const { index, segment } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text.slice(wordStart, trimmed))) {
        const at = wordStart + index;
        const w = measure(at, at + segment.length);
        if (used > 0 && used + w > width) {
          lines.push([lineStart, at]);
          lineStart = at;
          used = 0;
        }
        used += w;
      }
    } else {
      used += wordWidth;
    }
    used += measure(trimmed, wordEnd);
    wordStart = wordEnd;
  }
  lines.push([lineStart, end]);
}
