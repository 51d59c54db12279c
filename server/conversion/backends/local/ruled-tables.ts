import type { Block, TableCell } from '../../model.ts';
import { runsToInlines, type Run } from './inline.ts';
import { TOLERANCE, type Rule } from './drawing.ts';
import { median, type Segment } from './segments.ts';
import { FIGURE_CAPTION } from './vector-figures.ts';
import { isProse, type Row } from './aligned-tables.ts';

/**
 * Tables drawn with ruling lines ("lattice" tables). The page's operator
 * list gives the strokes and thin filled rectangles; horizontal and vertical
 * rules that touch form a grid; text falls into its cells; a cell whose
 * inner rule is missing spans the cells it covers. The first rows are
 * headers when they are bold, or when a heavier rule closes them.
 */

export type RuledTable = { block: Block & { kind: 'table' }; segments: Set<Segment>; box: { x: number; right: number; top: number; bottom: number } };

/** `joints`: where two collinear pieces of the rule meet end to end (a border drawn cell by cell). */
type Line = { at: number; from: number; to: number; width: number; joints?: number[] };

/** Collinear pieces of one rule (a border drawn cell by cell) joined. */
function mergeLines(lines: Line[]): Line[] {
  lines.sort((a, b) => a.at - b.at || a.from - b.from);
  const out: Line[] = [];
  for (const line of lines) {
    const last = out.at(-1);
    if (last && Math.abs(last.at - line.at) < 1 && line.from <= last.to + TOLERANCE) {
      if (Math.abs(line.from - last.to) <= TOLERANCE) last.joints = [...(last.joints ?? []), (line.from + last.to) / 2];
      last.to = Math.max(last.to, line.to);
      last.width = Math.max(last.width, line.width);
    } else out.push({ ...line });
  }
  return out;
}

/**
 * Row edges a grid draws without a horizontal rule: the vertical rules run on
 * above the top rule (or below the bottom one) over header rows shaded rather
 * than ruled, drawn row by row so that their pieces meet where such a row
 * ends. Where two verticals or more agree, that is an edge of the table's rows.
 */
function impliedRowEdges(hs: Line[], vs: Line[]): Line[] {
  const top = Math.max(...hs.map((line) => line.at));
  const bottom = Math.min(...hs.map((line) => line.at));
  const from = Math.min(...hs.map((line) => line.from));
  const to = Math.max(...hs.map((line) => line.to));
  const width = Math.min(...hs.map((line) => line.width));
  const edges: number[] = [];
  const above = vs.filter((line) => line.to > top + TOLERANCE * 4);
  if (above.length >= 2) edges.push(Math.min(...above.map((line) => line.to)));
  const below = vs.filter((line) => line.from < bottom - TOLERANCE * 4);
  if (below.length >= 2) edges.push(Math.max(...below.map((line) => line.from)));
  // inside the ruled rows joints mean nothing (LaTeX draws its verticals line by line); beyond them they part the header rows
  const joints = vs.flatMap((line) => line.joints ?? []).filter((at) => at > top + TOLERANCE || at < bottom - TOLERANCE);
  for (const joint of distinct(joints)) {
    if (joints.filter((other) => Math.abs(other - joint) <= TOLERANCE).length >= 2) edges.push(joint);
  }
  return distinct(edges)
    .filter((at) => !hs.some((line) => Math.abs(line.at - at) <= TOLERANCE))
    .map((at) => ({ at, from, to, width }));
}

/** Positions closer than the tolerance are one. */
function distinct(values: number[]): number[] {
  const sorted = [...values].sort((a, b) => a - b);
  const out: number[] = [];
  for (const value of sorted) if (out.length === 0 || value - out.at(-1)! > TOLERANCE) out.push(value);
  return out;
}

/**
 * The ruled tables of a page and the segments inside each. A grid needs at
 * least two columns and two rows of cells; anything less is a frame around
 * text, not a table.
 */
export function findRuledTables(rules: Rule[], segments: Segment[], page: number, boldFonts: Set<string>): RuledTable[] {
  const horizontals = mergeLines(rules.filter((rule) => rule.y1 === rule.y2).map((rule) => ({ at: rule.y1, from: rule.x1, to: rule.x2, width: rule.width })));
  const verticals = mergeLines(rules.filter((rule) => rule.x1 === rule.x2).map((rule) => ({ at: rule.x1, from: rule.y1, to: rule.y2, width: rule.width })));
  if (horizontals.length < 2) return [];
  const touches = (hl: Line, vl: Line) =>
    vl.at >= hl.from - TOLERANCE && vl.at <= hl.to + TOLERANCE && hl.at >= vl.from - TOLERANCE && hl.at <= vl.to + TOLERANCE;
  const tables = verticals.length >= 2 ? gridTables(horizontals, verticals, touches, segments, page, boldFonts) : [];
  // horizontal rules no vertical touches may be a booktabs-style table's
  const free = horizontals.filter((hl) => !verticals.some((vl) => touches(hl, vl)));
  const rest = tables.length > 0 ? segments.filter((segment) => !tables.some((table) => table.segments.has(segment))) : segments;
  // a frame around a figure's caption is the figure's (a diagram's boxes and lines), not a table; a table's own
  // caption may stand inside its frame
  return [...tables, ...findBooktabsTables(free, rest, page)].filter((table) => ![...table.segments].some((segment) => FIGURE_CAPTION.test(segment.text)));
}

function gridTables(
  horizontals: Line[],
  verticals: Line[],
  touches: (hl: Line, vl: Line) => boolean,
  segments: Segment[],
  page: number,
  boldFonts: Set<string>,
): RuledTable[] {
  // grids: horizontal and vertical rules that touch, grouped (union-find)
  const all = [...horizontals.map((line) => ({ line, horizontal: true })), ...verticals.map((line) => ({ line, horizontal: false }))];
  const parent = all.map((_, index) => index);
  const find = (index: number): number => (parent[index] === index ? index : (parent[index] = find(parent[index]!)));
  for (let h = 0; h < horizontals.length; h++) {
    for (let v = 0; v < verticals.length; v++) {
      if (touches(horizontals[h]!, verticals[v]!)) parent[find(h)] = find(horizontals.length + v);
    }
  }
  const groups = new Map<number, typeof all>();
  for (const [index, entry] of all.entries()) groups.set(find(index), [...(groups.get(find(index)) ?? []), entry]);
  const tables: RuledTable[] = [];
  for (const group of groups.values()) {
    const hs = group.filter((entry) => entry.horizontal).map((entry) => entry.line);
    const vs = group.filter((entry) => !entry.horizontal).map((entry) => entry.line);
    const xs = distinct([...vs.map((line) => line.at), ...openSides(hs, vs)]);
    const ruled = [...hs, ...impliedRowEdges(hs, vs)];
    const thinnest = Math.min(...ruled.map((line) => line.width));
    const ruledYs = distinct(ruled.map((line) => line.at)).reverse();
    const edges = [...ruled, ...subRowEdges(xs, ruledYs, segments, thinnest), ...anchoredRowEdges(xs, ruledYs, segments, thinnest)];
    const ys = distinct(edges.map((line) => line.at)).reverse();
    if (ys.length < 3 || xs.length < 3) continue;
    const table = buildTable(xs, ys, edges, vs, segments, page, boldFonts);
    if (table) tables.push(table);
  }
  return tables;
}

/** The column (between two of the grid's verticals `xs`) a segment's middle stands in; -1 outside the grid. */
function columnAt(xs: number[], segment: Segment): number {
  const middle = (segment.x + segment.right) / 2;
  return xs.findIndex((x, index) => index < xs.length - 1 && middle >= x && middle < xs[index + 1]!);
}

/** The segments whose middle height lies between two of the grid's row edges, in one of its columns. */
function bandSegments(segments: Segment[], upper: number, lower: number, xs: number[]): Segment[] {
  return segments.filter((segment) => {
    const middle = segment.y + segment.size * 0.3;
    return middle < upper && middle > lower && columnAt(xs, segment) >= 0;
  });
}

/**
 * Rows a grid rules by its columns only, found by a column of one-line cells
 * (a dose, a count) beside columns of several lines: each of its lines after
 * the first opens a row, the cells set from the top. A cut that would run
 * through a line of text is not made.
 */
function anchoredRowEdges(xs: number[], ys: number[], segments: Segment[], width: number): Line[] {
  const out: Line[] = [];
  const columnOf = (segment: Segment) => columnAt(xs, segment);
  for (let r = 0; r + 1 < ys.length; r++) {
    const inside = bandSegments(segments, ys[r]!, ys[r + 1]!, xs);
    const byColumn = new Map<number, Segment[]>();
    for (const segment of inside) {
      const column = byColumn.get(columnOf(segment));
      if (column) column.push(segment);
      else byColumn.set(columnOf(segment), [segment]);
    }
    const lines = [...byColumn.values()].map((column) => distinct(column.map((segment) => segment.y)).sort((a, b) => b - a));
    const steps = lines.flatMap((column) => column.slice(1).map((y, index) => column[index]! - y)).sort((a, b) => a - b);
    if (byColumn.size < 3 || steps.length === 0) continue;
    const pitch = steps[0]!;
    const size = median(inside.map((segment) => segment.size));
    const anchor = lines.find(
      (column) =>
        column.length >= 2 && column.slice(1).every((y, index) => column[index]! - y > pitch * 1.6) && lines.some((other) => other.length > column.length),
    );
    if (!anchor) continue;
    for (const y of anchor.slice(1)) {
      const top = y + size * 0.8;
      const above = inside.filter((segment) => segment.y > y + size * 0.5).map((segment) => segment.y - segment.size * 0.25);
      if (above.length === 0) continue;
      const at = (top + Math.min(...above)) / 2;
      if (inside.some((segment) => segment.y - segment.size * 0.25 < at && segment.y + segment.size * 0.8 > at)) continue;
      out.push({ at, from: xs[0]!, to: xs.at(-1)!, width });
    }
  }
  return out;
}

/**
 * Rows a grid leaves unruled: between two rules, several text lines that run
 * across most of the columns are rows of their own ("OTSL" and "HTML" under
 * one "6"), and a cell with a single line set between them (vertically
 * centred) spans them. Each such row edge is drawn only over the columns
 * whose text is cut by it, so the lone cells merge down (rowspan). A cell
 * whose text merely wraps onto a second line has no partner line in the
 * other columns and cuts nothing.
 */
function subRowEdges(xs: number[], ys: number[], segments: Segment[], width: number): Line[] {
  const out: Line[] = [];
  const columnOf = (segment: Segment) => columnAt(xs, segment);
  for (let r = 0; r + 1 < ys.length; r++) {
    const inside = bandSegments(segments, ys[r]!, ys[r + 1]!, xs);
    // baselines of the band, each with the columns it has text in
    const lines: { y: number; middle: number; columns: Set<number> }[] = [];
    for (const segment of [...inside].sort((a, b) => b.y - a.y)) {
      const line = lines.find((entry) => Math.abs(entry.y - segment.y) < Math.max(1, segment.size * 0.25));
      if (line) line.columns.add(columnOf(segment));
      else lines.push({ y: segment.y, middle: segment.y + segment.size * 0.3, columns: new Set([columnOf(segment)]) });
    }
    const used = new Set(lines.flatMap((line) => [...line.columns]));
    const full = lines.filter((line) => line.columns.size >= 2 && line.columns.size * 2 >= used.size);
    if (full.length < 2) continue;
    // every column either has its text on the full lines only (one per line) or is one line set among them (spanning)
    const cut = new Set<number>();
    let regular = true;
    for (const column of used) {
      const own = lines.filter((line) => line.columns.has(column));
      if (own.every((line) => full.includes(line))) {
        if (own.length >= 2) cut.add(column);
      } else if (own.length !== 1) regular = false;
    }
    if (!regular || cut.size < 2) continue;
    for (let index = 0; index + 1 < full.length; index++) {
      const at = (full[index]!.middle + full[index + 1]!.middle) / 2;
      for (const column of cut) {
        const upper = full[index]!.columns.has(column);
        const lower = full[index + 1]!.columns.has(column);
        if (upper || lower) out.push({ at, from: xs[column]!, to: xs[column + 1]!, width });
      }
    }
  }
  return out;
}

/**
 * Tables often have no outer vertical border: their horizontal rules run on
 * past the outermost vertical to the table's edge, over the first and last
 * columns. Where at least two rules do, their ends are the table's sides, so
 * those columns belong to it instead of falling out into the text.
 */
function openSides(hs: Line[], vs: Line[]): number[] {
  const first = Math.min(...vs.map((line) => line.at));
  const last = Math.max(...vs.map((line) => line.at));
  const sides: number[] = [];
  const left = hs.filter((line) => line.from < first - TOLERANCE * 4);
  if (left.length >= 2) sides.push(Math.max(...left.map((line) => line.from)));
  const right = hs.filter((line) => line.to > last + TOLERANCE * 4);
  if (right.length >= 2) sides.push(Math.min(...right.map((line) => line.to)));
  return sides;
}

function buildTable(xs: number[], ys: number[], hs: Line[], vs: Line[], segments: Segment[], page: number, boldFonts: Set<string>): RuledTable | undefined {
  const rows = ys.length - 1;
  const cols = xs.length - 1;
  const box = { x: xs[0]!, right: xs.at(-1)!, top: ys[0]!, bottom: ys.at(-1)! };
  const ruleAt = (lines: Line[], at: number, along: number) =>
    lines.find((line) => Math.abs(line.at - at) <= TOLERANCE && along >= line.from - 1 && along <= line.to + 1);
  // grid units joined where the rule between them is missing
  const owner = Array.from({ length: rows * cols }, (_, index) => index);
  const root = (index: number): number => (owner[index] === index ? index : (owner[index] = root(owner[index]!)));
  const unit = (r: number, c: number) => r * cols + c;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      if (c + 1 < cols && !ruleAt(vs, xs[c + 1]!, (ys[r]! + ys[r + 1]!) / 2)) owner[root(unit(r, c + 1))] = root(unit(r, c));
      if (r + 1 < rows && !ruleAt(hs, ys[r + 1]!, (xs[c]! + xs[c + 1]!) / 2)) owner[root(unit(r + 1, c))] = root(unit(r, c));
    }
  }
  let uncertain = false;
  const regions = new Map<number, { r1: number; c1: number; r2: number; c2: number; count: number; runs: Run[]; bold: boolean; text: boolean }>();
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const key = root(unit(r, c));
      const region = regions.get(key);
      if (region) {
        region.r2 = Math.max(region.r2, r);
        region.c2 = Math.max(region.c2, c);
        region.count++;
      } else regions.set(key, { r1: r, c1: c, r2: r, c2: c, count: 1, runs: [], bold: true, text: false });
    }
  }
  // a merged area that is not a rectangle is an irregular grid: the structure is a guess
  for (const region of regions.values()) if (region.count !== (region.r2 - region.r1 + 1) * (region.c2 - region.c1 + 1)) uncertain = true;
  const inside = new Set<Segment>();
  for (const segment of segments) {
    const cx = (segment.x + segment.right) / 2;
    const cy = segment.y + segment.size * 0.3;
    if (cx <= box.x || cx >= box.right || cy <= box.bottom || cy >= box.top) {
      // text half in, half out: the grid misses part of the table
      if (segment.right > box.x + 1 && segment.x < box.right - 1 && cy > box.bottom && cy < box.top) uncertain = true;
      continue;
    }
    const c = xs.findIndex((x, index) => index < cols && cx >= x && cx < xs[index + 1]!);
    const r = ys.findIndex((y, index) => index < rows && cy <= y && cy > ys[index + 1]!);
    if (c < 0 || r < 0) continue;
    inside.add(segment);
    const region = regions.get(root(unit(r, c)))!;
    // text crossing a rule that is drawn belongs to two cells: the grid is not the table's
    if (xs.some((x, index) => index > 0 && index < cols && segment.x < x - 1 && segment.right > x + 1 && ruleAt(vs, x, cy))) uncertain = true;
    if (region.runs.length > 0) region.runs.push({ text: ' ' });
    region.runs.push(...segment.runs);
    region.text = true;
    if (!boldFonts.has(segment.font)) region.bold = false;
  }
  // a grid whose cells are mostly empty is a drawing (a coordinate grid, a diagram), not a table; so is one where
  // some grid row or column starts no cell (its lines are a plot's ticks and axes, not cell borders)
  const all = [...regions.values()];
  // a grid holding no letter or digit at all is a pattern (a lattice of points), not a table
  if (![...inside].some((segment) => /[\p{L}\p{N}]/u.test(segment.text))) return undefined;
  const filled = all.filter((region) => region.text).length;
  if (inside.size === 0 || filled < regions.size * 0.6) return undefined;
  for (let r = 0; r < rows; r++) if (!all.some((region) => region.r1 === r)) return undefined;
  for (let c = 0; c < cols; c++) if (!all.some((region) => region.c1 === c)) return undefined;
  // header rows: leading rows whose every filled cell is bold (when the body is not), else rows closed by a heavier rule
  const rowBold = (r: number) => {
    const filled = [...regions.values()].filter((region) => region.r1 === r && region.text);
    return filled.length > 0 && filled.every((region) => region.bold);
  };
  let headerRows = 0;
  while (headerRows < rows - 1 && rowBold(headerRows)) headerRows++;
  if (headerRows > 0 && Array.from({ length: rows }, (_, r) => r).every(rowBold)) headerRows = 0;
  if (headerRows === 0) {
    const interior = ys.slice(1, -1).map((y) => Math.max(...hs.filter((line) => Math.abs(line.at - y) <= TOLERANCE).map((line) => line.width)));
    const usual = [...interior].sort((a, b) => a - b)[Math.floor(interior.length / 2)] ?? 0;
    const heavier = interior.findIndex((width) => width >= usual * 1.5 && width - usual > 0.2);
    if (heavier >= 0 && heavier < 2 && heavier < rows - 1) headerRows = heavier + 1;
  }
  // a nested header: a first row of labels where one cell stands over several columns (their sub-headers under it) and
  // others span down beside those sub-headers is a header, bold or not
  if (headerRows === 0) {
    const first = all.filter((region) => region.r1 === 0);
    const grouping = first.some((region) => region.c2 > region.c1 && region.c2 - region.c1 + 1 < cols);
    const spanningDown = first.some((region) => region.r2 > 0 && region.r2 < rows - 1);
    const labels = first.every((region) => region.text && !/^[\d\s.,%$€£¥+\-–()]+$/.test(region.runs.map((run) => run.text).join('')));
    if (grouping && spanningDown && labels) headerRows = 1;
  }
  // a header cell spanning down takes the rows it covers into the header
  for (const region of regions.values()) if (region.r1 < headerRows) headerRows = Math.max(headerRows, region.r2 + 1);
  if (headerRows >= rows) headerRows = 0;
  const tableRows: TableCell[][] = [];
  for (let r = 0; r < rows; r++) {
    const row: TableCell[] = [];
    for (let c = 0; c < cols; c++) {
      const region = regions.get(root(unit(r, c)))!;
      if (region.r1 !== r || region.c1 !== c) continue;
      const header = r < headerRows;
      const rowSpan = region.r2 - region.r1 + 1;
      const colSpan = region.c2 - region.c1 + 1;
      row.push({
        header,
        ...(header ? { scope: colSpan > 1 ? ('colgroup' as const) : ('col' as const) } : {}),
        ...(rowSpan > 1 ? { rowSpan } : {}),
        ...(colSpan > 1 ? { colSpan } : {}),
        content: runsToInlines(region.runs),
      });
    }
    tableRows.push(row);
  }
  return { block: { kind: 'table', page, rows: tableRows, ...(uncertain ? { uncertain: true } : {}) }, segments: inside, box };
}

/**
 * Booktabs-style tables (LaTeX booktabs, many reports): horizontal rules
 * only. A top and a bottom rule of the same span enclose text rows whose
 * cells fall into columns by their x-extent; the rows above the first rule of
 * that span in between (the mid rule) are the header, and a shorter rule
 * under a header cell (a cmidrule) gives the columns it spans. A band of
 * prose between two such rules (a caption, a paragraph) separates two tables.
 */
function findBooktabsTables(lines: Line[], segments: Segment[], page: number): RuledTable[] {
  if (lines.length < 2) return [];
  const sameSpan = (a: Line, b: Line) => Math.abs(a.from - b.from) <= TOLERANCE + 1 && Math.abs(a.to - b.to) <= TOLERANCE + 1;
  const byTop = [...lines].sort((a, b) => b.at - a.at);
  const grouped = new Set<Line>();
  const tables: RuledTable[] = [];
  for (const first of byTop) {
    if (grouped.has(first)) continue;
    const group = byTop.filter((line) => !grouped.has(line) && sameSpan(line, first));
    for (const line of group) grouped.add(line);
    let start = 0;
    for (let at = 0; at < group.length; at++) {
      const band = at + 1 < group.length ? rowsBetween(segments, group[at]!, group[at + 1]!) : undefined;
      if (band && !band.crossed && (band.rows.length === 0 || tabular(band.rows))) continue;
      const table = at > start ? booktabsTable(group.slice(start, at + 1), lines, segments, page) : undefined;
      if (table) tables.push(table);
      start = at + 1;
    }
  }
  return tables;
}

/** The text rows between two rules, within their span; `crossed` when some text runs over the span's edge. */
function rowsBetween(segments: Segment[], upper: Line, lower: Line): { rows: Row[]; crossed: boolean } {
  const rows: Row[] = [];
  let crossed = false;
  for (const segment of [...segments].sort((a, b) => b.y - a.y || a.x - b.x)) {
    const cy = segment.y + segment.size * 0.3;
    if (cy >= upper.at || cy <= lower.at) continue;
    const cx = (segment.x + segment.right) / 2;
    if (cx <= upper.from || cx >= upper.to) continue;
    if (segment.x < upper.from - segment.size || segment.right > upper.to + segment.size) crossed = true;
    const row = rows.at(-1);
    if (row && Math.abs(row.y - segment.y) < Math.max(1, segment.size * 0.3)) row.cells.push(segment);
    else rows.push({ y: segment.y, cells: [segment] });
  }
  return { rows, crossed };
}

/** Rows most of which are cut into cells: a table's, not a paragraph's nor two columns' of prose side by side. */
function tabular(rows: Row[]): boolean {
  if (rows.filter((row) => row.cells.length >= 2).length * 2 < rows.length) return false;
  const columns = columnsOf(rows);
  return !columns.some((_, index) => isProse(rows, columns, index));
}

/** Columns: the stretches of x the cells cover, separated by gaps no cell crosses. */
export function columnsOf(rows: Row[]): [number, number][] {
  const intervals = rows.flatMap((row) => row.cells.map((cell) => [cell.x, cell.right] as [number, number])).sort((a, b) => a[0] - b[0]);
  const columns: [number, number][] = [];
  for (const [x, right] of intervals) {
    const last = columns.at(-1);
    if (last && x <= last[1] + 1) last[1] = Math.max(last[1], right);
    else columns.push([x, right]);
  }
  return columns;
}

type Placed = { c1: number; c2: number; runs: Run[] };

/** A row's cells on the columns: each takes the columns its extent (or the cmidrule under it) overlaps, else the nearest. */
function placeRow(cells: Segment[], columns: [number, number][], extentOf: (cell: Segment) => [number, number]): Placed[] {
  const placed: Placed[] = [];
  for (const cell of [...cells].sort((a, b) => a.x - b.x)) {
    const [from, to] = extentOf(cell);
    const covered = columns.flatMap(([x, right], index) => (Math.min(to, right) - Math.max(from, x) > 0 ? [index] : []));
    const centre = (from + to) / 2;
    const nearest = columns.reduce(
      (best, [x, right], index) => (Math.abs((x + right) / 2 - centre) < Math.abs((columns[best]![0] + columns[best]![1]) / 2 - centre) ? index : best),
      0,
    );
    const c1 = covered.length > 0 ? covered[0]! : nearest;
    const c2 = covered.length > 0 ? covered.at(-1)! : nearest;
    const last = placed.at(-1);
    if (last && c1 <= last.c2) {
      last.c2 = Math.max(last.c2, c2);
      last.runs.push({ text: ' ' }, ...cell.runs);
    } else placed.push({ c1, c2, runs: [...cell.runs] });
  }
  return placed;
}

/**
 * Rows that are the lines their cells wrap onto: nothing but rules parts a
 * booktabs table's rows, and none is drawn between them, so a row whose every
 * cell goes on from the cell above it in lower case ("monitoring" under
 * "Growth hormone", "therapy)" under "… (if on growth hormone") is joined to
 * that row. Only in columns whose cells open with capitals or figures: a
 * column of lower-case words has no such tell.
 */
function joinWrappedRows(rows: Placed[][]): Placed[][] {
  const texts = new Map(
    rows.flat().map((cell) => [
      cell,
      cell.runs
        .map((run) => run.text)
        .join('')
        .trim(),
    ]),
  );
  const text = (cell: Placed) => texts.get(cell) ?? '';
  const capitalised = new Set(
    [...new Set(rows.flat().map((cell) => cell.c1))].filter((c) => {
      const cells = rows.flat().filter((cell) => cell.c1 === c && text(cell) !== '');
      return cells.filter((cell) => /^[\p{Lu}\p{N}]/u.test(text(cell))).length * 2 > cells.length;
    }),
  );
  const out: Placed[][] = [];
  for (const row of rows) {
    const above = out.at(-1);
    const wraps =
      above !== undefined &&
      row.length > 0 &&
      row.every((cell) => /^[\p{Ll})\]]/u.test(text(cell)) && capitalised.has(cell.c1) && above.some((other) => other.c1 === cell.c1 && other.c2 === cell.c2));
    if (!wraps) {
      out.push(row.map((cell) => ({ ...cell })));
      continue;
    }
    for (const cell of row) {
      const target = above.find((other) => other.c1 === cell.c1)!;
      target.runs = [...target.runs, { text: ' ' }, ...cell.runs];
    }
  }
  return out;
}

function booktabsTable(rules: Line[], allLines: Line[], segments: Segment[], page: number): RuledTable | undefined {
  const top = rules[0]!;
  const bottom = rules.at(-1)!;
  const { rows, crossed } = rowsBetween(segments, top, bottom);
  if (crossed || rows.length < 2) return undefined;
  // the mid rule: the first rule of the table's span inside it with text rows on both sides
  const mid = rules.slice(1, -1).find((rule) => rows.some((row) => row.y > rule.at) && rows.some((row) => row.y < rule.at));
  const head = mid ? rows.filter((row) => row.y > mid.at) : [];
  const body = rows.slice(head.length);
  const most = Math.max(...body.map((row) => row.cells.length));
  if (most < 2 || !tabular(body)) return undefined;
  // columns from the rows with the most cells: a spanning cell elsewhere must not merge two columns
  const columns = columnsOf(body.filter((row) => row.cells.length === most));
  const width = top.to - top.from;
  const cells = body.flatMap((row) => row.cells);
  const averageWidth = cells.reduce((sum, cell) => sum + cell.right - cell.x, 0) / cells.length;
  // table cells are short; two columns of prose between a page's head and foot rules are not a table
  if (columns.length < 2 || averageWidth > width * (columns.length === 2 ? 0.35 : 0.45)) return undefined;
  const cmidrules = mid
    ? allLines.filter(
        (line) =>
          line.at > mid.at &&
          line.at < top.at &&
          line.from >= top.from - TOLERANCE &&
          line.to <= top.to + TOLERANCE &&
          line.to - line.from < width - TOLERANCE * 2,
      )
    : [];
  const extentOf = (cell: Segment): [number, number] => {
    const centre = (cell.x + cell.right) / 2;
    const under = cmidrules.find((rule) => rule.at < cell.y && cell.y - rule.at < cell.size * 2 && centre >= rule.from - 1 && centre <= rule.to + 1);
    return under ? [under.from, under.to] : [cell.x, cell.right];
  };
  const headRows = head.map((row) => placeRow(row.cells, columns, extentOf));
  // a header cell alone in its column over the header rows (multirow) spans them all
  const spanning = new Map<Placed, number>();
  for (let c = 0; c < columns.length; c++) {
    const owners = headRows.flatMap((row, r) => row.filter((cell) => cell.c1 <= c && cell.c2 >= c).map((cell) => ({ cell, r })));
    if (headRows.length > 1 && owners.length === 1 && owners[0]!.cell.c1 === owners[0]!.cell.c2) spanning.set(owners[0]!.cell, owners[0]!.r);
  }
  for (const [cell, r] of spanning) {
    headRows[r]!.splice(headRows[r]!.indexOf(cell), 1);
    headRows[0]!.push(cell);
  }
  const tableRows: TableCell[][] = [];
  const emit = (placed: Placed[], header: boolean, spannedColumns: Set<number>) => {
    const row: TableCell[] = [];
    for (let c = 0; c < columns.length; c++) {
      if (spannedColumns.has(c)) continue;
      const cell = placed.find((entry) => entry.c1 === c);
      const colSpan = cell ? cell.c2 - cell.c1 + 1 : 1;
      const rowSpan = cell && spanning.has(cell) ? headRows.length : 1;
      row.push({
        header,
        ...(header ? { scope: colSpan > 1 ? ('colgroup' as const) : ('col' as const) } : {}),
        ...(rowSpan > 1 ? { rowSpan } : {}),
        ...(colSpan > 1 ? { colSpan } : {}),
        content: cell ? runsToInlines(cell.runs) : [],
      });
      c += colSpan - 1;
    }
    tableRows.push(row);
  };
  const spannedBelow = new Set([...spanning.keys()].map((cell) => cell.c1));
  headRows.forEach((placed, r) => emit(placed, true, r === 0 ? new Set() : spannedBelow));
  for (const placed of joinWrappedRows(body.map((row) => placeRow(row.cells, columns, (cell) => [cell.x, cell.right])))) emit(placed, false, new Set());
  return {
    block: { kind: 'table', page, rows: tableRows, ...(mid ? {} : { uncertain: true }) },
    segments: new Set(rows.flatMap((row) => row.cells)),
    box: { x: top.from, right: top.to, top: top.at, bottom: bottom.at },
  };
}
