import { findAlignedTables } from './aligned-tables.ts';
import type { Segment } from './segments.ts';

/** Reading order: bands split by full-width lines; inside a band, the left column before the right. */
export function readingOrder(segments: Segment[], pageWidth: number): { ordered: Segment[][]; multiColumn: boolean } {
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
  const isWide = (segment: Segment) => segment.x < g - 1 && segment.right > g + 1;
  const ordered: Segment[][] = [];
  let band: Segment[] = [];
  const flushBand = () => {
    if (band.length === 0) return;
    const leftColumn = band.filter((segment) => segment.right <= g + 1);
    const rightColumn = band.filter((segment) => segment.x >= g - 1);
    if (leftColumn.length > 0) ordered.push(leftColumn);
    if (rightColumn.length > 0) ordered.push(rightColumn);
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
