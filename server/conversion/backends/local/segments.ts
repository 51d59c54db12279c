import type { Rule } from './drawing.ts';
import type { Run } from './inline.ts';
import { type Gutter, narrowGutters, stripOf } from './gutters.ts';
import type { Reach, TextItem } from './text-layer.ts';

type Line = { y: number; size: number; items: TextItem[] };

/**
 * The first pass over an untagged page: text items grouped into lines
 * (baselines within half a line) and lines cut into segments where the gap
 * is wider than a word space (column gutters, table cells) or where a drawn
 * vertical rule runs between two items (a cell border: table cells are often
 * set closer than a column gutter). Every later pass works on segments.
 */

/** `fonts`: every font its text is set in (a line wholly bold, or bold only in part); `font` is that of most of it. */
export type Segment = {
  x: number;
  right: number;
  y: number;
  size: number;
  font: string;
  text: string;
  runs: Run[];
  fonts?: string[];
  rotated?: boolean;
  /** set slanting (TextItem's `slanted`) */
  slanted?: boolean;
  /** a display formula gathered from several lines (limits, numerator, denominator): their baselines */
  lines?: number[];
  /** where the big delimiters and operators in it reach, over and under its line */
  reach?: Reach;
  /** every letter of it is set in a math font (buildSegments' `mathFonts`): its letters are variables, not words */
  mathLetters?: true;
  /** the narrow gutters the page's lines leave open (gutters.ts), one list for the page: columns however narrow */
  gutters?: readonly Gutter[];
  /** as built, the text item each run was read from, run by run (inline-math.ts reads their glyphs) */
  items?: TextItem[];
};
export type LinkArea = { href: string; rect: [number, number, number, number] };

export function buildSegments(items: TextItem[], links: LinkArea[], rules: Rule[] = [], mathFonts: Set<string> = new Set()): Segment[] {
  const walls = rules.filter((rule) => rule.x1 === rule.x2);
  const usable = items.filter((item) => !item.artifact && item.text !== '' && item.size > 0);
  usable.sort((a, b) => b.y - a.y || a.x - b.x);
  // 1. lines: items whose baselines are within half a line of each other; where narrow gutters run down the page (a
  // newspaper's OCR layer), within each column's stretch, so no line takes words of two columns
  let lines = linesOf(usable);
  const gutters = narrowGutters(lines);
  if (gutters.length > 0) {
    const strips = new Map<string, TextItem[]>();
    for (const item of usable) {
      const key = stripOf(item, gutters);
      const strip = strips.get(key);
      if (strip) strip.push(item);
      else strips.set(key, [item]);
    }
    lines = [...strips.values()].flatMap(linesOf).sort((a, b) => b.y - a.y || a.items[0]!.x - b.items[0]!.x);
  }
  // a reference mark follows a word or its stop ("line.", "(CoA)."), alone at its height: not an entry of a matrix's
  // row after "("
  const marks = (items: TextItem[], mark: TextItem, size: number) =>
    items.some(
      (other) =>
        /[\p{L}\p{N}.,;:)\]’”]$/u.test(other.text.trimEnd()) && mark.x >= other.x + other.width - size * 0.2 && mark.x <= other.x + other.width + size * 0.3,
    );
  const alone = (items: TextItem[], mark: TextItem, size: number) =>
    !items.some(
      (other) => other !== mark && other.text.trim() !== '' && other.x < mark.x + mark.width + size * 1.5 && other.x + other.width > mark.x - size * 1.5,
    );
  // a superscript at the end of a word in one column can fall within half a line of the other column's baseline
  // above: it belongs to the line just below it, beside whose text it sits; so does a reference mark raised more than
  // its line's script height, right after the end of a word of the line below and after nothing of its own line
  // ("coexists with one cell line.^{5,6}" beside the other column's line)
  for (let index = 0; index + 1 < lines.length; index++) {
    const line = lines[index]!;
    const next = lines[index + 1]!;
    const moved = line.items.filter(
      (item) =>
        item.size < line.size * 0.9 &&
        item.y - next.y > 0 &&
        item.y - next.y <= next.size * 0.6 &&
        ((line.y - item.y > line.size * 0.3 && next.items.some((other) => item.x >= other.x - next.size && item.x <= other.x + other.width + next.size)) ||
          (REFERENCE_MARK.test(item.text.trim()) && marks(next.items, item, next.size) && alone(line.items, item, line.size))),
    );
    if (moved.length === 0) continue;
    line.items = line.items.filter((item) => !moved.includes(item));
    next.items.push(...moved);
  }
  lines = lines.filter((line) => line.items.some((item) => item.text.trim() !== ''));
  // 2. segments: a line cut where the horizontal gap is wider than a word space (column gutters, table cells), save
  // where a big operator's script on a line just below or above fills it (the domain under a display's ∫)
  // the page's glyphs by baseline rounded to a point, so a gap looks only at the rows a line's height away
  const byRow = new Map<number, TextItem[]>();
  for (const item of usable) {
    if (item.text.trim() === '') continue;
    const row = byRow.get(Math.round(item.y));
    if (row) row.push(item);
    else byRow.set(Math.round(item.y), [item]);
  }
  const segments: Segment[] = [];
  // per segment: whether every item with letters so far is in a math font
  const mathLettered = new Map<Segment, boolean>();
  const noteLetters = (segment: Segment, item: TextItem) => {
    if (/\p{L}/u.test(item.text)) mathLettered.set(segment, (mathLettered.get(segment) ?? true) && mathFonts.has(item.font));
  };
  const segmentsByLine: { line: Line; segments: Segment[] }[] = [];
  for (const line of lines) {
    const first = segments.length;
    const rtl = isRightToLeftText(line.items.map((item) => item.text).join(''));
    line.items = rtl ? rightToLeft(line.items) : line.items.sort((a, b) => a.x - b.x);
    let current: Segment | undefined;
    let longest = 0;
    let before: TextItem | undefined;
    for (const item of line.items) {
      // pdf.js writes a wide gap as a space item of that width; the gap to the next item says whether it is a cell or
      // column boundary (a browser's space may reach over the next item: a superscript's end to "+" in e^{iπ} + 1)
      if (item.text.trim() === '' && item.width > line.size * 1.1) continue;
      const previous = before;
      before = item;
      // a right-to-left line is read from its right edge: the gap is to the item read before, on either side
      const [from, to] =
        !rtl || !previous ? [current?.right ?? 0, item.x] : item.x >= previous.x ? [previous.x + previous.width, item.x] : [item.x + item.width, previous.x];
      const gap = current ? to - from : 0;
      const walled = current !== undefined && walls.some((wall) => isBetween(wall, Math.min(from, to), Math.max(from, to), line.y, line.size));
      const wordGap = gap < Math.min(line.size, Math.max(item.size, line.size * 0.7)) * 0.9;
      if (
        current &&
        !walled &&
        (wordGap || scriptInGap(byRow, line, from, to) || (wordsApart(current, item, mathFonts) && justifiedGap(byRow, line, from, to))) &&
        gap > -line.size &&
        // a gap a word space wide at the line's largest type may be a column's gutter still (a list's marker before its
        // text leaves a gap the lines below repeat too: a column is wider than a marker)
        !(gap > line.size * 0.5 && current.right - current.x > line.size * 4 && gutterThrough(byRow, line, from, to))
      ) {
        const needsSpace = gap > item.size * 0.15 && !/\s$/.test(current.text) && !/^\s/.test(item.text);
        const text = (needsSpace ? ' ' : '') + item.text;
        current.text += text;
        current.x = Math.min(current.x, item.x);
        current.right = Math.max(current.right, item.x + item.width);
        const script = scriptOf(item, line);
        current.runs.push({ text, href: hrefAt(links, item), ...script });
        current.items!.push(item);
        if (item.text.trim() !== '' && !current.fonts!.includes(item.font)) current.fonts!.push(item.font);
        if (item.reach)
          current.reach = current.reach
            ? { top: Math.max(current.reach.top, item.reach.top), bottom: Math.min(current.reach.bottom, item.reach.bottom) }
            : item.reach;
        noteLetters(current, item);
        // a segment's size is that of most of its text on its baseline (a superscript or a drop cap must not set it); a
        // check box or bullet glyph before it, bigger than its text, sets nothing (its line, joined with a line across
        // the gutter a few points off, may make the text look lowered)
        const marked = !/[\p{L}\p{N}]/u.test(current.text.slice(0, -text.length));
        if (item.text.trim().length > longest && (longest === 0 || (marked && /\p{L}/u.test(item.text)) || (!script.sup && !script.sub))) {
          longest = item.text.trim().length;
          current.size = item.size;
          current.font = item.font;
        }
        continue;
      }
      longest = item.text.trim().length;
      current = {
        x: item.x,
        right: item.x + item.width,
        y: line.y,
        size: item.size,
        font: item.font,
        text: item.text,
        runs: [{ text: item.text, href: hrefAt(links, item), ...scriptOf(item, line) }],
        items: [item],
        fonts: item.text.trim() === '' ? [] : [item.font],
        ...(item.rotated ? { rotated: true } : {}),
        ...(item.slanted ? { slanted: true } : {}),
        ...(item.reach ? { reach: item.reach } : {}),
      };
      noteLetters(current, item);
      segments.push(current);
    }
    segmentsByLine.push({ line, segments: segments.slice(first) });
  }
  withOwnBaselines(segmentsByLine);
  for (const segment of segments) {
    segment.text = segment.text.trim();
    if (mathLettered.get(segment)) segment.mathLetters = true;
  }
  const kept = segments.filter((segment) => segment.text !== '');
  if (gutters.length > 0) for (const segment of kept) segment.gutters = gutters;
  return kept;
}

/**
 * Segments stand on their own text's baselines, not on their lines': a line
 * is gathered across the page within half a line, and columns set at
 * different pitches (a sidebar beside the text, a two-column paper whose
 * columns drift apart after a heading or a display) meet on lines a few
 * points off their own. Within a column the gaps between lines then say
 * where a paragraph ends. Only a clear step from the line's baseline moves a
 * segment, and only on a page whose words sit on their baselines: an OCR
 * layer's words jitter about theirs, and its segments keep their lines'.
 */
function withOwnBaselines(lines: { line: Line; segments: Segment[] }[]): void {
  // each segment's baselines: those of its items of its size (a script does not count)
  const baselines = new Map(
    lines.flatMap(({ segments }) =>
      segments.map((segment) => [
        segment,
        (segment.items ?? []).filter((item) => Math.abs(item.size - segment.size) <= 0.5 && item.text.trim() !== '').map((item) => item.y),
      ]),
    ),
  );
  const several = [...baselines].filter(([, ys]) => ys.length >= 2);
  const jittery = several.filter(([segment, ys]) => Math.max(...ys) - Math.min(...ys) > segment.size * 0.1);
  if (jittery.length > several.length * 0.2) return;
  for (const { line, segments } of lines) {
    if (segments.length < 2) continue;
    for (const segment of segments) {
      const ys = baselines.get(segment)!;
      const own = ys.length > 0 ? Math.max(...ys) : line.y;
      if (Math.abs(own - line.y) > segment.size * 0.15) segment.y = own;
    }
  }
}

/** A note's or a reference's mark set as a superscript: numbers, ranges and lists of them, or a dagger. */
export const REFERENCE_MARK = /^(?:\d[\d,–\-−]{0,11}|[*†‡§])$/u;

/** What a script of a mathematical symbol holds: a few letters, digits and signs (k=1, N, n+1, i′). */
const SCRIPT = /^[\p{Script=Latin}\p{Script=Greek}\p{N}=+\-−,′*]{1,4}$/u;

export const RTL_LETTER = /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}]/u;
const LETTER = /\p{L}/u;

/** Text is right-to-left when right-to-left letters are most of its strong letters (the bidi algorithm's paragraph level, by count). */
export function isRightToLeftText(text: string): boolean {
  // most lines of most pages hold no right-to-left letter at all: one scan settles them
  if (!RTL_LETTER.test(text)) return false;
  let rtl = 0;
  let ltr = 0;
  for (const char of text) {
    if (RTL_LETTER.test(char)) rtl++;
    else if (LETTER.test(char)) ltr++;
  }
  return rtl > 0 && rtl >= ltr;
}

/**
 * A right-to-left line's items in reading order: from the right edge
 * leftwards, save that a run of left-to-right items (a Latin word, a number,
 * with the spaces and punctuation between them) keeps its own left-to-right
 * order inside the line, as the bidi algorithm's levels do. pdf.js already
 * gives each item's own text in logical order.
 */
export function rightToLeft(items: TextItem[]): TextItem[] {
  const sorted = [...items].sort((a, b) => b.x + b.width - (a.x + a.width));
  const isLtr = (item: TextItem) => !RTL_LETTER.test(item.text) && /[\p{L}\p{N}]/u.test(item.text);
  const isNeutral = (item: TextItem) => !/[\p{L}\p{N}]/u.test(item.text);
  const out: TextItem[] = [];
  let run: TextItem[] = [];
  const flush = () => {
    let end = run.length;
    while (end > 0 && !isLtr(run[end - 1]!)) end--;
    out.push(...run.slice(0, end).reverse(), ...run.slice(end));
    run = [];
  };
  for (const item of sorted) {
    if (isLtr(item) || (run.length > 0 && isNeutral(item))) run.push(item);
    else {
      flush();
      out.push(item);
    }
  }
  flush();
  return out;
}

/**
 * Whether the gap [from, to] of a line is filled by a script: an item smaller than the line's text, within a line's
 * height of its baseline but not on it, spanning the gap (a limit set beside a display's ∫: ∫_{ℝ^n} f(x) dx), and the
 * gap no wider than such a script.
 */
function scriptInGap(byRow: Map<number, TextItem[]>, line: { y: number; size: number }, from: number, to: number): boolean {
  const slack = line.size * 0.3;
  if (to - from > line.size * 3) return false;
  const near: TextItem[] = [];
  for (let row = Math.floor(line.y - line.size); row <= Math.ceil(line.y + line.size); row++) near.push(...(byRow.get(row) ?? []));
  const inGap = near.filter(
    (item) =>
      item.size < line.size * 0.9 &&
      Math.abs(item.y - line.y) > line.size * 0.2 &&
      Math.abs(item.y - line.y) <= line.size &&
      item.x >= from - slack &&
      item.x + item.width <= to + slack,
  );
  return inGap.length > 0 && Math.min(...inGap.map((item) => item.x)) <= from + slack && Math.max(...inGap.map((item) => item.x + item.width)) >= to - slack;
}

/** Lines on each side of a gutter, at least this many, within GUTTER_REACH of the line. */
const GUTTER_LINES = 2;
/** How far from the line (in its sizes) the lines that show a gutter are looked for: a few lines each way, short of a title block above the columns. */
const GUTTER_REACH = 4;

/**
 * Whether a gap wide enough to be a word space at the line's largest type is a column's gutter instead: nothing on
 * the lines around it crosses the gap's middle, and several of them end their text just left of it and several start
 * theirs just right of it. A LaTeX page's columns stand 10 pt apart, a word space at the 14 pt of a heading that
 * shares its baseline with the other column's 10 pt line ("… citation lists   2 Document structures"); justified
 * prose has words across any x. The columns' other lines need not share baselines.
 */
function gutterThrough(byRow: Map<number, TextItem[]>, line: { y: number; size: number }, from: number, to: number): boolean {
  const middle = (from + to) / 2;
  const near = line.size * 2;
  let ending = 0;
  let starting = 0;
  for (let row = Math.floor(line.y - line.size * GUTTER_REACH); row <= Math.ceil(line.y + line.size * GUTTER_REACH); row++) {
    if (Math.abs(row - line.y) < line.size * 0.5) continue;
    const items = (byRow.get(row) ?? []).filter((item) => !item.rotated);
    if (items.some((item) => item.x < middle - 0.5 && item.x + item.width > middle + 0.5)) return false;
    if (items.some((item) => item.x + item.width <= middle && item.x + item.width >= from - near)) ending++;
    if (items.some((item) => item.x >= middle && item.x <= to + near)) starting++;
  }
  return ending >= GUTTER_LINES && starting >= GUTTER_LINES;
}

/**
 * Whether a line's piece and the item after it are two words of prose: the same size, in text faces, a word's end
 * before and a word's start after. Justification spreads words, never the parts of a formula or a smaller line.
 */
function wordsApart(current: Segment, item: TextItem, mathFonts: Set<string>): boolean {
  return (
    Math.abs(item.size - current.size) < current.size * 0.1 &&
    !mathFonts.has(item.font) &&
    !current.fonts!.some((font) => mathFonts.has(font)) &&
    /[\p{L}\d.,;:!?)\]”’"']$/u.test(current.text) &&
    /^\s*[\p{L}\d(“‘"']/u.test(item.text)
  );
}

/** The widest gap (in the line's sizes) justification may open between two words: a typewriter face's line of long words. */
const MAX_JUSTIFIED_GAP = 6;

/**
 * Whether a gap wider than a word space is one justification opened: the lines just above and just below both run
 * across it, inked just inside each of its ends. A justified line of long words, in a typewriter face above all,
 * spreads its few spaces wide; a table's row or a column's gutter has gaps the lines beside it share, and where a
 * column's short last line meets the next column, the lines beside it break at the gutter too.
 */
function justifiedGap(byRow: Map<number, TextItem[]>, line: { y: number; size: number }, from: number, to: number): boolean {
  if (to - from > line.size * MAX_JUSTIFIED_GAP) return false;
  // a point just inside each end: a table's next column starts its cells at the gap's end, not before it
  const inset = Math.min(line.size, (to - from) / 2) / 2;
  const inkedAt = (row: TextItem[], x: number) => row.some((item) => !item.rotated && item.text.trim() !== '' && item.x < x && item.x + item.width > x);
  const spans = (direction: 1 | -1) => {
    for (let step = Math.ceil(line.size * 0.5); step <= Math.ceil(line.size * 2); step++) {
      const row = byRow.get(Math.round(line.y) + direction * step);
      if (row) return inkedAt(row, from + inset) && inkedAt(row, to - inset);
    }
    return false;
  };
  return spans(1) && spans(-1);
}

/** A vertical rule between two items of a line (at the line's height): the items are in different cells. */
function isBetween(wall: Rule, left: number, right: number, y: number, size: number): boolean {
  const x = wall.x1;
  const middle = y + size * 0.3;
  return x >= left - 0.5 && x <= right + 0.5 && middle >= Math.min(wall.y1, wall.y2) && middle <= Math.max(wall.y1, wall.y2);
}

/** A superscript: clearly above its line's baseline and smaller than its text; a subscript: below it and smaller. */
function scriptOf(item: TextItem, line: { y: number; size: number }): { sup?: true; sub?: true } {
  if (item.size >= line.size * 0.9 || item.text.trim() === '') return {};
  if (item.y - line.y > line.size * 0.2) return { sup: true };
  if (line.y - item.y > line.size * 0.1) return { sub: true };
  return {};
}

function hrefAt(links: LinkArea[], item: TextItem): string | undefined {
  const cx = item.x + item.width / 2;
  const cy = item.y + item.size * 0.3;
  for (const link of links) {
    const [x1, y1, x2, y2] = link.rect;
    if (cx >= Math.min(x1, x2) && cx <= Math.max(x1, x2) && cy >= Math.min(y1, y2) - 1 && cy <= Math.max(y1, y2) + 1) return link.href;
  }
  return undefined;
}

/** The middle value (the upper of the two middle ones), 0 for none. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Body text size: the size carrying the most characters. */
export function bodySize(segments: Segment[]): number {
  const weight = new Map<number, number>();
  for (const segment of segments) {
    const key = Math.round(segment.size * 2) / 2;
    weight.set(key, (weight.get(key) ?? 0) + segment.text.length);
  }
  let best = 10;
  let bestWeight = -1;
  for (const [size, count] of weight) if (count > bestWeight) [best, bestWeight] = [size, count];
  return best;
}

/** Items (sorted by baseline, top first, then x) in lines: baselines within half a line (superscripts and subscripts join their line). */
function linesOf(usable: TextItem[]): Line[] {
  const lines: Line[] = [];
  // an item that covers the same stretch of x as one already in the line is on another line: big type beside two
  // small lines (a masthead beside "issued"/"publisher" lines) must not pull both into one
  // (text drawn twice on one baseline, a fake bold, is still one line; so are a symbol's two small scripts, one over
  // the other, the N and k=1 of an inline ∑, and a fraction's numerator and denominator set in the line, \tfrac{1}{2})
  // a symbol drawn over another makes one with it (pdfTeX's ≅ is a ∼ over an =)
  const isMark = (item: TextItem) => /^[^\p{L}\p{N}]$/u.test(item.text.trim());
  const isScript = (line: { size: number }, item: TextItem) => item.size < line.size * 0.9 && SCRIPT.test(item.text.trim());
  const overlaps = (line: { size: number; items: TextItem[] }, item: TextItem) =>
    item.text.trim() !== '' &&
    line.items.some(
      (other) =>
        other.text.trim() !== '' &&
        Math.abs(other.y - item.y) > 1 &&
        !(isScript(line, item) && isScript(line, other)) &&
        !isMark(item) &&
        !isMark(other) &&
        Math.min(other.x + other.width, item.x + item.width) - Math.max(other.x, item.x) > Math.min(other.width, item.width) * 0.5,
    );
  // a script set against a word of the line (O₂) whose baseline is not the line's: another column's heading a few
  // points higher set that
  const touchesWord = (line: Line, item: TextItem) =>
    item.size < line.size * 0.9 &&
    /[\p{L}\p{N}]/u.test(item.text) &&
    line.items.some(
      (other) =>
        other.size > item.size &&
        Math.abs(other.y - line.y) > 1 &&
        Math.abs(other.y - item.y) <= other.size * 0.5 &&
        item.x >= other.x + other.width - other.size * 0.2 &&
        item.x <= other.x + other.width + other.size * 0.3,
    );
  for (const item of usable) {
    const line = lines.at(-1);
    if (line && (Math.abs(line.y - item.y) <= Math.max(2, Math.max(line.size, item.size) * 0.5) || touchesWord(line, item)) && !overlaps(line, item)) {
      line.items.push(item);
      // the line's baseline and size are those of its biggest text, not of a superscript
      if (item.size > line.size && item.text.trim().length > 0) {
        line.size = item.size;
        line.y = item.y;
      }
    } else {
      lines.push({ y: item.y, size: item.size, items: [item] });
    }
  }
  return lines;
}
