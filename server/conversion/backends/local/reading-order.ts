import { findAlignedTables } from './aligned-tables.ts';
import type { Rule } from './drawing.ts';
import { NOTE_MARKER } from './page-footnotes.ts';
import { rowsOf } from './page-furniture.ts';
import { isRightToLeftText, type Segment } from './segments.ts';

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
  if (!multiColumn) return { ordered, multiColumn, foot: [foot] };
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
  if (segments.length < 6) return { ordered: [segments], multiColumn: false };
  // tables span the page like full-width lines: their column gaps are not a gutter
  const tableCells = findAlignedTables(segments, 0);
  const rowKey = (segment: Segment) => Math.round(segment.y);
  const tableRows = new Map<number, { x: number; right: number }>();
  for (const segment of tableCells.keys()) {
    const row = tableRows.get(rowKey(segment));
    tableRows.set(rowKey(segment), row ? { x: Math.min(row.x, segment.x), right: Math.max(row.right, segment.right) } : { x: segment.x, right: segment.right });
  }
  const spans: { x: number; right: number }[] = [...segments.filter((segment) => !tableCells.has(segment)), ...tableRows.values()];
  const left = Math.min(...segments.map((segment) => segment.x));
  const right = Math.max(...segments.map((segment) => segment.right));
  const findGutter = (list: { x: number; right: number }[]) => {
    let found: number | undefined;
    let bestCrossing = Infinity;
    for (let x = left + (right - left) * 0.3; x <= left + (right - left) * 0.7; x += 2) {
      const crossing = list.filter((span) => span.x < x - 1 && span.right > x + 1).length;
      const leftCount = list.filter((span) => span.right <= x + 1).length;
      const rightCount = list.filter((span) => span.x >= x - 1).length;
      if (leftCount >= 3 && rightCount >= 3 && crossing < bestCrossing) {
        bestCrossing = crossing;
        found = x;
      }
    }
    return found === undefined || bestCrossing > list.length * 0.2 ? undefined : found;
  };
  // a gutter that only exists between a table's columns is no gutter; otherwise tables do not change the columns
  const gutter = tableCells.size > 0 && findGutter(spans) === undefined ? undefined : findGutter(segments);
  if (gutter === undefined || right - left < pageWidth * 0.4) return { ordered: [segments], multiColumn: false };
  const g = gutter;
  const rtl = isRightToLeftText(segments.map((segment) => segment.text).join(' '));
  const isWide = (segment: Segment) => segment.x < g - 1 && segment.right > g + 1;
  const ordered: Segment[][] = [];
  let band: Segment[] = [];
  const flushBand = () => {
    if (band.length === 0) return;
    const leftColumn = band.filter((segment) => segment.right <= g + 1);
    const rightColumn = band.filter((segment) => segment.x >= g - 1);
    // a right-to-left page's columns are read from the right
    for (const column of rtl ? [rightColumn, leftColumn] : [leftColumn, rightColumn]) if (column.length > 0) ordered.push(column);
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
  return { ordered, multiColumn: true };
}
