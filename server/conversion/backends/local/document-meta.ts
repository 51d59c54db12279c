import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { DocumentMeta } from '../../model.ts';
import { isRtl } from '../../render/text.ts';
import { detectLanguage } from './language.ts';
import { isRightToLeftText } from './segments.ts';
import { cleanString, openPdf } from './pdf.ts';
import type { StructNode } from './tagged.ts';
import { readTextLayer, type TextItem } from './text-layer.ts';
import { firstLineTitle, isUsableTitle, largestText, undoubled } from './title.ts';
import { boldFontIds } from './font-styles.ts';

/** What every page of a document needs to know: title, language, whether it is tagged, page labels. */

export async function inspectDocument(pdf: Uint8Array, sourceName = 'document.pdf'): Promise<DocumentMeta> {
  const doc = await openPdf(pdf);
  try {
    return await readMeta(doc, sourceName);
  } finally {
    await doc.loadingTask.destroy();
  }
}

/**
 * `textLayer`: how a page's text layer is read; a page worker's keeps what it reads for the pages' own
 * conversion (createEdgeCache), so the first page's text is not read twice.
 */
export async function readMeta(
  doc: PDFDocumentProxy,
  sourceName: string,
  textLayer: (pageNumber: number) => Promise<TextItem[]> = (pageNumber) => readPageText(doc, pageNumber),
): Promise<DocumentMeta> {
  // the title and the language sample both read the first page
  const layers = new Map<number, Promise<TextItem[]>>();
  const layer = (pageNumber: number) => {
    if (!layers.has(pageNumber)) layers.set(pageNumber, textLayer(pageNumber));
    return layers.get(pageNumber)!;
  };
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
  const found =
    [undoubled(cleanString(metadata?.get('dc:title'))), cleanString(info.Title)].find((candidate) => isUsableTitle(candidate, sourceName)) ||
    (await firstPageTitle(doc, layer));
  const title = found || titleFromName(sourceName);
  let lang = cleanString(info.Language);
  let sample = '';
  // a page whose text cannot be read here is read (or reported) by its own conversion: the language goes without it
  for (let number = 1; number <= Math.min(doc.numPages, 3) && sample.length < 4000; number++) {
    const items = await layer(number).catch(() => [] as TextItem[]);
    sample += ` ${items.map((item) => item.text).join(' ')}`;
  }
  if (!lang) lang = detectLanguage(sample, 'en');
  // a /Lang that reads left to right on a right-to-left text is the producer's default (Word writes en-US on a
  // Persian document): a screen reader would speak it in the wrong voice, and the page would run the wrong way
  else if (!isRtl(lang) && isRightToLeftText(sample)) lang = detectLanguage(sample, lang);
  const author = cleanString(metadata?.get('dc:creator')) || cleanString(info.Author);
  const subject = cleanString(metadata?.get('dc:description')) || cleanString(info.Subject);
  return {
    title,
    ...(found ? {} : { titleFromName: true }),
    lang,
    pageCount: doc.numPages,
    tagged,
    ...(author ? { author } : {}),
    ...(subject ? { subject } : {}),
    sourceName,
  };
}

async function firstPageTitle(doc: PDFDocumentProxy, layer: (pageNumber: number) => Promise<TextItem[]>): Promise<string | undefined> {
  try {
    const items = await layer(1);
    const largest = largestText(items);
    if (largest) return largest;
    const candidate = firstLineTitle(items);
    if (!candidate) return undefined;
    // fonts are known by name only once the page's operators are read: worth it only for a line that could be the title
    const page = await doc.getPage(1);
    try {
      await page.getOperatorList();
      const bold = boldFontIds(page, items);
      return candidate.fonts.every((font) => bold.has(font)) ? candidate.text : undefined;
    } finally {
      page.cleanup();
    }
  } catch {
    return undefined;
  }
}

async function readPageText(doc: PDFDocumentProxy, pageNumber: number): Promise<TextItem[]> {
  const page = await doc.getPage(pageNumber);
  try {
    return await readTextLayer(page);
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
