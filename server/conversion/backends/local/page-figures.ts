import type { PageFrame } from './page-frame.ts';
import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { Block } from '../../model.ts';
import type { OperatorList } from './drawing.ts';
import {
  encodeImage,
  MIN_IMAGE_PIXELS,
  overlapArea,
  placeImages,
  renderRegions,
  type Box,
  type createImageBudget,
  type FigureImage,
  type PlacedImage,
} from './images.ts';
import { inlineText } from './inline.ts';
import type { StoredJpeg } from './pdf-bytes.ts';
import { shareOperatorList } from './pdf.ts';
import type { BlockAnchor, Layout } from './layout.ts';
import { mcidOf, referencedIds, type StructNode } from './tagged.ts';
import type { TextItem } from './text-layer.ts';
import { FIGURE_CAPTION } from './vector-figures.ts';

/**
 * Figures of a page: pictures drawn as images, drawings made of paths, their
 * place in the reading order and their captions (untagged pages), and the
 * pixels of the Figure elements of a tagged page.
 */

type ImageBudget = ReturnType<typeof createImageBudget>;

/** Images smaller than this (points, either side) are bullets, rules or specks, not figures. */
const MIN_FIGURE_SIDE = 36;
/** A tagged Figure that paints no image and only paths within this many points either way is a mark set among the text (a check box, a bullet a word processor tags as a Figure): nothing to describe. */
const MARK_SIDE = 16;
/** An image covering this share of a page that has text is the scan under an OCR text layer, not a figure. */
const SCAN_BACKGROUND_SHARE = 0.8;
/** An image this many times longer than wide (or the reverse) is a rule or a border strip: decorative. */
const DECORATIVE_ASPECT = 10;

/** Images drawn on the page big enough to be figures (bullets and rules left out), from the operator list. */
export function findImages(list: OperatorList): PlacedImage[] {
  return placeImages(list as Parameters<typeof placeImages>[0]).filter(
    (image) =>
      image.x1 - image.x0 >= MIN_FIGURE_SIDE &&
      image.y1 - image.y0 >= MIN_FIGURE_SIDE &&
      image.pixelWidth >= MIN_IMAGE_PIXELS &&
      image.pixelHeight >= MIN_IMAGE_PIXELS,
  );
}

/**
 * The figures of an untagged page placed among its blocks, with their
 * captions: its images (less the scan under a searchable scan's text) and the
 * drawings the layout found, each rendered whole with any image it is drawn
 * over or around. `frame` is the layout's (page-frame.ts): images are
 * placed in it, drawings rendered back in page space.
 */
export async function addUntaggedFigures(
  page: PDFPageProxy,
  pageNumber: number,
  layout: Layout,
  images: PlacedImage[],
  frame: PageFrame,
  budget: ImageBudget,
  /** other boxed blocks placed among the text like figures (a page's form), never captioned */
  others: { block: Block; box: Box }[] = [],
  /** the document's stored JPEGs, which pictures drawn from them carry as they are (storedJpegs) */
  jpegs: StoredJpeg[] = [],
): Promise<{ blocks: Block[]; needingAlt: number }> {
  const pageArea = frame.width * frame.height;
  // the scan under a searchable scan's invisible text is the page itself, not a figure on it
  const pictures = images.filter((image) => !image.artifact && (image.x1 - image.x0) * (image.y1 - image.y0) < pageArea * SCAN_BACKGROUND_SHARE);
  const placed: { block: Block; box: Box }[] = [];
  // a drawing is rendered whole, with any image it is drawn over or around
  const inDrawing = new Set<PlacedImage>();
  const drawings = layout.figures.map((drawn) => {
    let box = drawn.box;
    for (const image of pictures) {
      const local = frame.box(image);
      if (overlapArea(local, box) < (local.x1 - local.x0) * (local.y1 - local.y0) * 0.5) continue;
      inDrawing.add(image);
      box = { x0: Math.min(box.x0, local.x0), y0: Math.min(box.y0, local.y0), x1: Math.max(box.x1, local.x1), y1: Math.max(box.y1, local.y1) };
    }
    return { box, segments: drawn.segments };
  });
  const rendered =
    drawings.length === 0 || budget.full
      ? []
      : await renderRegions(
          page,
          drawings.map(({ box }) => frame.pageBox(box)),
        ).catch(() => []);
  for (const [index, { box, segments }] of drawings.entries()) {
    const picture = rendered[index];
    const kept = picture && budget.take(picture) ? picture : undefined;
    const text = segments
      .sort((a, b) => b.y - a.y || a.x - b.x)
      .map((segment) => segment.text)
      .join(' ');
    placed.push({
      block: { kind: 'figure', page: pageNumber, ...(kept ? { image: kept } : {}), ...(text ? { text } : {}), decorative: false, needsAlt: true },
      box,
    });
  }
  for (const image of pictures.filter((picture) => !inDrawing.has(picture))) {
    const encoded = budget.full ? undefined : await encodeImage(page, image, jpegs).catch(() => undefined);
    const side = Math.min(image.x1 - image.x0, image.y1 - image.y0);
    const decorative = Math.max(image.x1 - image.x0, image.y1 - image.y0) >= side * DECORATIVE_ASPECT || encoded?.uniform === true;
    const { uniform: _uniform, ...picture } = encoded ?? { uniform: false };
    const kept = encoded && budget.take(picture as FigureImage) ? (picture as FigureImage) : undefined;
    placed.push({
      block: { kind: 'figure', page: pageNumber, ...(kept ? { image: kept } : {}), decorative, needsAlt: !decorative },
      box: frame.box(image),
    });
  }
  return {
    blocks: captionFigures(placeFigures(layout.blocks, layout.anchors, [...placed, ...others]), layout.anchors, placed),
    needingAlt: placed.filter((entry) => entry.block.kind === 'figure' && entry.block.needsAlt).length,
  };
}

/**
 * Pixels for the Figure elements of a tagged page. The author tagged them, so
 * size does not matter (a 16-pixel logo is still the figure): an image goes
 * to the Figure whose marked content holds its paint, else to the Figure
 * whose box (its /BBox, or its text's extent) it overlaps most.
 */
export async function taggedFigureImages(
  page: PDFPageProxy,
  tree: StructNode,
  items: TextItem[],
  budget: ReturnType<typeof createImageBudget>,
  jpegs: StoredJpeg[] = [],
): Promise<Map<StructNode, FigureImage | 'mark'>> {
  const figures: StructNode[] = [];
  const collect = (node: StructNode) => {
    if (node.role === 'Figure') figures.push(node);
    for (const child of node.children ?? []) if (!child.type) collect(child);
  };
  collect(tree);
  const result = new Map<StructNode, FigureImage | 'mark'>();
  // the operator list is costly: read it only when the page has a figure to fill
  if (figures.length === 0) return result;
  const list = await page.getOperatorList().catch(() => null);
  if (!list) return result;
  // an assembled figure is drawn from this list rather than pdf.js reading the page again
  shareOperatorList(page, list);
  const all = placeImages(list);
  const placed = all.filter((image) => !image.artifact);
  const claimed = new Set<PlacedImage>();
  const chosen = new Map<StructNode, PlacedImage[]>();
  const drawn = new Map<StructNode, Box[]>();
  for (const figure of figures) {
    const mcids = new Set([...referencedIds(figure)].map(mcidOf).filter((mcid) => Number.isInteger(mcid)));
    const inside = placed.filter((image) => !claimed.has(image) && image.mcids.some((mcid) => mcids.has(mcid)));
    for (const image of inside) claimed.add(image);
    if (inside.length > 0) chosen.set(figure, inside);
    const paths = [...mcids].flatMap((mcid) => all.pathExtents.get(mcid) ?? []);
    if (paths.length > 0) drawn.set(figure, paths);
  }
  for (const figure of figures) {
    if (chosen.has(figure)) continue;
    const box = figureBox(figure, items);
    if (!box) continue;
    const best = placed
      .filter((image) => !claimed.has(image))
      .map((image) => ({ image, overlap: overlapArea(image, box) }))
      .filter((entry) => entry.overlap > 0)
      .sort((a, b) => b.overlap - a.overlap)[0]?.image;
    if (best) {
      claimed.add(best);
      chosen.set(figure, [best]);
    }
  }
  // every figure drawn from several pieces comes from one rendering of the page: pdf.js runs the whole
  // page's drawing (its text's glyphs, its shadings) for each render, whatever area the canvas shows
  const assembled = [...chosen].flatMap(([figure, pieces]) => {
    const box = assembledBox(pieces, drawn.get(figure) ?? []);
    return box ? [{ figure, box }] : [];
  });
  const rendered = new Map<StructNode, FigureImage | undefined>();
  if (assembled.length > 0 && !budget.full) {
    const pictures = await renderRegions(
      page,
      assembled.map(({ box }) => box),
    ).catch(() => []);
    for (const [index, { figure }] of assembled.entries()) rendered.set(figure, pictures[index]);
  }
  for (const [figure, pieces] of chosen) {
    if (budget.full) break;
    const picture = rendered.get(figure) ?? (await singleImage(page, pieces, jpegs).catch(() => undefined));
    if (picture && budget.take(picture)) result.set(figure, picture);
  }
  for (const [figure, paths] of drawn) {
    if (chosen.has(figure)) continue;
    const width = Math.max(...paths.map((path) => path.x1)) - Math.min(...paths.map((path) => path.x0));
    const height = Math.max(...paths.map((path) => path.y1)) - Math.min(...paths.map((path) => path.y0));
    if (width <= MARK_SIDE && height <= MARK_SIDE) result.set(figure, 'mark');
  }
  return result;
}

/**
 * The extent to render for a figure assembled from several images (an image and its soft-masked twin
 * count as one) and vector lines, which exists only as drawn; undefined for a figure drawn from one image.
 */
function assembledBox(pieces: PlacedImage[], paths: Box[]): Box | undefined {
  const same = (a: PlacedImage, b: PlacedImage) =>
    Math.abs(a.x0 - b.x0) < 1 && Math.abs(a.y0 - b.y0) < 1 && Math.abs(a.x1 - b.x1) < 1 && Math.abs(a.y1 - b.y1) < 1;
  const distinct = pieces.filter((piece, index) => pieces.findIndex((other) => same(other, piece)) === index);
  if (distinct.length < 2) return undefined;
  const parts: Box[] = [...pieces, ...paths];
  return {
    x0: Math.min(...parts.map((part) => part.x0)),
    y0: Math.min(...parts.map((part) => part.y0)),
    x1: Math.max(...parts.map((part) => part.x1)),
    y1: Math.max(...parts.map((part) => part.y1)),
  };
}

/** A figure's picture from its own image's pixels; of twins, the last drawn is the one on top. */
async function singleImage(page: PDFPageProxy, pieces: PlacedImage[], jpegs: StoredJpeg[]): Promise<FigureImage | undefined> {
  const encoded = await encodeImage(page, pieces.at(-1)!, jpegs);
  if (!encoded) return undefined;
  const { uniform: _uniform, ...picture } = encoded;
  return picture;
}

/** A Figure's box: its /BBox, else the extent of the text its marked content draws. */
function figureBox(figure: StructNode, items: TextItem[]): { x0: number; y0: number; x1: number; y1: number } | undefined {
  const [bx0, by0, bx1, by1] = figure.bbox ?? [];
  if (bx0 !== undefined && by0 !== undefined && bx1 !== undefined && by1 !== undefined) {
    return { x0: Math.min(bx0, bx1), y0: Math.min(by0, by1), x1: Math.max(bx0, bx1), y1: Math.max(by0, by1) };
  }
  const ids = referencedIds(figure);
  const own = items.filter((item) => item.mcid && ids.has(item.mcid) && item.text.trim() !== '');
  if (own.length === 0) return undefined;
  return {
    x0: Math.min(...own.map((item) => item.x)),
    y0: Math.min(...own.map((item) => item.y)),
    x1: Math.max(...own.map((item) => item.x + item.width)),
    y1: Math.max(...own.map((item) => item.y + item.size)),
  };
}

/**
 * Untagged figures in reading order: each goes before the first block (in
 * reading order) that starts below the image's top in the same column (the
 * block's first line overlaps the image horizontally); with none, after
 * everything.
 */
function placeFigures(blocks: Block[], anchors: Map<Block, BlockAnchor>, figures: { block: Block; box: { x0: number; x1: number; y1: number } }[]): Block[] {
  const before = new Map<Block, Block[]>();
  const trailing: Block[] = [];
  for (const figure of [...figures].sort((a, b) => b.box.y1 - a.box.y1 || a.box.x0 - b.box.x0)) {
    const next = blocks.find((block) => {
      const anchor = anchors.get(block);
      return anchor !== undefined && anchor.top <= figure.box.y1 + 1 && anchor.right > figure.box.x0 && anchor.x < figure.box.x1;
    });
    if (next) before.set(next, [...(before.get(next) ?? []), figure.block]);
    else trailing.push(figure.block);
  }
  return [...blocks.flatMap((block) => [...(before.get(block) ?? []), block]), ...trailing];
}

/** A figure's label alone ("Figure 3.", "Fig. 2:"), its text set apart. */
const FIGURE_LABEL_ONLY = /^(figure|fig\.?|abbildung|abb\.|figura|afbeelding)\s*[A-Z]?\d+[a-z]?[.:]?$/iu;

/** How far (points) a caption's first line may sit from its figure's edge. */
const CAPTION_REACH = 40;

/**
 * "Figure 3: …" just below a figure (or just above it), beside it in its
 * column, is its caption: it leaves the flow and goes into the figure. Below,
 * the sub-captions of its parts ("(a) …  (b) …") may come first.
 */
function captionFigures(blocks: Block[], anchors: Map<Block, BlockAnchor>, figures: { block: Block; box: Box }[]): Block[] {
  const taken = new Set<Block>();
  for (const { block: figure, box } of figures) {
    if (figure.kind !== 'figure') continue;
    const index = blocks.indexOf(figure);
    const beside = (block: Block | undefined, away: (top: number) => number, reach: number) => {
      const anchor = block && anchors.get(block);
      return anchor !== undefined && away(anchor.top) >= -2 && away(anchor.top) <= reach && anchor.x < box.x1 && anchor.right > box.x0;
    };
    const below = (top: number) => box.y0 - top;
    const subCaptions = blocks[index + 1]?.kind !== 'figure' && beside(blocks[index + 1], below, CAPTION_REACH);
    const caption = [
      { block: blocks[index + 1], away: below, reach: CAPTION_REACH },
      ...(subCaptions ? [{ block: blocks[index + 2], away: below, reach: CAPTION_REACH * 2 }] : []),
      { block: blocks[index - 1], away: (top: number) => top - box.y1, reach: CAPTION_REACH },
    ].find(
      ({ block, away, reach }) =>
        block?.kind === 'paragraph' && !taken.has(block) && FIGURE_CAPTION.test(inlineText(block.content).trim()) && beside(block, away, reach),
    )?.block;
    if (caption?.kind !== 'paragraph') continue;
    figure.caption = caption.content;
    taken.add(caption);
    // a label set apart from its text ("Figure 2." in bold, the text a paragraph of its own) is one caption
    const rest = blocks[blocks.indexOf(caption) + 1];
    if (FIGURE_LABEL_ONLY.test(inlineText(caption.content).trim()) && rest?.kind === 'paragraph' && !FIGURE_CAPTION.test(inlineText(rest.content).trim())) {
      figure.caption = [...caption.content, { kind: 'text', text: ' ' }, ...rest.content];
      taken.add(rest);
    }
  }
  return taken.size === 0 ? blocks : blocks.filter((block) => !taken.has(block));
}
