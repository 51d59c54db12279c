import { OPS, type PDFDocumentProxy, type PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { Block, DocumentMeta, PageResult } from '../../model.ts';
import { blocksText, classify, structuralReasons } from '../vision/page-content.ts';
import { inlineText } from './inline.ts';
import { detectLanguage } from './language.ts';
import { buildSegments, layoutPage, type LinkArea } from './layout.ts';
import { ocrPage } from './ocr.ts';
import type { EdgeLines } from './running-heads.ts';
import { cleanString, openPdf } from './pdf.ts';
import { referencedIds, structTreeToBlocks, textByMarkedContent, type StructNode } from './tagged.ts';
import { countWords, readTextLayer, type TextItem } from './text-layer.ts';

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
    tagged = ((await first.getStructTree().catch(() => null)) as StructNode | null)?.children?.length ? true : false;
    first.cleanup();
  }
  const title = cleanString(metadata?.get('dc:title')) || cleanString(info.Title) || titleFromName(sourceName);
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
    return await convertPage(page, pageNumber, options, started);
  } finally {
    page.cleanup();
  }
}

async function convertPage(page: PDFPageProxy, pageNumber: number, options: LocalPageOptions & { label?: string }, started: number): Promise<PageResult> {
  const warnings: string[] = [];
  const reasons: string[] = [];
  const items = options.takeTextLayer?.(pageNumber) ?? (await readTextLayer(page));
  options.rememberEdges?.(pageNumber, items);
  const annotations = (await page.getAnnotations().catch(() => [])) as { subtype?: string; id?: string; url?: string; rect?: number[] }[];
  const linkById = new Map<string, string>();
  const linkAreas: LinkArea[] = [];
  for (const annotation of annotations) {
    if (annotation.subtype !== 'Link' || !annotation.url || !/^(https?:|mailto:)/i.test(annotation.url)) continue;
    if (annotation.id) linkById.set(annotation.id, annotation.url);
    if (annotation.rect?.length === 4) linkAreas.push({ href: annotation.url, rect: annotation.rect as [number, number, number, number] });
  }
  const layerText = items.filter((item) => !item.artifact).map((item) => item.text).join(' ');
  const textLayerWords = countWords(layerText);

  let blocks: Block[] = [];
  let ocr = false;
  const [x0 = 0, y0 = 0, x1 = 612, y1 = 792] = page.view;
  // the operator list is the costliest read of a page: only untagged pages and pages without text need it
  const tree = options.tagged && textLayerWords >= MIN_TEXT_WORDS && !isGarbled(layerText) ? ((await page.getStructTree().catch(() => null)) as StructNode | null) : null;
  const images = tree?.children?.length ? [] : await findImages(page);
  const garbled = isGarbled(layerText);
  if ((textLayerWords < MIN_TEXT_WORDS || garbled) && options.ocr !== false && (garbled || images.length > 0 || (await hasInk(page)))) {
    const result = await ocrPage(page, pageNumber);
    blocks = result.blocks;
    ocr = true;
    reasons.push('ocr');
    const why = garbled ? 'text layer cannot be read (a font without a Unicode map)' : 'has no text layer';
    warnings.push(`page ${pageNumber} ${why}; its text was recognised by OCR (confidence ${Math.round(result.confidence)}%) and should be checked`);
  } else {
    if (tree?.children?.length) {
      const textById = textByMarkedContent(items);
      blocks = structTreeToBlocks(tree, { page: pageNumber, docLang: options.docLang, textById, links: linkById });
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
      const layout = layoutPage(buildSegments(shifted, linkAreas.map((area) => ({ ...area, rect: [area.rect[0] - x0, area.rect[1] - y0, area.rect[2] - x0, area.rect[3] - y0] }))), {
        page: pageNumber,
        pageWidth: x1 - x0,
        pageHeight: y1 - y0,
        neighbours,
      });
      blocks = layout.blocks;
      if (layout.multiColumn) reasons.push('multi-column');
      for (const image of images) blocks.push({ kind: 'figure', page: pageNumber, decorative: false, needsAlt: true });
      if (images.length > 0) warnings.push(`page ${pageNumber}: ${images.length} image(s) need alt text`);
    }
  }
  if (blocks.some((block) => block.kind === 'figure' && block.needsAlt) && !warnings.some((warning) => warning.includes('alt text'))) {
    warnings.push(`page ${pageNumber}: figure(s) without alt text`);
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
    timings: { ms: Math.round(performance.now() - started) },
    costUsd: 0,
  };
}

/** Images drawn on the page big enough to be figures, from the operator list (with the transform in force). */
async function findImages(page: PDFPageProxy): Promise<{ width: number; height: number }[]> {
  const list = await page.getOperatorList().catch(() => null);
  if (!list) return [];
  const found: { width: number; height: number }[] = [];
  const stack: number[][] = [];
  let ctm = [1, 0, 0, 1, 0, 0];
  for (let index = 0; index < list.fnArray.length; index++) {
    const op = list.fnArray[index];
    if (op === OPS.save) stack.push(ctm);
    else if (op === OPS.restore) ctm = stack.pop() ?? [1, 0, 0, 1, 0, 0];
    else if (op === OPS.transform) {
      const [a, b, c, d, e, f] = list.argsArray[index] as number[];
      const [A, B, C, D, E, F] = ctm as [number, number, number, number, number, number];
      ctm = [a! * A + b! * C, a! * B + b! * D, c! * A + d! * C, c! * B + d! * D, e! * A + f! * C + E, e! * B + f! * D + F];
    } else if (op === OPS.paintImageXObject || op === OPS.paintInlineImageXObject || op === OPS.paintImageMaskXObject) {
      const width = Math.hypot(ctm[0]!, ctm[1]!);
      const height = Math.hypot(ctm[2]!, ctm[3]!);
      if (width >= MIN_FIGURE_SIDE && height >= MIN_FIGURE_SIDE) found.push({ width, height });
    }
  }
  return found;
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
  const visible = text.replace(/\s/g, '').replace(/([.·…_\-])\1{2,}/g, '');
  if (visible.length < 3) return false;
  const letters = (visible.match(/\p{L}/gu) ?? []).length;
  const alnum = (visible.match(/[\p{L}\p{N}]/gu) ?? []).length;
  const privateUse = (visible.match(/[\u{E000}-\u{F8FF}\u{F0000}-\u{FFFFD}]/gu) ?? []).length;
  return privateUse > visible.length * 0.3 || alnum < visible.length * 0.5 || (letters === 0 && visible.length >= 5 && !/^[\d\s.,:/()+-]+$/.test(visible));
}
