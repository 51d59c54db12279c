import { OPS } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { Block, TableCell } from '../../model.ts';
import { runsToInlines, type Run } from './inline.ts';
import type { Segment } from './layout.ts';

/**
 * Tables drawn with ruling lines ("lattice" tables). The page's operator
 * list gives the strokes and thin filled rectangles; horizontal and vertical
 * rules that touch form a grid; text falls into its cells; a cell whose
 * inner rule is missing spans the cells it covers. The first rows are
 * headers when they are bold, or when a heavier rule closes them.
 */

/** A horizontal (y1 = y2) or vertical (x1 = x2) rule in page space, with its stroke width. */
export type Rule = { x1: number; y1: number; x2: number; y2: number; width: number };
/** The part of pdf.js's operator list we read. */
export type OperatorList = { fnArray: ArrayLike<number>; argsArray: ArrayLike<unknown> };
/** A filled rectangle thinner than this is drawn as a rule (Word and LibreOffice draw cell borders so). */
const MAX_RULE_THICKNESS = 3;
/** Rules closer than this are the same line; ends closer than this touch. */
const TOLERANCE = 2;

const STROKES = new Set<number>([OPS.stroke, OPS.closeStroke, OPS.fillStroke, OPS.eoFillStroke, OPS.closeFillStroke, OPS.closeEOFillStroke]);
const FILLS = new Set<number>([OPS.fill, OPS.eoFill]);

/** Ruling lines, from one walk of the operator list (with the transform in force). */
export function readRules(list: OperatorList): Rule[] {
  const rules: Rule[] = [];
  const stack: { ctm: number[]; lineWidth: number }[] = [];
  let ctm = [1, 0, 0, 1, 0, 0];
  let lineWidth = 1;
  const apply = (x: number, y: number): [number, number] => [ctm[0]! * x + ctm[2]! * y + ctm[4]!, ctm[1]! * x + ctm[3]! * y + ctm[5]!];
  for (let index = 0; index < list.fnArray.length; index++) {
    const op = list.fnArray[index];
    const args = list.argsArray[index] as unknown[] | null;
    if (op === OPS.save) stack.push({ ctm, lineWidth });
    else if (op === OPS.restore) ({ ctm, lineWidth } = stack.pop() ?? { ctm: [1, 0, 0, 1, 0, 0], lineWidth: 1 });
    else if (op === OPS.transform) {
      const [a, b, c, d, e, f] = args as number[];
      const [A, B, C, D, E, F] = ctm as [number, number, number, number, number, number];
      ctm = [a! * A + b! * C, a! * B + b! * D, c! * A + d! * C, c! * B + d! * D, e! * A + f! * C + E, e! * B + f! * D + F];
    } else if (op === OPS.setLineWidth) lineWidth = Number((args as number[])[0]) || 0;
    else if (op === OPS.constructPath && args) {
      // pdf.js 5+: [paint op, [path data: moveTo 0 / lineTo 1 / curveTo 2 / quadraticCurveTo 3 / closePath 4], bbox]
      const paint = args[0] as number;
      const data = (args[1] as ArrayLike<number>[] | undefined)?.[0];
      if (!data || (!STROKES.has(paint) && !FILLS.has(paint))) continue;
      const scale = Math.hypot(ctm[0]!, ctm[1]!) || 1;
      for (const subpath of subpaths(data)) {
        const points = subpath.points.map(([x, y]) => apply(x, y));
        if (STROKES.has(paint)) {
          const edges = subpath.closed ? points.length : points.length - 1;
          for (let at = 0; at < edges; at++) addRule(rules, points[at]!, points[(at + 1) % points.length]!, Math.max(lineWidth * scale, 0.1));
        } else {
          const box = thinBox(points);
          if (box) rules.push(box);
        }
      }
    }
  }
  return rules;
}

function subpaths(data: ArrayLike<number>): { points: [number, number][]; closed: boolean }[] {
  const out: { points: [number, number][]; closed: boolean }[] = [];
  let current: { points: [number, number][]; closed: boolean } | undefined;
  for (let at = 0; at < data.length; ) {
    const code = data[at++];
    if (code === 0) {
      current = { points: [[data[at++]!, data[at++]!]], closed: false };
      out.push(current);
    } else if (code === 1) current?.points.push([data[at++]!, data[at++]!]);
    else if (code === 2) {
      // a curve is no rule: the subpath ends here
      at += 6;
      current = undefined;
    } else if (code === 3) {
      at += 4;
      current = undefined;
    } else if (code === 4) {
      if (current) current.closed = true;
    } else break;
  }
  return out;
}

function addRule(rules: Rule[], [x1, y1]: [number, number], [x2, y2]: [number, number], width: number) {
  const horizontal = Math.abs(y1 - y2) < 0.5;
  const vertical = Math.abs(x1 - x2) < 0.5;
  if (horizontal === vertical) return;
  if (horizontal && Math.abs(x2 - x1) > TOLERANCE) rules.push({ x1: Math.min(x1, x2), x2: Math.max(x1, x2), y1, y2: y1, width });
  if (vertical && Math.abs(y2 - y1) > TOLERANCE) rules.push({ x1, x2: x1, y1: Math.min(y1, y2), y2: Math.max(y1, y2), width });
}

/** A filled axis-aligned rectangle thin enough to be a rule, as that rule. */
function thinBox(points: [number, number][]): Rule | undefined {
  if (points.length < 4 || points.length > 5) return undefined;
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  // axis-aligned: every point sits on the box's edges in both directions
  const [left, right, bottom, top] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  if (!points.every(([x, y]) => (Math.abs(x - left) < 0.5 || Math.abs(x - right) < 0.5) && (Math.abs(y - bottom) < 0.5 || Math.abs(y - top) < 0.5))) return undefined;
  const width = right - left;
  const height = top - bottom;
  if (height <= MAX_RULE_THICKNESS && width > TOLERANCE * 2) return { x1: left, x2: right, y1: (top + bottom) / 2, y2: (top + bottom) / 2, width: height };
  if (width <= MAX_RULE_THICKNESS && height > TOLERANCE * 2) return { x1: (left + right) / 2, x2: (left + right) / 2, y1: bottom, y2: top, width };
  return undefined;
}

export type RuledTable = { block: Block & { kind: 'table' }; segments: Set<Segment>; box: { x: number; right: number; top: number; bottom: number } };

type Line = { at: number; from: number; to: number; width: number };

/** Collinear pieces of one rule (a border drawn cell by cell) joined. */
function mergeLines(lines: Line[]): Line[] {
  lines.sort((a, b) => a.at - b.at || a.from - b.from);
  const out: Line[] = [];
  for (const line of lines) {
    const last = out.at(-1);
    if (last && Math.abs(last.at - line.at) < 1 && line.from <= last.to + TOLERANCE) {
      last.to = Math.max(last.to, line.to);
      last.width = Math.max(last.width, line.width);
    } else out.push({ ...line });
  }
  return out;
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
  if (horizontals.length < 2 || verticals.length < 2) return [];
  // grids: horizontal and vertical rules that touch, grouped (union-find)
  const all = [...horizontals.map((line) => ({ line, horizontal: true })), ...verticals.map((line) => ({ line, horizontal: false }))];
  const parent = all.map((_, index) => index);
  const find = (index: number): number => (parent[index] === index ? index : (parent[index] = find(parent[index]!)));
  for (let h = 0; h < horizontals.length; h++) {
    for (let v = 0; v < verticals.length; v++) {
      const hl = horizontals[h]!;
      const vl = verticals[v]!;
      if (vl.at >= hl.from - TOLERANCE && vl.at <= hl.to + TOLERANCE && hl.at >= vl.from - TOLERANCE && hl.at <= vl.to + TOLERANCE) parent[find(h)] = find(horizontals.length + v);
    }
  }
  const groups = new Map<number, typeof all>();
  for (const [index, entry] of all.entries()) groups.set(find(index), [...(groups.get(find(index)) ?? []), entry]);
  const tables: RuledTable[] = [];
  for (const group of groups.values()) {
    const hs = group.filter((entry) => entry.horizontal).map((entry) => entry.line);
    const vs = group.filter((entry) => !entry.horizontal).map((entry) => entry.line);
    const ys = distinct(hs.map((line) => line.at)).reverse();
    const xs = distinct(vs.map((line) => line.at));
    if (ys.length < 3 || xs.length < 3) continue;
    const table = buildTable(xs, ys, hs, vs, segments, page, boldFonts);
    if (table) tables.push(table);
  }
  return tables;
}

function buildTable(xs: number[], ys: number[], hs: Line[], vs: Line[], segments: Segment[], page: number, boldFonts: Set<string>): RuledTable | undefined {
  const rows = ys.length - 1;
  const cols = xs.length - 1;
  const box = { x: xs[0]!, right: xs.at(-1)!, top: ys[0]!, bottom: ys.at(-1)! };
  const ruleAt = (lines: Line[], at: number, along: number) => lines.find((line) => Math.abs(line.at - at) <= TOLERANCE && along >= line.from - 1 && along <= line.to + 1);
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
