import { OPS } from 'pdfjs-dist/legacy/build/pdf.mjs';

/**
 * What an untagged page draws with path operators, from one walk of its
 * operator list: the ruling lines tables are made of, and every painted
 * subpath as a mark (its box and its shape class) for finding drawings
 * (charts, diagrams) that no image holds.
 */

/** A horizontal (y1 = y2) or vertical (x1 = x2) rule in page space, with its stroke width. */
export type Rule = { x1: number; y1: number; x2: number; y2: number; width: number };
/**
 * One painted subpath in page space: 'line' for rules and axis-aligned
 * strokes (underlines, axes, ticks), 'rect' for an axis-aligned rectangle
 * thicker than a rule, 'shape' for anything curved, slanted or polygonal.
 */
export type Mark = { x0: number; y0: number; x1: number; y1: number; kind: 'line' | 'rect' | 'shape'; filled: boolean };
/** The part of pdf.js's operator list we read. */
export type OperatorList = { fnArray: ArrayLike<number>; argsArray: ArrayLike<unknown> };
export type Drawing = { rules: Rule[]; marks: Mark[] };

/** A filled rectangle thinner than this is drawn as a rule (Word and LibreOffice draw cell borders so). */
const MAX_RULE_THICKNESS = 3;
/** Rules closer than this are the same line; ends closer than this touch. */
export const TOLERANCE = 2;
/**
 * Marks kept per page; beyond it (a map, a dense scatter plot) further marks
 * are pooled into one box, which is all figure detection needs of them.
 */
const MAX_MARKS = 20_000;

const STROKES = new Set<number>([OPS.stroke, OPS.closeStroke, OPS.fillStroke, OPS.eoFillStroke, OPS.closeFillStroke, OPS.closeEOFillStroke]);
const FILLS = new Set<number>([OPS.fill, OPS.eoFill]);
const FILLED = new Set<number>([OPS.fill, OPS.eoFill, OPS.fillStroke, OPS.eoFillStroke, OPS.closeFillStroke, OPS.closeEOFillStroke]);
/** pdf.js hands every fill and stroke colour over as "#rrggbb" */
const WHITE = '#ffffff';

type State = { ctm: number[]; lineWidth: number; fillWhite: boolean; strokeWhite: boolean };

/** Rules and marks, from one walk of the operator list (with the transform and colours in force). */
export function readDrawing(list: OperatorList): Drawing {
  const rules: Rule[] = [];
  const marks: Mark[] = [];
  const stack: State[] = [];
  let state: State = { ctm: [1, 0, 0, 1, 0, 0], lineWidth: 1, fillWhite: false, strokeWhite: false };
  const apply = (x: number, y: number): [number, number] => {
    const ctm = state.ctm;
    return [ctm[0]! * x + ctm[2]! * y + ctm[4]!, ctm[1]! * x + ctm[3]! * y + ctm[5]!];
  };
  const transform = ([a, b, c, d, e, f]: number[]) => {
    const [A, B, C, D, E, F] = state.ctm as [number, number, number, number, number, number];
    state.ctm = [a! * A + b! * C, a! * B + b! * D, c! * A + d! * C, c! * B + d! * D, e! * A + f! * C + E, e! * B + f! * D + F];
  };
  let pooled: Mark | undefined;
  const addMark = (mark: Mark) => {
    if (marks.length < MAX_MARKS) {
      marks.push(mark);
      return;
    }
    if (!pooled) {
      pooled = { ...mark, kind: 'shape' };
      marks.push(pooled);
    } else
      Object.assign(pooled, {
        x0: Math.min(pooled.x0, mark.x0),
        y0: Math.min(pooled.y0, mark.y0),
        x1: Math.max(pooled.x1, mark.x1),
        y1: Math.max(pooled.y1, mark.y1),
      });
  };
  for (let index = 0; index < list.fnArray.length; index++) {
    const op = list.fnArray[index];
    const args = list.argsArray[index] as unknown[] | null;
    if (op === OPS.save) stack.push({ ...state });
    else if (op === OPS.restore) state = stack.pop() ?? state;
    else if (op === OPS.transform) transform(args as number[]);
    else if (op === OPS.paintFormXObjectBegin) {
      // a form XObject (a LaTeX \includegraphics of a PDF, a chart) draws under its own matrix, inside a save/restore
      stack.push({ ...state });
      if (Array.isArray(args?.[0]) || ArrayBuffer.isView(args?.[0])) transform(Array.from(args![0] as ArrayLike<number>));
    } else if (op === OPS.paintFormXObjectEnd) state = stack.pop() ?? state;
    else if (op === OPS.setLineWidth) state.lineWidth = Number((args as number[])[0]) || 0;
    else if (op === OPS.setFillRGBColor) state.fillWhite = String(args?.[0]).toLowerCase() === WHITE;
    else if (op === OPS.setStrokeRGBColor) state.strokeWhite = String(args?.[0]).toLowerCase() === WHITE;
    else if (op === OPS.setFillColorN) state.fillWhite = false;
    else if (op === OPS.setStrokeColorN) state.strokeWhite = false;
    else if (op === OPS.setFillTransparent) state.fillWhite = true;
    else if (op === OPS.setStrokeTransparent) state.strokeWhite = true;
    else if (op === OPS.constructPath && args) {
      // pdf.js 5+: [paint op, [path data: moveTo 0 / lineTo 1 / curveTo 2 / quadraticCurveTo 3 / closePath 4], bbox]
      const paint = args[0] as number;
      const data = (args[1] as ArrayLike<number>[] | undefined)?.[0];
      const stroked = STROKES.has(paint);
      const filled = FILLED.has(paint);
      if (!data || (!stroked && !filled)) continue;
      const scale = Math.hypot(state.ctm[0]!, state.ctm[1]!) || 1;
      // white on white paper is no ink: a figure's background, a knocked-out area
      const visible = (filled && !state.fillWhite) || (stroked && !state.strokeWhite);
      for (const subpath of subpaths(data)) {
        const points = subpath.points.map(([x, y]) => apply(x, y));
        const straight = points.slice(0, subpath.straight);
        if (stroked) {
          const edges = subpath.closed && straight.length === points.length ? straight.length : straight.length - 1;
          for (let at = 0; at < edges; at++) addRule(rules, straight[at]!, straight[(at + 1) % straight.length]!, Math.max(state.lineWidth * scale, 0.1));
        } else if (FILLS.has(paint) && straight.length === points.length) {
          const box = thinBox(points);
          if (box) rules.push(box);
        }
        if (visible && points.length > 1) addMark(classify(points, subpath, filled, stroked));
      }
    }
  }
  return { rules, marks };
}

type Subpath = { points: [number, number][]; closed: boolean; curved: boolean; straight: number };

/** Subpaths with every point (curve control points included); `straight` counts the points before the first curve. */
function subpaths(data: ArrayLike<number>): Subpath[] {
  const out: Subpath[] = [];
  let current: Subpath | undefined;
  const curve = (count: number, at: number) => {
    if (!current) return;
    for (let point = 0; point < count; point++) current.points.push([data[at + point * 2]!, data[at + point * 2 + 1]!]);
    current.curved = true;
  };
  for (let at = 0; at < data.length; ) {
    const code = data[at++];
    if (code === 0) {
      current = { points: [[data[at++]!, data[at++]!]], closed: false, curved: false, straight: 1 };
      out.push(current);
    } else if (code === 1) {
      current?.points.push([data[at++]!, data[at++]!]);
      if (current && !current.curved) current.straight = current.points.length;
    } else if (code === 2) {
      curve(3, at);
      at += 6;
    } else if (code === 3) {
      curve(2, at);
      at += 4;
    } else if (code === 4) {
      if (current) current.closed = true;
    } else break;
  }
  return out;
}

function classify(points: [number, number][], subpath: Subpath, filled: boolean, stroked: boolean): Mark {
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  const box = { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs), y1: Math.max(...ys), filled };
  if (subpath.curved) return { ...box, kind: 'shape' };
  const closing = subpath.closed || filled ? 1 : 0;
  let edges = 0;
  for (let at = 0; at + 1 < points.length + closing; at++) {
    const [ax, ay] = points[at]!;
    const [bx, by] = points[(at + 1) % points.length]!;
    if (Math.abs(ax - bx) >= 0.5 && Math.abs(ay - by) >= 0.5) return { ...box, kind: 'shape' };
    if (Math.abs(ax - bx) >= 0.5 || Math.abs(ay - by) >= 0.5) edges++;
  }
  if (Math.min(box.x1 - box.x0, box.y1 - box.y0) <= MAX_RULE_THICKNESS) return { ...box, kind: 'line' };
  const onEdges = points.every(
    ([x, y]) => (Math.abs(x - box.x0) < 0.5 || Math.abs(x - box.x1) < 0.5) && (Math.abs(y - box.y0) < 0.5 || Math.abs(y - box.y1) < 0.5),
  );
  if (onEdges && points.length <= 5) return { ...box, kind: 'rect' };
  // an open stroke of one or two axis-aligned pieces is an axis or a bracket; longer ones (steps) and filled polygons are drawing
  return { ...box, kind: stroked && !filled && edges <= 2 ? 'line' : 'shape' };
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
  if (!points.every(([x, y]) => (Math.abs(x - left) < 0.5 || Math.abs(x - right) < 0.5) && (Math.abs(y - bottom) < 0.5 || Math.abs(y - top) < 0.5)))
    return undefined;
  const width = right - left;
  const height = top - bottom;
  if (height <= MAX_RULE_THICKNESS && width > TOLERANCE * 2) return { x1: left, x2: right, y1: (top + bottom) / 2, y2: (top + bottom) / 2, width: height };
  if (width <= MAX_RULE_THICKNESS && height > TOLERANCE * 2) return { x1: (left + right) / 2, x2: (left + right) / 2, y1: bottom, y2: top, width };
  return undefined;
}
