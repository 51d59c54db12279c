import type { PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { Block, PageResult } from '../../model.ts';
import { blocksText, classify, countWords, structuralReasons } from '../../page-content.ts';
import { isFractionBar } from './display-formulas.ts';
import { readDrawing, type OperatorList } from './drawing.ts';
import { createImageBudget, MAX_IMAGE_BASE64_PER_PAGE, MAX_IMAGES_PER_PAGE, type PlacedImage, renderRegion } from './images.ts';
import { inlineText } from './inline.ts';
import { layoutPage } from './layout.ts';
import type { StoredJpeg } from './pdf-bytes.ts';
import { shareOperatorList } from './pdf.ts';
import { glyphReader, readFormulaTex } from './math-layout.ts';
import { markInlineMath } from './inline-math.ts';
import { LOW_CONFIDENCE, OCR_DPI, ocrPage, ocrTextItems, ocrWords, type PageReading, UNREADABLE_CONFIDENCE } from './ocr.ts';
import { boldFontIds, mathFontIds, monoFontIds, texMathFontIds } from './font-styles.ts';
import { drawsSoftHyphen, type PlacedGlyph, pageGlyphPositions, reseatAccented, restoreSoftHyphens, SOFT_HYPHEN } from './glyph-positions.ts';
import { extensionFontIds, seatHangingGlyphs, spellExtensionGlyphs, symbolFontIds } from './hanging-glyphs.ts';
import { readPageForm, type PageForm, type WidgetAnnotation } from './forms.ts';
import { addUntaggedFigures, findImages, taggedFigureImages } from './page-figures.ts';
import type { EdgeLines } from './running-heads.ts';
import { buildSegments, type LinkArea, RTL_LETTER } from './segments.ts';
import { paragraphsApart, referencedIds, structTreeToBlocks, textByMarkedContent, type StructNode, withSingleClaims } from './tagged.ts';
import { type PageFrame, pageFrame } from './page-frame.ts';
import { readTextLayer, repairReversedLigatures, type TextItem } from './text-layer.ts';
import { hasInk, isGarbled, lyingFonts, replaceRuns } from './text-layer-quality.ts';
import { atDrawnSizes, largestText } from './title.ts';

/**
 * The local backend: one page of an open pdf.js document to a PageResult,
 * with no network. A page takes one of three ways: a tagged page is read from
 * its structure tree, an untagged one is rebuilt from geometry, and a page
 * without a usable text layer is read by OCR.
 */

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
  /** the document's stored JPEGs (storedJpegs): a picture drawn from one carries its bytes as they are */
  jpegs?: StoredJpeg[];
};

/** Operators (after pdf.js merges path segments) past which a page is read for text only; dense real maps stay below 100,000. */
const MAX_PAGE_OPERATORS = 250_000;

/** A structure tree that leaves out more than this share of the page's words is set aside for the page's geometry. */
const MAX_UNTOLD_SHARE = 1 / 3;

/** A page with fewer words than this in its text layer, but ink on it, is treated as a scan. */
const MIN_TEXT_WORDS = 3;

/** What every way of converting a page starts from. */
type PageInput = {
  doc: PDFDocumentProxy;
  page: PDFPageProxy;
  pageNumber: number;
  options: LocalPageOptions;
  items: TextItem[];
  textLayerWords: number;
  linkById: Map<string, string>;
  linkAreas: LinkArea[];
  /** the page's annotations: links above, form widgets read by the way the page takes */
  annotations: (WidgetAnnotation & { id?: string; url?: string })[];
  /** the page's box (its /CropBox or /MediaBox): layout works from its lower-left corner */
  view: { x0: number; y0: number; x1: number; y1: number };
  budget: ReturnType<typeof createImageBudget>;
};

/** What a way of converting a page found. */
type Converted = { blocks: Block[]; warnings: string[]; reasons: string[]; ocr?: { lang: string }; form?: PageForm; title?: string };

export async function convertLocalPage(doc: PDFDocumentProxy, pageNumber: number, options: LocalPageOptions & { label?: string }): Promise<PageResult> {
  const started = performance.now();
  const page = await doc.getPage(pageNumber);
  try {
    const input = await readPage(doc, page, pageNumber, options);
    const layerText = textOf(input.items.filter((item) => !item.artifact));
    // a layer of punctuation soup (no Unicode map), or of letters that are no language (a shifted map)
    // the per-font language check only when the cheap punctuation check has not settled the page
    const lying = isGarbled(layerText) ? undefined : lyingFonts(input.items);
    const unreadableLayer = lying === undefined ? 'garbled' : lying.size > 0 ? 'lies' : undefined;
    const garbled = unreadableLayer !== undefined;
    // the operator list is the costliest read of a page: only untagged pages and pages without text need it
    const given =
      options.tagged && input.textLayerWords >= MIN_TEXT_WORDS && !garbled ? ((await page.getStructTree().catch(() => null)) as StructNode | null) : null;
    const offered = given && withSingleClaims(given);
    // a tree that leaves most of the page's words out is no reading of the page (a browser's print to PDF tags its
    // boxes, a few of them as figures, and not the text in them): the page is laid out from its geometry instead
    const untold = offered?.children?.length ? countWords(textOf(forgottenItems(offered, input.items))) : 0;
    const tree = untold > input.textLayerWords * MAX_UNTOLD_SHARE ? null : offered;
    const read = tree?.children?.length ? null : await page.getOperatorList().catch(() => null);
    // figures and OCR draw the page from this list rather than pdf.js reading the page again
    if (read) shareOperatorList(page, read);
    // a page drawn with more operators than any real page is read for its text alone: drawing analysis, its
    // pictures and OCR (which renders every operator again) would take minutes and gigabytes
    const flooded = (read?.fnArray.length ?? 0) > MAX_PAGE_OPERATORS;
    // right-to-left ligatures pdf.js reverses letter by letter are put right from the glyphs drawn
    if (!flooded && RTL_LETTER.test(layerText)) {
      const glyphs = read ?? (await page.getOperatorList().catch(() => null));
      if (glyphs) input.items = repairReversedLigatures(input.items, glyphs);
    }
    const list = flooded ? null : read;
    const images = list ? findImages(list) : [];
    let converted: Converted;
    let reread: Awaited<ReturnType<typeof rereadLyingRuns>> | undefined;
    if (flooded) {
      converted = await convertUntaggedPage(input, null, []);
      converted.warnings.push(
        `page ${pageNumber} draws ${read!.fnArray.length} operators, more than the ${MAX_PAGE_OPERATORS} a page may; only its text was read (no drawings, pictures or OCR)`,
      );
      converted.reasons.push('low-coverage');
    } else if (unreadableLayer === 'lies' && options.ocr !== false && lying && (reread = await rereadLyingRuns(input, lying)) && 'input' in reread) {
      converted = recognised(await convertUntaggedPage(reread.input, list, images), reread.input, reread.warning, reread.lang);
    } else if ((input.textLayerWords < MIN_TEXT_WORDS || garbled) && options.ocr !== false && (garbled || images.length > 0 || (await hasInk(page)))) {
      // the page the repair drew and read before it gave up is read on from there, not drawn and read again
      converted = await convertScannedPage(input, unreadableLayer, reread && 'page' in reread ? reread.page : undefined);
    } else if (tree?.children?.length) {
      converted = await convertTaggedPage(input, tree);
    } else {
      converted = await convertUntaggedPage(input, list, images);
      if (offered !== tree)
        converted.warnings.push(
          `page ${pageNumber}: its structure tree leaves ${untold} of its ${input.textLayerWords} words out; the page was laid out from its geometry instead`,
        );
    }
    // a tagged or scanned page keeps its fields too, after its content
    if (!converted.form) {
      const form = readPageForm(input.annotations, [], pageNumber);
      if (form) converted.blocks.push(form.block);
    }
    return finishPage(input, converted, options.label, started);
  } finally {
    page.cleanup();
  }
}

/** The page's text layer and links, read once for whichever way the page takes. */
async function readPage(doc: PDFDocumentProxy, page: PDFPageProxy, pageNumber: number, options: LocalPageOptions): Promise<PageInput> {
  const items = options.takeTextLayer?.(pageNumber) ?? (await readTextLayer(page));
  options.rememberEdges?.(pageNumber, items);
  const annotations = (await page.getAnnotations().catch(() => [])) as PageInput['annotations'];
  const linkById = new Map<string, string>();
  const linkAreas: LinkArea[] = [];
  for (const annotation of annotations) {
    if (annotation.subtype !== 'Link' || !annotation.url || !/^(https?:|mailto:)/i.test(annotation.url)) continue;
    if (annotation.id) linkById.set(annotation.id, annotation.url);
    if (annotation.rect?.length === 4) linkAreas.push({ href: annotation.url, rect: annotation.rect as [number, number, number, number] });
  }
  const textLayerWords = countWords(textOf(items.filter((item) => !item.artifact)));
  const [x0 = 0, y0 = 0, x1 = 612, y1 = 792] = page.view;
  return { doc, page, pageNumber, options, items, textLayerWords, linkById, linkAreas, annotations, view: { x0, y0, x1, y1 }, budget: createImageBudget() };
}

/**
 * A page whose text layer lies in some fonts (a shifted Unicode map): those
 * fonts' runs take the words OCR reads in their boxes, and the page is laid
 * out as usual, so its columns, headings and order still come from where
 * the runs are. When OCR cannot give word boxes (a turned page) or
 * reads too little, the page is OCR'd whole instead, from what was drawn and
 * read here (`page`) when there is that.
 */
async function rereadLyingRuns(input: PageInput, fonts: Set<string>): Promise<{ input: PageInput; warning: string; lang: string } | { page?: PageReading }> {
  const { doc, page, pageNumber, options } = input;
  const read = await ocrWords(doc, page, options.docLang);
  if (!read || read.words.length < MIN_TEXT_WORDS || read.confidence < UNREADABLE_CONFIDENCE) return { page: read?.page };
  const { items, replaced } = replaceRuns(input.items, fonts, read.words);
  return {
    input: { ...input, items },
    lang: read.lang,
    warning: `page ${pageNumber}: the text layer of ${fonts.size} font(s) is not language (a Unicode map that names other letters than the ones drawn); the text of their ${replaced} run(s) was recognised by OCR (confidence ${Math.round(read.confidence)}%) and should be checked`,
  };
}

/**
 * A page laid out from words OCR read (`input.items`): the reason `ocr`, the page's language and its warning first;
 * on the first page, the document's title from its largest text, since the facts looked for one in a layer that
 * had none to give.
 */
function recognised(converted: Converted, input: PageInput, warning: string, lang: string): Converted {
  converted.warnings.unshift(warning);
  converted.reasons.push('ocr');
  converted.ocr = { lang };
  const title = input.pageNumber === 1 ? largestText(input.items) : undefined;
  if (title) converted.title = title;
  return converted;
}

/**
 * Below this share of ink a page OCR found no words on is blank (a white
 * scan, specks, a scanner's edge shadow); above it, a picture without text.
 */
const BLANK_INK = 0.015;

/**
 * Pages bigger than A3 at OCR's resolution are read whole: the words' boxes cost tesseract.js most of another reading
 * on a newspaper's page (17.5 million pixels: 76 s against 48 s for its text alone), a few per cent on a letter page.
 */
const MAX_WORD_LAYOUT_PIXELS = 8_000_000;

/**
 * A page with no text layer, or one that cannot be read: its picture, read by OCR. An upright page read with
 * confidence is laid out from OCR's words where they stand, as a text layer would be (two columns whose lines align
 * are two columns, a heading set big is a heading, a page number at the foot is furniture); a page OCR reads poorly,
 * perhaps turned or in another script, is read whole with tesseract's own layout, turned and in its script.
 * `first`: the page as the lying-layer repair already drew and read it (its words were too few to lay out).
 */
async function convertScannedPage(input: PageInput, layer: 'garbled' | 'lies' | undefined, first?: PageReading): Promise<Converted> {
  const { doc, page, pageNumber, options } = input;
  const why =
    layer === 'garbled'
      ? 'text layer cannot be read (a font without a Unicode map)'
      : layer === 'lies'
        ? "text layer is not language (a font's Unicode map is shifted or wrong: its letters are not the ones drawn)"
        : 'has no text layer';
  const { x0, y0, x1, y1 } = input.view;
  const pixels = (((x1 - x0) * OCR_DPI) / 72) * (((y1 - y0) * OCR_DPI) / 72);
  const read = first || pixels > MAX_WORD_LAYOUT_PIXELS ? undefined : await ocrWords(doc, page, options.docLang);
  const checkThis = (lang: string, confidence: number, turned = '') =>
    `page ${pageNumber} ${why}; its text was recognised by OCR (language ${lang}${turned}, confidence ${Math.round(confidence)}%) and should be checked`;
  if (read && read.words.length >= MIN_TEXT_WORDS && read.confidence >= LOW_CONFIDENCE) {
    const ocrInput = { ...input, items: ocrTextItems(read.words) };
    return recognised(await convertUntaggedPage(ocrInput, null, []), ocrInput, checkThis(read.lang, read.confidence), read.lang);
  }
  const result = await ocrPage(doc, page, pageNumber, options.docLang, first ?? read?.page);
  if (result.blocks.length === 0 && result.ink < BLANK_INK) {
    // a blank page gives no text at all, not specks read as letters; its page marker stays
    return { blocks: [], reasons: [], warnings: [`page ${pageNumber} is blank: nothing on it reads as text`] };
  }
  if (result.blocks.length === 0 || result.confidence < UNREADABLE_CONFIDENCE)
    return unreadablePage(input, result.blocks.length === 0 ? undefined : result.confidence);
  const turned = result.turned ? `, the scan turned ${result.turned}° to read it` : '';
  return {
    blocks: result.blocks,
    reasons: ['ocr'],
    warnings: [checkThis(result.lang, result.confidence, turned)],
    ocr: { lang: result.lang },
  };
}

/**
 * A page OCR cannot read (handwriting, a damaged scan) or found no words on:
 * its picture with a visible notice, never the guessed text, and the reason
 * `unreadable` so the report sends it to the vision backend.
 */
async function unreadablePage(input: PageInput, confidence: number | undefined): Promise<Converted> {
  const { page, pageNumber, view } = input;
  const picture = await renderRegion(page, view).catch(() => undefined);
  const image = picture && input.budget.take(picture) ? picture : undefined;
  const why = confidence === undefined ? 'no text was found on it' : `OCR read it with ${Math.round(confidence)}% confidence`;
  const notice = `This page could not be read reliably (${why}); it is shown as its picture. Convert it with high fidelity (the vision backend) to get its text.`;
  return {
    blocks: [
      { kind: 'paragraph', page: pageNumber, content: [{ kind: 'emphasis', strong: true, children: [{ kind: 'text', text: notice }] }] },
      { kind: 'figure', page: pageNumber, ...(image ? { image } : {}), decorative: false, needsAlt: true },
    ],
    reasons: ['unreadable'],
    warnings: [`page ${pageNumber} could not be read reliably (${why}); it is shown as its picture: convert it with high fidelity (--backend vision)`],
  };
}

/** A tagged page from its structure tree; text the tags forgot (untagged content that is not an artifact) follows it, laid out. */
async function convertTaggedPage(input: PageInput, tree: StructNode): Promise<Converted> {
  const { page, pageNumber, options, items, view } = input;
  const warnings: string[] = [];
  const textById = textByMarkedContent(items);
  const figureImages = await taggedFigureImages(page, tree, items, input.budget, options.jpegs);
  const blocks = structTreeToBlocks(tree, {
    page: pageNumber,
    docLang: options.docLang,
    textById,
    links: input.linkById,
    figureImages,
    apart: paragraphsApart(items),
  });
  const forgotten = forgottenItems(tree, items);
  if (countWords(textOf(forgotten)) >= 3) {
    const extra = layoutPage(buildSegments(forgotten, input.linkAreas), { page: pageNumber, pageWidth: view.x1 - view.x0, pageHeight: view.y1 - view.y0 });
    // its formulas (a display over several lines has no TeX from its text) are read from their glyphs, placed by their runs' widths
    if (extra.blocks.some((block) => block.kind === 'formula')) readFormulaTex(extra.blocks, extra.anchors, forgotten, [], await glyphReader(page));
    blocks.push(...extra.blocks);
    warnings.push(`page ${pageNumber}: some text is not in the structure tree; it was placed after the tagged content`);
  }
  return { blocks, warnings, reasons: [] };
}

/** The page's text that is not an artifact and that no node of the structure tree refers to. */
function forgottenItems(tree: StructNode, items: TextItem[]): TextItem[] {
  const referenced = referencedIds(tree);
  return items.filter((item) => !item.artifact && (!item.mcid || !referenced.has(item.mcid)) && item.text.trim() !== '');
}

const textOf = (items: TextItem[]) => items.map((item) => item.text).join(' ');

/** An untagged page rebuilt from geometry (layoutPage), with its figures placed among the blocks. */
async function convertUntaggedPage(input: PageInput, list: OperatorList | null, images: PlacedImage[]): Promise<Converted> {
  const { page, pageNumber, options } = input;
  const frame = pageFrame(input.view, input.items);
  const extensionFonts = list ? extensionFontIds(page, input.items) : new Set<string>();
  const drawnWhere = (keep: (glyph: PlacedGlyph) => boolean) =>
    list ? pageGlyphPositions(page, list).flatMap((glyph) => (keep(glyph) ? [{ ...glyph, ...frame.point(glyph.x, glyph.y) }] : [])) : [];
  // a title pdf.js reports at 7 pt is laid out at the size it is drawn at, a heading as it looks
  const sized = atDrawnSizes(input.items).map(frame.item);
  const inLayout =
    list && drawsSoftHyphen(list)
      ? restoreSoftHyphens(
          sized,
          drawnWhere((glyph) => glyph.text === SOFT_HYPHEN),
        )
      : sized;
  // letters under an accent, where they are drawn (only pages that have some ask the drawing)
  const accented = inLayout.some((item) => /\p{M}/u.test(item.text))
    ? reseatAccented(
        inLayout,
        drawnWhere((glyph) => /^\P{M}$/u.test(glyph.text)),
      )
    : inLayout;
  const shifted = seatHangingGlyphs(
    spellExtensionGlyphs(accented, extensionFonts, extensionFonts.size > 0 ? drawnWhere((glyph) => extensionFonts.has(glyph.font)) : []),
    extensionFonts,
    list ? symbolFontIds(page, input.items) : new Set<string>(),
  );
  const neighbours = options.neighbours ? await options.neighbours(pageNumber) : undefined;
  const drawing = list ? readDrawing(list) : { rules: [], marks: [] };
  const rules = drawing.rules.map((rule) => {
    const { x0, y0, x1, y1 } = frame.box({ x0: rule.x1, y0: rule.y1, x1: rule.x2, y1: rule.y2 });
    return { ...rule, x1: x0, y1: y0, x2: x1, y2: y1 };
  });
  const letterFonts = mathFontIds(page, shifted);
  const segments = buildSegments(
    shifted,
    input.linkAreas.map((area) => ({ ...area, rect: rectIn(frame, area.rect) })),
    rules,
    letterFonts,
  );
  // a page set in TeX's math faces has mathematics in its prose; its glyphs are read once, for it and the displays
  const boldFonts = boldFontIds(page, shifted);
  const texFonts = list ? texMathFontIds(page, shifted) : new Set<string>();
  const reader = texFonts.size > 0 ? await glyphReader(page, { list, frame }) : undefined;
  if (reader)
    markInlineMath(
      segments,
      texFonts,
      reader,
      rules.filter(isFractionBar).map((rule) => ({ x1: Math.min(rule.x1, rule.x2), x2: Math.max(rule.x1, rule.x2), y: rule.y1 })),
      letterFonts,
      boldFonts,
    );
  // field labels leave the flow: the form says them beside their values
  const form = readPageForm(widgetsIn(frame, input.annotations), segments, pageNumber);
  const layout = layoutPage(form ? segments.filter((segment) => !form.labels.has(segment)) : segments, {
    page: pageNumber,
    pageWidth: frame.width,
    pageHeight: frame.height,
    neighbours,
    rules,
    boldFonts,
    monoFonts: monoFontIds(page, shifted),
    marks: drawing.marks.map(frame.box),
  });
  if (layout.blocks.some((block) => block.kind === 'formula'))
    readFormulaTex(layout.blocks, layout.anchors, shifted, rules, reader ?? (await glyphReader(page, { list, frame })));
  const { blocks, needingAlt } = await addUntaggedFigures(page, pageNumber, layout, images, frame, input.budget, form ? [form] : [], options.jpegs);
  return {
    blocks,
    ...(form ? { form } : {}),
    reasons: layout.multiColumn ? ['multi-column'] : [],
    warnings: [
      ...(needingAlt > 0 ? [`page ${pageNumber}: ${needingAlt} image(s) need alt text`] : []),
      // what was left out of the text by what it says, so a person can check it
      ...layout.furniture.map((line) => `page ${pageNumber}: left out as page furniture: "${line.slice(0, 120)}"`),
    ],
  };
}

/** The page's result: warnings every way shares, its classification, and empty paragraphs dropped. */
function finishPage(input: PageInput, converted: Converted, label: string | undefined, started: number): PageResult {
  const { pageNumber, textLayerWords, budget } = input;
  const { blocks, warnings, reasons } = converted;
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
  if (!converted.ocr && textLayerWords > 0 && countWords(blocksText(blocks)) < textLayerWords * 0.8) allReasons.push('low-coverage');
  return {
    page: pageNumber,
    label: label ?? String(pageNumber),
    backend: 'local',
    classification: classify(allReasons),
    reasons: allReasons,
    blocks: blocks.filter((block) => block.kind !== 'paragraph' || inlineText(block.content).trim() !== ''),
    warnings,
    textLayerWords,
    ocr: converted.ocr !== undefined,
    ...(converted.ocr ? { lang: converted.ocr.lang } : {}),
    ...(converted.title ? { title: converted.title } : {}),
    timings: { ms: Math.round(performance.now() - started) },
    costUsd: 0,
  };
}

/** A rectangle [x1, y1, x2, y2] in page space, in the page's frame. */
function rectIn(frame: PageFrame, [x1, y1, x2, y2]: number[]): [number, number, number, number] {
  const box = frame.box({ x0: x1!, y0: y1!, x1: x2!, y1: y2! });
  return [box.x0, box.y0, box.x1, box.y1];
}

function widgetsIn(frame: PageFrame, annotations: WidgetAnnotation[]): WidgetAnnotation[] {
  return annotations.map((annotation) => (annotation.rect?.length === 4 ? { ...annotation, rect: rectIn(frame, annotation.rect) } : annotation));
}
