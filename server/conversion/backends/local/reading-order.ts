import { findAlignedTables } from './aligned-tables.ts';
import type { Rule } from './drawing.ts';
import { NOTE_MARKER } from './page-footnotes.ts';
import { rowsOf } from './page-furniture.ts';
import { bodySize, isRightToLeftText, median, type Segment } from './segments.ts';

/**
 * Reading order: bands split by full-width lines; inside a band, the left
 * column before the right. A page's foot (an imprint, an address and ISSN
 * set in the bottom margin under both columns) follows the columns.
 */
export function readingOrder(
  segments: Segment[],
  pageWidth: number,
  pageHeight: number,
  rules: Rule[] = [],
): { ordered: Segment[][]; multiColumn: boolean; foot: Segment[][] } {
  const foot = footBand(segments, pageHeight, rules);
  if (foot.length === 0) return { ...columnOrder(segments, pageWidth), foot: [] };
  const body = segments.filter((segment) => !foot.includes(segment));
  const { ordered, multiColumn } = columnOrder(body, pageWidth);
  if (!multiColumn) return { ordered, multiColumn, foot: sideBySide(foot) ?? [foot] };
  // the foot's left block before its right one, as the columns above it
  const middle = (Math.min(...body.map((segment) => segment.x)) + Math.max(...body.map((segment) => segment.right))) / 2;
  const left = foot.filter((segment) => segment.x < middle);
  const right = foot.filter((segment) => segment.x >= middle);
  return { ordered, multiColumn, foot: [left, right].filter((part) => part.length > 0) };
}

/**
 * The lines in the page's bottom margin (its lowest eighth), at most four,
 * set apart from everything above by a gap no text crosses, of at least two
 * of their lines. Footnotes are not a foot: a line opening with a note's
 * marker, or a separator rule in the gap, leaves the lines to the columns.
 */
function footBand(segments: Segment[], pageHeight: number, rules: Rule[]): Segment[] {
  if (!Number.isFinite(pageHeight) || segments.length < 6) return [];
  const byRow = rowsOf(segments);
  const rows = [...byRow.keys()].sort((a, b) => a - b);
  const size = (y: number) => Math.max(...byRow.get(y)!.map((segment) => segment.size));
  for (let index = 0; index < Math.min(4, rows.length - 1); index++) {
    const below = rows[index]!;
    const above = rows[index + 1]!;
    if (below > pageHeight / 8) return [];
    const top = below + size(below);
    const gap = above - top;
    if (gap < size(below) * 1.5 || gap < size(above) * 1.2) continue;
    const foot = segments.filter((segment) => Math.round(segment.y) <= below);
    const separated = rules.some((rule) => rule.y1 === rule.y2 && rule.y1 > top && rule.y1 < above);
    return separated || foot.some((segment) => NOTE_MARKER.test(segment.text)) ? [] : foot;
  }
  return [];
}

function columnOrder(segments: Segment[], pageWidth: number): { ordered: Segment[][]; multiColumn: boolean } {
  const ordered = regionOrder(segments, pageWidth);
  return { ordered, multiColumn: ordered.length > 1 };
}

/**
 * A recursive XY-cut on the page's lines, chosen over whitespace cover because
 * it reads columns of unequal length and runs of columns above and below a
 * full-width figure in the order people read them, at the cost of needing a
 * gutter that runs through the region (a few lines may cross it; they split
 * the region into bands). A region is first cut across at empty bands wider
 * than two lines that run its whole width (a figure or a title block between
 * runs of columns), then down its gutter; each side is cut again, so three
 * columns, or a newspaper's six, are each found.
 */
function regionOrder(segments: Segment[], pageWidth: number): Segment[][] {
  if (segments.length < 6) return [segments];
  const stripes = joinSharedColumns(stripesOf(segments), pageWidth);
  if (stripes.length > 1) {
    const parts = stripes.map((stripe) =>
      stripe.gutter === undefined ? regionOrder(stripe.segments, pageWidth) : bandOrder(stripe.segments, stripe.gutter, pageWidth),
    );
    // stripes only matter where one of them has columns: a page of one column stays one column
    if (parts.some((part) => part.length > 1)) {
      const ordered: Segment[][] = [];
      let single = false;
      for (const part of parts) {
        // consecutive stripes of one column each read as one column (a paragraph may run across their gap)
        if (part.length === 1 && single) ordered.at(-1)!.push(...part[0]!);
        else ordered.push(...part.map((column) => [...column]));
        single = part.length === 1;
      }
      return ordered;
    }
  }
  const gutter = findGutter(segments, pageWidth);
  return gutter === undefined ? [segments] : bandOrder(segments, gutter, pageWidth);
}

/**
 * A region read down its gutter: lines across it part the region into
 * bands, and each band's left side (right side on a right-to-left page)
 * comes before the other, each cut again for columns of its own.
 */
function bandOrder(segments: Segment[], g: number, pageWidth: number): Segment[][] {
  const rtl = isRightToLeftText(segments.map((segment) => segment.text).join(' '));
  // a line reaching a little over the gutter is its side's (an OCR layer's loose word box): only one well across both
  // sides, a title's or a figure's, parts the region into bands
  const reach = bodySize(segments) * 2;
  const crosses = (segment: Segment) => segment.x < g - reach && segment.right > g + reach;
  // a line across the gutter that leaves the lines over and under it on each side running on at their pitch past it
  // (at most the one line it took missing) is no title or figure across the columns: an OCR layer's words of two
  // columns joined over the gutter
  const runsOnPast = (segment: Segment, lines: Segment[]) => {
    const rows = [...new Set(lines.map((line) => line.y))].sort((a, b) => a - b);
    const above = rows.find((y) => y > segment.y);
    const below = rows.findLast((y) => y < segment.y);
    return above !== undefined && below !== undefined && above - below <= median(rows.slice(1).map((y, index) => y - rows[index]!)) * 2.3;
  };
  const amidColumns = (segment: Segment) => {
    const under = segments.filter((other) => !crosses(other) && other.x < segment.right && other.right > segment.x);
    return (
      runsOnPast(
        segment,
        under.filter((other) => other.right <= g + 1),
      ) &&
      runsOnPast(
        segment,
        under.filter((other) => other.x >= g - 1),
      )
    );
  };
  const across = new Set(segments.filter((segment) => crosses(segment) && !amidColumns(segment)));
  widenShortLines(segments, across, g);
  const isWide = (segment: Segment) => across.has(segment);
  const onLeft = (segment: Segment) => segment.right <= g + 1 || (!isWide(segment) && segment.x + segment.right < g * 2);
  const ordered: Segment[][] = [];
  let band: Segment[] = [];
  const flushBand = () => {
    if (band.length === 0) return;
    const leftColumn = band.filter(onLeft);
    const rightColumn = band.filter((segment) => !onLeft(segment));
    // a right-to-left page's columns are read from the right; each column may hold columns of its own
    for (const column of rtl ? [rightColumn, leftColumn] : [leftColumn, rightColumn]) if (column.length > 0) ordered.push(...regionOrder(column, pageWidth));
    band = [];
  };
  let wide: Segment[] = [];
  for (const segment of segments) {
    if (isWide(segment)) {
      flushBand();
      wide.push(segment);
    } else {
      if (wide.length > 0) ordered.push(wide);
      wide = [];
      band.push(segment);
    }
  }
  flushBand();
  if (wide.length > 0) ordered.push(wide);
  return ordered;
}

/**
 * Takes into `across` the lines short of the gutter that belong to the lines across it next to them, not to the left
 * column: a wide list's or paragraph's last words ("synthesizers!" under a list set full width over the columns) and
 * the heading over a wide section under the columns ("Additional Features"). Such a line has nothing right of the
 * gutter beside it, follows or precedes a wide line in the page's order, and stands closer to it than to the line on
 * its other side.
 */
function widenShortLines(segments: Segment[], across: Set<Segment>, g: number): void {
  const right = segments.filter((segment) => segment.x >= g - 1);
  const beside = (segment: Segment) => right.some((other) => Math.abs(other.y - segment.y) < segment.size * 0.5);
  for (const [index, segment] of segments.entries()) {
    // (a line reaching a little over the gutter is on the left, as bandOrder reads it)
    if (across.has(segment) || segment.x >= g - 1 || segment.x + segment.right >= g * 2 || beside(segment)) continue;
    const above = segments[index - 1];
    const below = segments[index + 1];
    const gapAbove = above ? above.y - segment.y : Number.POSITIVE_INFINITY;
    const gapBelow = below ? segment.y - below.y : Number.POSITIVE_INFINITY;
    const runsOn = above !== undefined && across.has(above) && gapAbove <= gapBelow + segment.size * 0.2;
    const opens = below !== undefined && across.has(below) && gapBelow < gapAbove - segment.size * 0.2;
    if (runsOn || opens) across.add(segment);
  }
}

/**
 * The region cut across where no line lies in a band running its whole width
 * that is more than two body lines high: wider than any paragraph's or
 * heading's space, which one column alone has while the other runs on beside it.
 */
function stripesOf(segments: Segment[]): Segment[][] {
  const size = bodySize(segments);
  const byTop = [...segments].sort((a, b) => b.y + b.size - (a.y + a.size));
  const stripes: Segment[][] = [];
  let floor = Number.POSITIVE_INFINITY;
  for (const segment of byTop) {
    const top = segment.y + segment.size * 0.75;
    if (stripes.length === 0 || floor - top > size * 2) stripes.push([]);
    stripes.at(-1)!.push(segment);
    floor = Math.min(floor, segment.y - segment.size * 0.25);
  }
  // each stripe keeps the page's order (top to bottom, left to right)
  if (stripes.length === 1) return [segments];
  const stripeOf = new Map(stripes.flatMap((stripe, index) => stripe.map((segment) => [segment, index] as const)));
  return stripes.map((_, index) => segments.filter((segment) => stripeOf.get(segment) === index));
}

/**
 * Stripes whose columns meet at one gutter are one stripe: two columns may
 * both leave a gap at the same height (a figure beside the end of a table's
 * notes), and cutting there would read the top of both columns before the
 * rest of the first. A stripe too short to show a gutter joins its
 * neighbour's columns when none of its lines crosses that gutter and its
 * lines start where that neighbour's columns start (a figure's caption and a
 * table's title above them); a title block's centred lines do not.
 */
function joinSharedColumns(stripes: Segment[][], pageWidth: number): { segments: Segment[]; gutter: number | undefined }[] {
  if (stripes.length < 2) return stripes.map((segments) => ({ segments, gutter: undefined }));
  const own = stripes.map((stripe) => findGutter(stripe, pageWidth));
  // a short stripe takes the gutter of the nearest stripe with one, below it first, when it fits that stripe's columns
  const gutters = stripes.map((stripe, index) => {
    if (own[index] !== undefined) return own[index];
    const below = own.findIndex((gutter, other) => other > index && gutter !== undefined);
    const above = own.findLastIndex((gutter, other) => other < index && gutter !== undefined);
    for (const other of [below, above])
      if (other >= 0 && (fitsColumns(stripe, stripes[other]!, own[other]!, bodySize(stripe)) || twoBlocks(stripe, own[other]!))) return own[other];
    return undefined;
  });
  const joined: { segments: Segment[]; gutter: number | undefined }[] = [];
  for (const [index, stripe] of stripes.entries()) {
    const gutter = gutters[index];
    const last = joined.at(-1);
    const size = bodySize(stripe);
    // two runs of columns with gutters of their own are apart when more than six lines lie between them (a
    // full-width figure): a few lines' gap both columns happen to leave at one height is no break
    const gap = last
      ? Math.min(...last.segments.map((segment) => segment.y - segment.size * 0.25)) - Math.max(...stripe.map((segment) => segment.y + segment.size * 0.75))
      : 0;
    const apart = own[index] !== undefined && own[index - 1] !== undefined && gap > size * 6;
    if (last?.gutter !== undefined && gutter !== undefined && !apart && Math.abs(last.gutter - gutter) <= size * 3) last.segments.push(...stripe);
    else joined.push({ segments: [...stripe], gutter });
  }
  return joined;
}

/**
 * A page's foot that is two blocks of words side by side (two figures' captions under them, one of two lines beside
 * one of one, on a page whose text runs in one column): the left block, then the right (from the right on a
 * right-to-left page).
 * Split at the widest gap no line crosses, when each side holds a line eight body sizes wide and at most one row has
 * pieces on both sides (a label beside its value, row after row, stays row by row).
 */
function sideBySide(segments: Segment[]): Segment[][] | undefined {
  if (segments.length < 3) return undefined;
  const spans = [...segments].sort((a, b) => a.x - b.x);
  let reach = spans[0]!.right;
  let gutter: { x: number; width: number } | undefined;
  for (const segment of spans.slice(1)) {
    if (segment.x > reach && (!gutter || segment.x - reach > gutter.width)) gutter = { x: (segment.x + reach) / 2, width: segment.x - reach };
    reach = Math.max(reach, segment.right);
  }
  const size = bodySize(segments);
  if (!gutter || gutter.width < size * 2 || !twoBlocks(segments, gutter.x)) return undefined;
  const left = segments.filter((segment) => segment.right <= gutter.x);
  const right = segments.filter((segment) => segment.x >= gutter.x);
  if (![left, right].every((side) => side.some((segment) => segment.right - segment.x >= size * 8))) return undefined;
  return isRightToLeftText(segments.map((segment) => segment.text).join(' ')) ? [right, left] : [left, right];
}

/**
 * Whether a stripe is two blocks side by side across the gutter (a
 * masthead's imprint lines and its series name), pieces on both sides of it
 * in at most one row and none across it, rather than rows of names beside
 * and across it (a title block's authors).
 */
function twoBlocks(stripe: Segment[], gutter: number): boolean {
  if (stripe.some((segment) => segment.x < gutter - 1 && segment.right > gutter + 1)) return false;
  let beside = 0;
  for (const row of rowsOf(stripe).values()) if (row.some((segment) => segment.right <= gutter + 1) && row.some((segment) => segment.x >= gutter - 1)) beside++;
  return beside <= 1 && stripe.some((segment) => segment.x >= gutter - 1) && stripe.some((segment) => segment.right <= gutter + 1);
}

/** Whether the lines of `stripe` lie in the columns `columns` has on either side of its gutter, starting where they start. */
function fitsColumns(stripe: Segment[], columns: Segment[], gutter: number, size: number): boolean {
  if (stripe.some((segment) => segment.x < gutter - 1 && segment.right > gutter + 1)) return false;
  const start = (list: Segment[]) => Math.min(...list.map((segment) => segment.x));
  const sides = (list: Segment[]) => [list.filter((segment) => segment.right <= gutter + 1), list.filter((segment) => segment.x >= gutter - 1)];
  const [ownLeft, ownRight] = sides(stripe);
  const [theirLeft, theirRight] = sides(columns);
  const aligned = (own: Segment[], theirs: Segment[]) => own.length === 0 || (theirs.length > 0 && Math.abs(start(own) - start(theirs)) <= size * 2);
  return aligned(ownLeft!, theirLeft!) && aligned(ownRight!, theirRight!);
}

/**
 * The x of the region's gutter: in its middle two fifths, where the fewest
 * lines cross with at least three lines on each side. None when more than a
 * fifth of the lines cross, when the region is narrower than two columns of
 * thirty body sizes and than two fifths of the page, or when the only gap is
 * between a table's columns (a table spans its region like full-width lines).
 */
function findGutter(segments: Segment[], pageWidth: number): number | undefined {
  if (segments.length < 6) return undefined;
  const left = Math.min(...segments.map((segment) => segment.x));
  const right = Math.max(...segments.map((segment) => segment.right));
  const narrow = knownGutter(segments, left, right);
  if (narrow !== undefined) return narrow;
  if (right - left < Math.min(pageWidth * 0.4, bodySize(segments) * 30)) return undefined;
  const tableCells = findAlignedTables(segments, 0);
  const rowKey = (segment: Segment) => Math.round(segment.y);
  const tableRows = new Map<number, { x: number; right: number }>();
  for (const segment of tableCells.keys()) {
    const row = tableRows.get(rowKey(segment));
    tableRows.set(rowKey(segment), row ? { x: Math.min(row.x, segment.x), right: Math.max(row.right, segment.right) } : { x: segment.x, right: segment.right });
  }
  type Span = { x: number; right: number; lines?: number[] };
  const spans: Span[] = [...segments.filter((segment) => !tableCells.has(segment)), ...tableRows.values()];
  // a display formula gathered from several lines counts as those lines, as it did before it was gathered
  const count = (list: Span[]) => list.reduce((sum, span) => sum + Math.max(1, span.lines?.length ?? 1), 0);
  const find = (list: Span[]) => {
    let found: number | undefined;
    let bestCrossing = Infinity;
    // the lines on the smaller side of the best x
    let sides = 0;
    for (let x = left + (right - left) * 0.3; x <= left + (right - left) * 0.7; x += 2) {
      const crossing = list.filter((span) => span.x < x - 1 && span.right > x + 1).length;
      const leftCount = count(list.filter((span) => span.right <= x + 1));
      const rightCount = count(list.filter((span) => span.x >= x - 1));
      if (leftCount >= 3 && rightCount >= 3 && crossing < bestCrossing) {
        bestCrossing = crossing;
        found = x;
        sides = Math.min(leftCount, rightCount);
      }
    }
    if (found === undefined) return undefined;
    // more lines may cross where they stand together, bands across columns of a dozen lines or more each (a list set full
    // width over them, a section under them): bandOrder reads those between the columns' runs
    const limit = sides >= 12 && crossingRuns(list, found) <= 3 ? 0.5 : 0.2;
    return bestCrossing > list.length * limit ? undefined : found;
  };
  // a gutter that only exists between a table's columns is no gutter; otherwise tables do not change the columns
  const gutter = (tableCells.size > 0 && find(spans) === undefined ? undefined : find(segments)) ?? marginGutter(spans, left, right, bodySize(segments), count);
  if (gutter === undefined) return undefined;
  // columns of text fill their width with most of their lines (a checkbox or a bullet set apart is a line's piece);
  // a table's columns of marks or numbers ("X", "12") are no column
  // (a side holding columns of its own is filled by lines of a column's width)
  const size = bodySize(segments);
  const fills = (side: Segment[], width: number) => quartile(side.map((segment) => segment.right - segment.x)) >= Math.min(width * 0.4, size * 8);
  const leftSide = segments.filter((segment) => segment.right <= gutter + 1);
  const rightSide = segments.filter((segment) => segment.x >= gutter - 1);
  const leftEdge = Math.max(...leftSide.map((segment) => segment.right));
  const rightEdge = Math.min(...rightSide.map((segment) => segment.x));
  return fills(leftSide, leftEdge - left) && fills(rightSide, right - rightEdge) && dense(leftSide) && dense(rightSide) ? gutter : undefined;
}

/**
 * A gutter outside the region's middle two fifths, beside a narrow column of its own (a journal's sidebar of
 * affiliations and dates beside the abstract, a textbook's margin notes): no line crosses it, and the narrow
 * side's lines are words, most of them six body sizes wide or more, not a list's labels or a table's row heads
 * (a table's row counts as one line across). The x nearest the middle, so each side keeps what stands in it.
 */
function marginGutter(
  spans: { x: number; right: number }[],
  left: number,
  right: number,
  size: number,
  count: (list: { x: number; right: number }[]) => number,
): number | undefined {
  const width = right - left;
  let best: { x: number; fromMiddle: number } | undefined;
  for (const [from, to] of [
    [0.1, 0.3],
    [0.7, 0.9],
  ] as const) {
    for (let x = left + width * from; x <= left + width * to; x += 2) {
      if (spans.some((span) => span.x < x - 1 && span.right > x + 1)) continue;
      const sides = [spans.filter((span) => span.right <= x + 1), spans.filter((span) => span.x >= x - 1)];
      if (sides.some((side) => count(side) < 3)) continue;
      const narrowSide = from < 0.5 ? sides[0]! : sides[1]!;
      if (median(narrowSide.map((span) => span.right - span.x)) < size * 6) continue;
      const fromMiddle = Math.abs(x - (left + width / 2));
      if (!best || fromMiddle < best.fromMiddle) best = { x, fromMiddle };
    }
  }
  return best?.x;
}

/**
 * The bands of lines across x, in the lines' order down the page: a band runs on over its short lines left of x (a
 * list's last words), and ends at a line right of x, a column's.
 */
function crossingRuns(spans: { x: number; right: number }[], x: number): number {
  let runs = 0;
  let inRun = false;
  for (const span of spans) {
    if (span.x < x - 1 && span.right > x + 1) {
      if (!inRun) runs++;
      inRun = true;
    } else if (span.x >= x - 1) inRun = false;
  }
  return runs;
}

/**
 * A gutter the page's lines leave open down the region (gutters.ts: a newspaper's, narrower than a word space),
 * taken however narrow its columns: the one fewest of the region's lines cross, with three lines or more on each
 * side and at most a tenth across it.
 */
function knownGutter(segments: Segment[], left: number, right: number): number | undefined {
  const known = segments[0]?.gutters;
  if (!known) return undefined;
  const size = bodySize(segments);
  const top = Math.max(...segments.map((segment) => segment.y));
  const bottom = Math.min(...segments.map((segment) => segment.y));
  let best: { x: number; crossing: number } | undefined;
  for (const gutter of known) {
    // inside the region, and running down most of it
    if (gutter.x < left + size * 3 || gutter.x > right - size * 3) continue;
    if (Math.min(top, gutter.top) - Math.max(bottom, gutter.bottom) < (top - bottom) * 0.5) continue;
    const crossing = segments.filter((segment) => segment.x < gutter.x - 1 && segment.right > gutter.x + 1).length;
    const sides = [segments.filter((segment) => segment.right <= gutter.x + 1), segments.filter((segment) => segment.x >= gutter.x - 1)];
    // a column of page numbers beside a contents list's leaders is no column: each side is lines of words
    const wide = (side: Segment[]) => Math.max(...side.map((segment) => segment.right)) - Math.min(...side.map((segment) => segment.x)) >= size * 8;
    if (sides.some((side) => side.length < 3 || !wide(side)) || crossing > segments.length * 0.1) continue;
    if (!best || crossing < best.crossing) best = { x: gutter.x, crossing };
  }
  return best?.x;
}

/**
 * Whether a side's lines follow each other down it as a column's do, most
 * of them at about their line pitch (a figure or a heading's space apart
 * now and then), rather than standing apart as the labels of a table's rows
 * do (one line, then a row's height of nothing).
 */
function dense(side: Segment[]): boolean {
  // a display formula over several lines stands where its lines stood (a limit's, a numerator's): the column's
  // rhythm is theirs, not a formula's height of nothing
  const lines = side.flatMap((segment) => (segment.lines ?? []).map(Math.round));
  const rows = [...new Set([...rowsOf(side).keys(), ...lines])].sort((a, b) => b - a);
  const gaps = rows.slice(1).map((y, index) => rows[index]! - y);
  return gaps.length === 0 || median(gaps) <= bodySize(side) * 2.5;
}

/** The upper quartile of the values. */
function quartile(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length * 0.75)] ?? 0;
}
