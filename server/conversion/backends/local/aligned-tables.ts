import type { Block, Inline, TableCell } from '../../model.ts';
import { runsToInlines } from './inline.ts';
import { columnsOf } from './ruled-tables.ts';
import type { Segment } from './segments.ts';

/**
 * Tables without ruling lines, from column alignment: three or more
 * consecutive lines each cut into two or more segments whose left edges fall
 * on the same columns. The first line is taken as the header row. The
 * structure is a guess, so the table is marked uncertain for review.
 * Returns, for every segment inside a table, the table (its block on the
 * first segment only).
 */
export function findAlignedTables(column: Segment[], page: number): Map<Segment, { block?: Block }> {
  const found = new Map<Segment, { block?: Block }>();
  const rows: { y: number; cells: Segment[] }[] = [];
  for (const segment of column) {
    const row = rows.at(-1);
    if (row && Math.abs(row.y - segment.y) < 1) row.cells.push(segment);
    else rows.push({ y: segment.y, cells: [segment] });
  }
  for (const row of rows) row.cells.sort((a, b) => a.x - b.x);
  let start = 0;
  let claimed = 0;
  while (start < rows.length) {
    let end = start;
    while (end < rows.length && rows[end]!.cells.length >= 2 && (end === start || rows[end - 1]!.y - rows[end]!.y <= rows[end]!.cells[0]!.size * 3)) end++;
    if (end - start >= 3) {
      const run = rows.slice(start, end);
      // columns by x-extent work for centred columns too
      const columns = columnsOf(run);
      const cells = run.flatMap((row) => row.cells);
      const numeric = cells.filter((cell) => /\d/.test(cell.text)).length;
      // table cells are short; two columns of prose side by side are not a table
      const averageWidth = cells.reduce((sum, cell) => sum + (cell.right - cell.x), 0) / cells.length;
      const tableWidth = columns.at(-1)![1] - columns[0]![0];
      if (
        columns.length >= 2 &&
        averageWidth <= tableWidth * 0.3 &&
        (columns.length >= 3 || numeric * 2 >= cells.length) &&
        !columns.some((_, index) => isProse(run, columns, index))
      ) {
        const head = headerLinesAbove(rows, start, claimed, run, columns);
        const bodyRows: TableCell[][] = run.map((row) => {
          const out: TableCell[] = columns.map(() => ({ header: false, content: [] as Inline[] }));
          for (const cell of row.cells) {
            const index = Math.max(
              0,
              columns.findIndex(([x, right]) => cell.x >= x - 1 && cell.x <= right),
            );
            const target = out[index]!;
            target.content =
              target.content.length === 0 ? runsToInlines(cell.runs) : [...target.content, { kind: 'text', text: ' ' }, ...runsToInlines(cell.runs)];
          }
          return out;
        });
        // without header lines above, the first row heads the columns (a guess, as the table is)
        if (head.lines.length === 0) for (const cell of bodyRows[0]!) Object.assign(cell, { header: true, scope: 'col' });
        const tableRows = [...head.rows, ...bodyRows];
        run.unshift(...head.lines);
        const block: Block = { kind: 'table', page, rows: tableRows, uncertain: true };
        run.forEach((row, index) => row.cells.forEach((cell, cellIndex) => found.set(cell, index === 0 && cellIndex === 0 ? { block } : {})));
        start = end;
        claimed = end;
        continue;
      }
    }
    start = Math.max(start + 1, end);
  }
  // the first segment in reading order must carry the block
  const first = column.find((segment) => found.has(segment));
  if (first && !found.get(first)!.block) {
    const holder = [...found.values()].find((entry) => entry.block);
    if (holder) {
      found.set(first, { block: holder.block });
      holder.block = undefined;
    }
  }
  return found;
}

export type Row = { y: number; cells: Segment[] };

/**
 * A column of prose beside other text is a column of the page, not of a
 * table (a back cover's sidebar, its blurb and its publisher's box meet on
 * lines by chance): its lines are long and most of them carry a sentence on
 * into the next ("...the IBM i 7.2" / "feature of IBM DB2..."). A table's
 * wrapped cell cannot do that here, for its next line has no other cell and
 * so ends the run of rows.
 */
export function isProse(run: Row[], columns: [number, number][], index: number): boolean {
  const [left, right] = columns[index]!;
  const cells = run.map((row) => row.cells.find((cell) => cell.x >= left - 1 && cell.x <= right)?.text.trim());
  const texts = cells.filter((text): text is string => text !== undefined && text !== '');
  if (texts.length < 3 || texts.reduce((sum, text) => sum + text.split(/\s+/).length, 0) < texts.length * 6) return false;
  let pairs = 0;
  let carried = 0;
  for (let i = 1; i < cells.length; i++) {
    if (!cells[i - 1] || !cells[i]) continue;
    pairs++;
    if (/^\p{Ll}/u.test(cells[i]!) || /[-,]$/.test(cells[i - 1]!)) carried++;
  }
  return pairs >= 2 && carried * 2 >= pairs;
}

/** Text that is a number, a sign or a mark, not a label. */
const NOT_A_LABEL = /^[^\p{L}]*$|^\p{L}$/u;

/**
 * Header lines set above an aligned table, apart from its rows: each of their
 * cells stands over the columns whose middles it spans ("State funded" and
 * "CSOs" over their columns of marks), a cell over several columns heading
 * them all (colspan), a header line wrapped under its cell ("legal aid")
 * joining it. A line of one cell only counts beside a line of several, so
 * the sentence that introduces the table stays in the text.
 */
function headerLinesAbove(rows: Row[], start: number, floor: number, run: Row[], columns: [number, number][]): { lines: Row[]; rows: TableCell[][] } {
  const none = { lines: [], rows: [] };
  const gaps = run.slice(1).map((row, index) => run[index]!.y - row.y);
  const pitch = gaps.sort((a, b) => a - b)[Math.floor(gaps.length / 2)] ?? 0;
  const size = run[0]!.cells[0]!.size;
  // a header cell may be wider than the narrow column it heads, but it stands over the table, not beside it
  const left = columns[0]![0] - size;
  const right = columns.at(-1)![1] + size;
  const width = right - left;
  const outside = (cell: Segment) => (cell.x + cell.right) / 2 < left || (cell.x + cell.right) / 2 > right || cell.right - cell.x > width * 0.6;
  const over = (cell: Segment): [number, number] | undefined => {
    const middles = columns.flatMap(([x, r], index) => ((x + r) / 2 >= cell.x - 1 && (x + r) / 2 <= cell.right + 1 ? [index] : []));
    if (middles.length > 0) return [middles[0]!, middles.at(-1)!];
    const centre = (cell.x + cell.right) / 2;
    const inside = columns.findIndex(([x, r]) => centre >= x && centre <= r);
    return inside >= 0 ? [inside, inside] : undefined;
  };
  const lines: { row: Row; spans: [number, number][] }[] = [];
  let below = run[0]!.y;
  for (let index = start - 1; index >= floor && lines.length < 3; index--) {
    const row = rows[index]!;
    if (row.y - below > Math.max(pitch * 2, size * 3) || row.cells.some(outside)) break;
    if (row.cells.some((cell) => NOT_A_LABEL.test(cell.text))) break;
    const spans = row.cells.map(over);
    if (spans.some((span) => span === undefined)) break;
    const sorted = (spans as [number, number][]).toSorted((a, b) => a[0] - b[0]);
    if (sorted.some((span, i) => i > 0 && span[0] <= sorted[i - 1]![1])) break;
    lines.unshift({ row, spans: spans as [number, number][] });
    below = row.y;
  }
  // a lone cell heads only where a line of several cells heads too (its wrapped second line), else it is the text's
  const covered = (span: [number, number], except: number) =>
    lines.some((line, i) => i !== except && line.row.cells.length >= 2 && line.spans.some((other) => other[0] <= span[0] && other[1] >= span[1]));
  while (lines.length > 0 && lines[0]!.row.cells.length === 1 && !covered(lines[0]!.spans[0]!, 0)) lines.shift();
  if (!lines.some((line) => line.row.cells.length >= 2)) return none;
  // header rows: a line whose every cell sits under a cell of the row above with the same span continues that row
  type Cell = { span: [number, number]; runs: Segment['runs'] };
  const headRows: Cell[][] = [];
  for (const line of lines) {
    const cells = line.row.cells.map((cell, i) => ({ span: line.spans[i]!, runs: [...cell.runs] }));
    const previous = headRows.at(-1);
    if (previous && cells.every((cell) => previous.some((other) => other.span[0] === cell.span[0] && other.span[1] === cell.span[1]))) {
      for (const cell of cells) previous.find((other) => other.span[0] === cell.span[0])!.runs.push({ text: ' ' }, ...cell.runs);
    } else headRows.push(cells);
  }
  const out: TableCell[][] = headRows.map(() => []);
  for (const [r, row] of headRows.entries()) {
    for (let c = 0; c < columns.length; c++) {
      const cell = row.find((entry) => entry.span[0] === c);
      const spannedFromAbove = headRows.slice(0, r).some((upper, u) => {
        const owner = upper.find((entry) => entry.span[0] <= c && entry.span[1] >= c);
        return (
          owner !== undefined &&
          headRows.slice(u + 1).every((lower) => !lower.some((entry) => entry.span[0] <= owner.span[1] && entry.span[1] >= owner.span[0]))
        );
      });
      if (row.some((entry) => entry.span[0] < c && entry.span[1] >= c) || spannedFromAbove) continue;
      // a cell with nothing under it in the header rows below spans down to the body
      const rowSpan =
        cell && headRows.slice(r + 1).every((lower) => !lower.some((entry) => entry.span[0] <= cell.span[1] && entry.span[1] >= cell.span[0]))
          ? headRows.length - r
          : 1;
      const colSpan = cell ? cell.span[1] - cell.span[0] + 1 : 1;
      out[r]!.push({
        header: true,
        scope: colSpan > 1 ? 'colgroup' : 'col',
        ...(rowSpan > 1 ? { rowSpan } : {}),
        ...(colSpan > 1 ? { colSpan } : {}),
        content: cell ? runsToInlines(cell.runs) : [],
      });
    }
  }
  return { lines: lines.map((line) => line.row), rows: out };
}
