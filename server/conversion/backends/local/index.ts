import { OPS, type PDFDocumentProxy, type PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { Block, DocumentMeta, PageResult } from '../../model.ts';
import { blocksText, classify, structuralReasons } from '../../page-content.ts';
import { inlineText } from './inline.ts';
import { detectLanguage } from './language.ts';
import {
  createImageBudget,
  encodeImage,
  MAX_IMAGE_BASE64_PER_PAGE,
  MAX_IMAGES_PER_PAGE,
  MIN_IMAGE_PIXELS,
  overlapArea,
  placeImages,
  renderRegion,
  renderRegions,
  type Box,
  type FigureImage,
  type PlacedImage,
} from './images.ts';
import { buildSegments, layoutPage, type BlockAnchor, type LinkArea } from './layout.ts';
import { readDrawing, type OperatorList } from './drawing.ts';
import { ocrPage } from './ocr.ts';
import { isUsableTitle, largestText, undoubled } from './title.ts';
import { readPageForm, type PageForm, type WidgetAnnotation } from './forms.ts';
import type { EdgeLines } from './running-heads.ts';
import { cleanString, openPdf } from './pdf.ts';
import { referencedIds, structTreeToBlocks, textByMarkedContent, type StructNode } from './tagged.ts';
import { countWords, readTextLayer, type TextItem } from './text-layer.ts';
import { FIGURE_CAPTION } from './vector-figures.ts';

/**
 * The local backend: one page of an open pdf.js document to a PageResult,
 * with no network. Tagged pages come from their structure tree; untagged
 * ones from geometry; pages without a usable text layer from OCR.
 */

export { openPdf, looksLikePdf } from './pdf.ts';
export { closeOcr } from './ocr.ts';
export { detectLanguage } from './language.ts';
export { createEdgeCache } from './running-heads.ts';

export type LocalPageOptions = {
  docLang: string;
  tagged: boolean;
  /** edge lines of nearby pages, to drop running heads and feet (createEdgeCache) */
  neighbours?: (page: number) => Promise<EdgeLines[]>;
  /** records this page's own edge lines for its neighbours */
  rememberEdges?: (page: number, items: { text: string; y: number }[]) => void;
  /** the page's text layer when already read (a neighbour's running-head check read it), so it is not read twice */
  takeTextLayer?: (page: number) => TextItem[] | undefined;
  /** OCR pages without a text layer (default true) */
  ocr?: boolean;
};

/** A page with fewer words than this in its text layer, but ink on it, is treated as a scan. */
const MIN_TEXT_WORDS = 3;
/** Images smaller than this (points, either side) are bullets, rules or specks, not figures. */
const MIN_FIGURE_SIDE = 36;
/** An image covering this share of a page that has text is the scan under an OCR text layer, not a figure. */
const SCAN_BACKGROUND_SHARE = 0.8;
/** An image this many times longer than wide (or the reverse) is a rule or a border strip: decorative. */
const DECORATIVE_ASPECT = 10;

export async function inspectDocument(pdf: Uint8Array, sourceName = 'document.pdf'): Promise<DocumentMeta> {
  const doc = await openPdf(pdf);
  try {
    return await readMeta(doc, sourceName);
  } finally {
    await doc.loadingTask.destroy();
  }
}

export async function readMeta(doc: PDFDocumentProxy, sourceName: string): Promise<DocumentMeta> {
  const { info, metadata } = (await doc.getMetadata().catch(() => ({ info: {}, metadata: null }))) as {
    info: Record<string, unknown>;
    metadata: { get(name: string): unknown } | null;
  };
  const markInfo = (await doc.getMarkInfo().catch(() => null)) as Map<string, unknown> | { Marked?: boolean } | null;
  const marked = markInfo instanceof Map ? markInfo.get('Marked') === true : markInfo?.Marked === true;
  let tagged = marked;
  if (!tagged) {
    // some producers write a structure tree without /MarkInfo
    const first = await doc.getPage(1);
    tagged = !!((await first.getStructTree().catch(() => null)) as StructNode | null)?.children?.length;
    first.cleanup();
  }
  const title =
    [undoubled(cleanString(metadata?.get('dc:title'))), cleanString(info.Title)].find((candidate) => isUsableTitle(candidate, sourceName)) ||
    (await firstPageTitle(doc)) ||
    titleFromName(sourceName);
  let lang = cleanString(info.Language);
  if (!lang) {
    let sample = '';
    for (let number = 1; number <= Math.min(doc.numPages, 3) && sample.length < 4000; number++) {
      const page = await doc.getPage(number);
      const content = await page.getTextContent();
      sample += ` ${content.items.map((item) => ('str' in item ? item.str : '')).join(' ')}`;
      page.cleanup();
    }
    lang = detectLanguage(sample, 'en');
  }
  const author = cleanString(metadata?.get('dc:creator')) || cleanString(info.Author);
  const subject = cleanString(metadata?.get('dc:description')) || cleanString(info.Subject);
  return { title, lang, pageCount: doc.numPages, tagged, ...(author ? { author } : {}), ...(subject ? { subject } : {}), sourceName };
}

async function firstPageTitle(doc: PDFDocumentProxy): Promise<string | undefined> {
  const page = await doc.getPage(1);
  try {
    return largestText(await readTextLayer(page));
  } catch {
    return undefined;
  } finally {
    page.cleanup();
  }
}

function titleFromName(name: string): string {
  return name.replace(/^.*[\\/]/, '').replace(/\.pdf$/i, '') || 'Untitled document';
}

export async function pageLabels(doc: PDFDocumentProxy): Promise<string[] | null> {
  return (await doc.getPageLabels().catch(() => null)) as string[] | null;
}

export async function convertLocalPage(doc: PDFDocumentProxy, pageNumber: number, options: LocalPageOptions & { label?: string }): Promise<PageResult> {
  const started = performance.now();
  const page = await doc.getPage(pageNumber);
  try {
    return await convertPage(doc, page, pageNumber, options, started);
  } finally {
    page.cleanup();
  }
}

async function convertPage(
  doc: PDFDocumentProxy,
  page: PDFPageProxy,
  pageNumber: number,
  options: LocalPageOptions & { label?: string },
  started: number,
): Promise<PageResult> {
  const warnings: string[] = [];
  const reasons: string[] = [];
  const items = options.takeTextLayer?.(pageNumber) ?? (await readTextLayer(page));
  options.rememberEdges?.(pageNumber, items);
  const annotations = (await page.getAnnotations().catch(() => [])) as (WidgetAnnotation & { id?: string; url?: string })[];
  const linkById = new Map<string, string>();
  const linkAreas: LinkArea[] = [];
  for (const annotation of annotations) {
    if (annotation.subtype !== 'Link' || !annotation.url || !/^(https?:|mailto:)/i.test(annotation.url)) continue;
    if (annotation.id) linkById.set(annotation.id, annotation.url);
    if (annotation.rect?.length === 4) linkAreas.push({ href: annotation.url, rect: annotation.rect as [number, number, number, number] });
  }
  const layerText = items
    .filter((item) => !item.artifact)
    .map((item) => item.text)
    .join(' ');
  const textLayerWords = countWords(layerText);

  let blocks: Block[] = [];
  let form: PageForm | undefined;
  let ocr = false;
  let lang: string | undefined;
  const [x0 = 0, y0 = 0, x1 = 612, y1 = 792] = page.view;
  // the operator list is the costliest read of a page: only untagged pages and pages without text need it
  const tree =
    options.tagged && textLayerWords >= MIN_TEXT_WORDS && !isGarbled(layerText) ? ((await page.getStructTree().catch(() => null)) as StructNode | null) : null;
  const list = tree?.children?.length ? null : await page.getOperatorList().catch(() => null);
  const images = list ? findImages(list) : [];
  const pageArea = (x1 - x0) * (y1 - y0);
  const budget = createImageBudget();
  const garbled = isGarbled(layerText);
  if ((textLayerWords < MIN_TEXT_WORDS || garbled) && options.ocr !== false && (garbled || images.length > 0 || (await hasInk(page)))) {
    const result = await ocrPage(doc, page, pageNumber, options.docLang);
    blocks = result.blocks;
    ocr = true;
    lang = result.lang;
    reasons.push('ocr');
    const why = garbled ? 'text layer cannot be read (a font without a Unicode map)' : 'has no text layer';
    const turned = result.turned ? `, the scan turned ${result.turned}° to read it` : '';
    warnings.push(
      `page ${pageNumber} ${why}; its text was recognised by OCR (language ${result.lang}${turned}, confidence ${Math.round(result.confidence)}%) and should be checked`,
    );
  } else {
    if (tree?.children?.length) {
      const textById = textByMarkedContent(items);
      const figureImages = await taggedFigureImages(page, tree, items, budget);
      blocks = structTreeToBlocks(tree, { page: pageNumber, docLang: options.docLang, textById, links: linkById, figureImages });
      // text the tags forgot (untagged content that is not an artifact) must not be lost
      const referenced = referencedIds(tree);
      const forgotten = items.filter((item) => !item.artifact && (!item.mcid || !referenced.has(item.mcid)) && item.text.trim() !== '');
      if (countWords(forgotten.map((item) => item.text).join(' ')) >= 3) {
        const extra = layoutPage(buildSegments(forgotten, linkAreas), { page: pageNumber, pageWidth: x1 - x0, pageHeight: y1 - y0 });
        blocks.push(...extra.blocks);
        warnings.push(`page ${pageNumber}: some text is not in the structure tree; it was placed after the tagged content`);
      }
    } else {
      const shifted = items.map((item) => ({ ...item, x: item.x - x0, y: item.y - y0 }));
      const neighbours = options.neighbours ? await options.neighbours(pageNumber) : undefined;
      const drawing = list ? readDrawing(list) : { rules: [], marks: [] };
      const segments = buildSegments(
        shifted,
        linkAreas.map((area) => ({ ...area, rect: [area.rect[0] - x0, area.rect[1] - y0, area.rect[2] - x0, area.rect[3] - y0] })),
      );
      form = readPageForm(shiftWidgets(annotations, x0, y0), segments, pageNumber);
      const layout = layoutPage(form ? segments.filter((segment) => !form!.labels.has(segment)) : segments, {
        page: pageNumber,
        pageWidth: x1 - x0,
        pageHeight: y1 - y0,
        neighbours,
        rules: drawing.rules.map((rule) => ({ ...rule, x1: rule.x1 - x0, x2: rule.x2 - x0, y1: rule.y1 - y0, y2: rule.y2 - y0 })),
        boldFonts: boldFontIds(page, shifted),
        marks:
          x0 === 0 && y0 === 0
            ? drawing.marks
            : drawing.marks.map((mark) => ({ ...mark, x0: mark.x0 - x0, x1: mark.x1 - x0, y0: mark.y0 - y0, y1: mark.y1 - y0 })),
      });
      blocks = layout.blocks;
      if (layout.multiColumn) reasons.push('multi-column');
      // the scan under a searchable scan's invisible text is the page itself, not a figure on it
      const pictures = images.filter((image) => !image.artifact && (image.x1 - image.x0) * (image.y1 - image.y0) < pageArea * SCAN_BACKGROUND_SHARE);
      const placed: { block: Block; box: Box }[] = [];
      // a drawing is rendered whole, with any image it is drawn over or around
      const inDrawing = new Set<PlacedImage>();
      const drawings = layout.figures.map((drawn) => {
        let box = drawn.box;
        for (const image of pictures) {
          const local = { x0: image.x0 - x0, y0: image.y0 - y0, x1: image.x1 - x0, y1: image.y1 - y0 };
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
              drawings.map(({ box }) => ({ x0: box.x0 + x0, y0: box.y0 + y0, x1: box.x1 + x0, y1: box.y1 + y0 })),
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
        const encoded = budget.full ? undefined : await encodeImage(page, image).catch(() => undefined);
        const side = Math.min(image.x1 - image.x0, image.y1 - image.y0);
        const decorative = Math.max(image.x1 - image.x0, image.y1 - image.y0) >= side * DECORATIVE_ASPECT || encoded?.uniform === true;
        const { uniform: _uniform, ...picture } = encoded ?? { uniform: false };
        const kept = encoded && budget.take(picture as FigureImage) ? (picture as FigureImage) : undefined;
        placed.push({
          block: { kind: 'figure', page: pageNumber, ...(kept ? { image: kept } : {}), decorative, needsAlt: !decorative },
          box: { ...image, x0: image.x0 - x0, x1: image.x1 - x0, y0: image.y0 - y0, y1: image.y1 - y0 },
        });
      }
      blocks = captionFigures(placeFigures(blocks, layout.anchors, form ? [...placed, form] : placed), layout.anchors, placed);
      const needing = placed.filter((entry) => entry.block.kind === 'figure' && entry.block.needsAlt).length;
      if (needing > 0) warnings.push(`page ${pageNumber}: ${needing} image(s) need alt text`);
    }
  }
  // a tagged or scanned page keeps its fields too, after its content
  if (!form) {
    form = readPageForm(shiftWidgets(annotations, 0, 0), [], pageNumber);
    if (form) blocks.push(form.block);
  }
  if (blocks.some((block) => block.kind === 'figure' && block.needsAlt) && !warnings.some((warning) => warning.includes('alt text'))) {
    warnings.push(`page ${pageNumber}: figure(s) without alt text`);
  }
  if (budget.capped) {
    warnings.push(
      `page ${pageNumber}: more images than a page may carry (${MAX_IMAGES_PER_PAGE}, ${Math.round(MAX_IMAGE_BASE64_PER_PAGE / 1024 / 1024)} MB); the rest are kept as figures without their picture`,
    );
  }
  const uncertain = blocks.filter((block) => block.kind === 'table' && block.uncertain).length;
  if (uncertain > 0) warnings.push(`page ${pageNumber}: ${uncertain} table(s) inferred from layout; check their structure`);
  const structural = structuralReasons(blocks);
  const allReasons = [...structural, ...reasons.filter((reason) => !structural.includes(reason))];
  if (!ocr && textLayerWords > 0 && countWords(blocksText(blocks)) < textLayerWords * 0.8) allReasons.push('low-coverage');
  return {
    page: pageNumber,
    label: options.label ?? String(pageNumber),
    backend: 'local',
    classification: classify(allReasons),
    reasons: allReasons,
    blocks: blocks.filter((block) => block.kind !== 'paragraph' || inlineText(block.content).trim() !== ''),
    warnings,
    textLayerWords,
    ocr,
    ...(lang ? { lang } : {}),
    timings: { ms: Math.round(performance.now() - started) },
    costUsd: 0,
  };
}

function shiftWidgets(annotations: WidgetAnnotation[], x0: number, y0: number): WidgetAnnotation[] {
  return annotations.map((annotation) =>
    annotation.rect?.length === 4 ? { ...annotation, rect: annotation.rect.map((value, index) => value - (index % 2 === 0 ? x0 : y0)) } : annotation,
  );
}

/**
 * Which of the page's fonts are bold, from the names pdf.js loaded with the
 * operator list ("ABCDEF+Helvetica-Bold"); fonts not loaded count as regular.
 */
function boldFontIds(page: PDFPageProxy, items: { font: string }[]): Set<string> {
  const bold = new Set<string>();
  for (const id of new Set(items.map((item) => item.font))) {
    if (!page.commonObjs.has(id)) continue;
    const font = page.commonObjs.get(id) as { name?: string; bold?: boolean } | null;
    if (font?.bold || /bold|black|heavy|semibold|demi/i.test(font?.name ?? '')) bold.add(id);
  }
  return bold;
}

/** Images drawn on the page big enough to be figures (bullets and rules left out), from the operator list. */
function findImages(list: OperatorList): PlacedImage[] {
  return placeImages(list as Parameters<typeof placeImages>[0]).filter(
    (image) =>
      image.x1 - image.x0 >= MIN_FIGURE_SIDE &&
      image.y1 - image.y0 >= MIN_FIGURE_SIDE &&
      image.pixelWidth >= MIN_IMAGE_PIXELS &&
      image.pixelHeight >= MIN_IMAGE_PIXELS,
  );
}

/**
 * Pixels for the Figure elements of a tagged page. The author tagged them, so
 * size does not matter (a 16-pixel logo is still the figure): an image goes
 * to the Figure whose marked content holds its paint, else to the Figure
 * whose box (its /BBox, or its text's extent) it overlaps most.
 */
async function taggedFigureImages(
  page: PDFPageProxy,
  tree: StructNode,
  items: TextItem[],
  budget: ReturnType<typeof createImageBudget>,
): Promise<Map<StructNode, FigureImage>> {
  const figures: StructNode[] = [];
  const collect = (node: StructNode) => {
    if (node.role === 'Figure') figures.push(node);
    for (const child of node.children ?? []) if (!child.type) collect(child);
  };
  collect(tree);
  const result = new Map<StructNode, FigureImage>();
  // the operator list is costly: read it only when the page has a figure to fill
  if (figures.length === 0) return result;
  const list = await page.getOperatorList().catch(() => null);
  if (!list) return result;
  const all = placeImages(list);
  const placed = all.filter((image) => !image.artifact);
  const mcidOf = (id: string) => Number(/_mc(\d+)$/.exec(id)?.[1] ?? NaN);
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
  for (const [figure, pieces] of chosen) {
    if (budget.full) break;
    const picture = await figurePicture(page, pieces, drawn.get(figure) ?? []).catch(() => undefined);
    if (picture && budget.take(picture)) result.set(figure, picture);
  }
  return result;
}

/**
 * One image for a figure: the image's own pixels when it is drawn from one
 * image (an image and its soft-masked twin count as one), else the page
 * rendered over the pieces' extent, since a figure assembled from several
 * images and vector lines exists only as drawn.
 */
async function figurePicture(page: PDFPageProxy, pieces: PlacedImage[], paths: Box[]): Promise<FigureImage | undefined> {
  const same = (a: PlacedImage, b: PlacedImage) =>
    Math.abs(a.x0 - b.x0) < 1 && Math.abs(a.y0 - b.y0) < 1 && Math.abs(a.x1 - b.x1) < 1 && Math.abs(a.y1 - b.y1) < 1;
  const distinct = pieces.filter((piece, index) => pieces.findIndex((other) => same(other, piece)) === index);
  if (distinct.length > 1) {
    const parts: Box[] = [...pieces, ...paths];
    const box = {
      x0: Math.min(...parts.map((part) => part.x0)),
      y0: Math.min(...parts.map((part) => part.y0)),
      x1: Math.max(...parts.map((part) => part.x1)),
      y1: Math.max(...parts.map((part) => part.y1)),
    };
    const rendered = await renderRegion(page, box);
    if (rendered) return rendered;
  }
  // of twins, the last drawn is the one on top
  const encoded = await encodeImage(page, pieces.at(-1)!);
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
export function placeFigures(
  blocks: Block[],
  anchors: Map<Block, BlockAnchor>,
  figures: { block: Block; box: { x0: number; x1: number; y1: number } }[],
): Block[] {
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
  }
  return taken.size === 0 ? blocks : blocks.filter((block) => !taken.has(block));
}

/** Whether the page draws anything (paths, glyphs as curves): a blank page needs no OCR. */
async function hasInk(page: PDFPageProxy): Promise<boolean> {
  const list = await page.getOperatorList().catch(() => null);
  if (!list) return false;
  return list.fnArray.some((op) => op === OPS.fill || op === OPS.eoFill || op === OPS.stroke || op === OPS.fillStroke || op === OPS.constructPath);
}

/**
 * A text layer that is not text: fonts without a Unicode map extract as
 * punctuation soup ("\"7+%-") or private-use code points. Real text, even
 * dense mathematics, is mostly letters and digits.
 */
export function isGarbled(text: string): boolean {
  // leader dots of a table of contents are not garbage
  const visible = text.replace(/\s/g, '').replace(/([.·…_-])\1{2,}/g, '');
  if (visible.length < 3) return false;
  const letters = (visible.match(/\p{L}/gu) ?? []).length;
  const alnum = (visible.match(/[\p{L}\p{N}]/gu) ?? []).length;
  const privateUse = (visible.match(/[\u{E000}-\u{F8FF}\u{F0000}-\u{FFFFD}]/gu) ?? []).length;
  return privateUse > visible.length * 0.3 || alnum < visible.length * 0.5 || (letters === 0 && visible.length >= 5 && !/^[\d\s.,:/()+-]+$/.test(visible));
}
