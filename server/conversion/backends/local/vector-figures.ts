import type { Mark } from './drawing.ts';
import type { Segment } from './segments.ts';

/**
 * Figures drawn with path operators (charts, diagrams) on an untagged page:
 * the page's painted marks, less those that are no drawing (table rules,
 * page frames, text backgrounds and boxes around text, list bullets),
 * clustered by proximity; a cluster is a figure when it holds real drawing
 * (something curved, slanted or filled, or many lines with little text among
 * them) and is big enough to be seen as a picture. The short text drawn in
 * or at the edge of the cluster (axis labels, legends) belongs to it.
 */

export type Box = { x0: number; y0: number; x1: number; y1: number };
export type VectorFigure = { box: Box; segments: Segment[] };

/** A figure is at least this big (points) on its long side, and a third of it on the short one. */
const MIN_SIDE = 36;
/** A mark covering this share of the page both ways is a page frame or background. */
const PAGE_SHARE = 0.6;
/** A shape whose area text covers this much is a box around text (a callout, a theorem box), not a drawing. */
const TEXT_BOX_SHARE = 0.2;
/** A drawing wholly within this share of the page's height from its top or bottom edge is page furniture (a masthead, a logo). */
const MARGIN_SHARE = 0.12;
/** White space kept around a rendered figure (points). */
const PADDING = 4;
/** Lines alone make a figure (a grid, an org chart) when there are this many and at most half as many text pieces. */
const MIN_LINES = 6;

const area = (box: Box) => Math.max(0, box.x1 - box.x0) * Math.max(0, box.y1 - box.y0);
const overlap = (a: Box, b: Box) => Math.max(0, Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0)) * Math.max(0, Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0));
const near = (a: Box, b: Box, gap: number) => a.x0 <= b.x1 + gap && b.x0 <= a.x1 + gap && a.y0 <= b.y1 + gap && b.y0 <= a.y1 + gap;
const union = (a: Box, b: Box): Box => ({ x0: Math.min(a.x0, b.x0), y0: Math.min(a.y0, b.y0), x1: Math.max(a.x1, b.x1), y1: Math.max(a.y1, b.y1) });
const inside = (box: Box, outer: Box) => box.x0 >= outer.x0 && box.x1 <= outer.x1 && box.y0 >= outer.y0 && box.y1 <= outer.y1;
const centreIn = (box: Box, outer: Box) =>
  (box.x0 + box.x1) / 2 >= outer.x0 && (box.x0 + box.x1) / 2 <= outer.x1 && (box.y0 + box.y1) / 2 >= outer.y0 && (box.y0 + box.y1) / 2 <= outer.y1;
const textBox = (segment: Segment): Box => ({
  x0: segment.x,
  x1: segment.right,
  y0: segment.y - segment.size * 0.25,
  y1: segment.y + segment.size * 0.8,
});

/** A caption's opening words: "Figure 3:", "Fig. 2.", "Abbildung 1.1:". */
export const FIGURE_CAPTION = /^(figure|fig\.?|abbildung|abb\.|figura|afbeelding)\s*[A-Z]?\d/iu;

/** A mark kept for clustering: strong when it is drawing; whether text sits inside it. */
type Member = Mark & { strong: boolean; holdsText: boolean };
type Cluster = Box & { members: Member[] };

export function findVectorFigures(
  marks: Mark[],
  segments: Segment[],
  options: { body: number; pageWidth: number; pageHeight: number; exclude: Box[] },
): VectorFigure[] {
  const { body } = options;
  // most text pages draw only rules (underlines, fraction bars, table borders): nothing to look for
  if (!marks.some((mark) => mark.kind !== 'line')) return [];
  const texts = segments.map((segment) => ({ segment, box: textBox(segment) }));
  const kept: Member[] = [];
  for (const mark of marks) {
    const width = mark.x1 - mark.x0;
    const height = mark.y1 - mark.y0;
    if (width > options.pageWidth * PAGE_SHARE && height > options.pageHeight * PAGE_SHARE) continue;
    if (options.exclude.some((box) => centreIn(mark, { x0: box.x0 - 2, y0: box.y0 - 2, x1: box.x1 + 2, y1: box.y1 + 2 }))) continue;
    if (mark.kind === 'line') {
      kept.push({ ...mark, strong: false, holdsText: false });
      continue;
    }
    // a box around text: a filled rectangle behind it is its background (no ink of a figure); a frame, or a
    // shape mostly filled with text, is only weak evidence; a shape holding a label (a pie slice) is drawing
    const within = height >= body * 0.6 ? texts.filter((text) => centreIn(text.box, mark)) : [];
    if (within.length > 0) {
      const covered = within.reduce((sum, text) => sum + overlap(text.box, mark), 0);
      if (mark.kind === 'rect' || covered >= area(mark) * TEXT_BOX_SHARE) {
        if (!mark.filled) kept.push({ ...mark, strong: false, holdsText: true });
        continue;
      }
    }
    // a small mark just left of a line of text is its bullet or check box
    const bullet =
      width <= body &&
      height <= body &&
      texts.some((text) => text.box.x0 >= mark.x1 - 1 && text.box.x0 - mark.x1 <= body * 1.5 && text.box.y0 < mark.y1 && text.box.y1 > mark.y0);
    kept.push({ ...mark, strong: !bullet, holdsText: within.length > 0 });
  }
  if (!kept.some((mark) => mark.strong)) return [];
  const gap = Math.max(4, body * 0.8);
  let clusters: Cluster[] = [];
  for (const mark of kept) clusters = merge(clusters, { x0: mark.x0, y0: mark.y0, x1: mark.x1, y1: mark.y1, members: [mark] }, gap);
  // a cluster grown by a merge may now reach another
  for (let before = Infinity; clusters.length < before; ) {
    before = clusters.length;
    clusters = clusters.reduce<Cluster[]>((out, cluster) => merge(out, cluster, gap), []);
  }
  const figures: VectorFigure[] = [];
  for (const cluster of clusters) {
    const box = drawingBox(cluster);
    if (!box) continue;
    const width = box.x1 - box.x0;
    const height = box.y1 - box.y0;
    if (Math.max(width, height) < MIN_SIDE || Math.min(width, height) < MIN_SIDE / 3) continue;
    // page furniture: a masthead or a footer logo in the top or bottom margin
    if (box.y0 >= options.pageHeight * (1 - MARGIN_SHARE) || box.y1 <= options.pageHeight * MARGIN_SHARE) continue;
    const within = texts.filter((text) => centreIn(text.box, box));
    const strong = cluster.members.some((mark) => mark.strong);
    if (!strong && (cluster.members.length < MIN_LINES || within.length * 2 > cluster.members.length)) continue;
    // lines of running text inside are a text region with decoration, not a picture
    if (within.filter((text) => text.segment.size >= body * 0.9 && text.segment.text.split(/\s+/).length >= 6).length >= 3) continue;
    // labels: text inside, and short text just outside the edge (tick labels, axis titles)
    const reach = { x0: box.x0 - body * 3, y0: box.y0 - body * 1.5, x1: box.x1 + body * 3, y1: box.y1 + body * 1.5 };
    const labels = texts.filter(
      (text) => !FIGURE_CAPTION.test(text.segment.text) && (centreIn(text.box, box) || (inside(text.box, reach) && text.segment.text.split(/\s+/).length <= 4)),
    );
    const extent = labels.reduce<Box>((out, text) => union(out, text.box), box);
    figures.push({
      box: { x0: extent.x0 - PADDING, y0: extent.y0 - PADDING, x1: extent.x1 + PADDING, y1: extent.y1 + PADDING },
      segments: labels.map((text) => text.segment),
    });
  }
  // figures whose labels made them overlap are one
  const merged: VectorFigure[] = [];
  for (const figure of figures.sort((a, b) => b.box.y1 - a.box.y1)) {
    const other = merged.find((entry) => overlap(entry.box, figure.box) > 0);
    if (other) {
      other.box = union(other.box, figure.box);
      other.segments = [...new Set([...other.segments, ...figure.segments])];
    } else merged.push(figure);
  }
  return merged;
}

/** Adds a cluster to a list, merged with every cluster it comes near. */
function merge(clusters: Cluster[], cluster: Cluster, gap: number): Cluster[] {
  const out: Cluster[] = [];
  let joined = cluster;
  for (const other of clusters) {
    if (!near(other, joined, gap)) {
      out.push(other);
      continue;
    }
    const [big, small] = other.members.length >= joined.members.length ? [other, joined] : [joined, other];
    for (const member of small.members) big.members.push(member);
    joined = { ...union(other, joined), members: big.members };
  }
  out.push(joined);
  return out;
}

/**
 * The part of a cluster that is drawing: its strong marks and its lines,
 * less a lone rule running far beyond the rest (a page-wide line under a
 * logo), which touches no other line the way axes touch their ticks and grid
 * lines cross. Undefined for a cluster of one or two plain boxes (a tint
 * band, a colour block), and for one shape with text in it (a rounded
 * callout); two or more (the circles of a Venn diagram) are drawing.
 * Without strong marks, the cluster's lines are the drawing.
 */
function drawingBox(cluster: Cluster): Box | undefined {
  const strong = cluster.members.filter((mark) => mark.strong);
  if (strong.length === 0) return cluster;
  if (!strong.some((mark) => mark.kind === 'shape') && strong.length < 3) return undefined;
  if (strong.length === 1 && strong[0]!.holdsText) return undefined;
  const core = strong.reduce<Box>((out, mark) => union(out, mark), strong[0]!);
  const lines = cluster.members.filter((mark) => !mark.strong);
  const lone = (line: Box) => {
    const long = line.x1 - line.x0 >= line.y1 - line.y0 ? line.x1 - line.x0 > (core.x1 - core.x0) * 2 : line.y1 - line.y0 > (core.y1 - core.y0) * 2;
    return long && !lines.some((other) => other !== line && near(other, line, 1));
  };
  return lines.filter((line) => !lone(line)).reduce<Box>((out, mark) => union(out, mark), core);
}
