import type { Block, Inline } from '../../model.ts';
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
      if (columns.length >= 2 && averageWidth <= tableWidth * 0.3 && (columns.length >= 3 || numeric * 2 >= cells.length)) {
        const tableRows = run.map((row, rowIndex) => {
          const out: { header: boolean; scope?: 'col'; content: Inline[] }[] = columns.map(() => ({ header: rowIndex === 0, content: [] as Inline[] }));
          for (const cell of row.cells) {
            const index = Math.max(
              0,
              columns.findIndex(([x, right]) => cell.x >= x - 1 && cell.x <= right),
            );
            const target = out[index]!;
            target.content =
              target.content.length === 0 ? runsToInlines(cell.runs) : [...target.content, { kind: 'text', text: ' ' }, ...runsToInlines(cell.runs)];
          }
          if (rowIndex === 0) for (const cell of out) cell.scope = 'col';
          return out;
        });
        const block: Block = { kind: 'table', page, rows: tableRows, uncertain: true };
        run.forEach((row, index) => row.cells.forEach((cell, cellIndex) => found.set(cell, index === 0 && cellIndex === 0 ? { block } : {})));
        start = end;
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
