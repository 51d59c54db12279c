import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { readTextLayer, type TextItem } from './text-layer.ts';

/**
 * Running heads and feet are artifacts (PDF/UA): a line at the top or bottom
 * of a page that recurs, digits aside, at the same edge of a nearby page
 * ("84 4.3. HYPERBOLISCHE GEOMETRIE" over "86 4.3. …"). Pages are converted
 * independently, so each page looks at its neighbours two either side (books
 * alternate left and right heads) through a small per-document cache.
 */

export type EdgeLines = { top: string[]; bottom: string[] };

/** Lines compared with digits and spacing folded, so page numbers inside a head do not matter. */
export function edgeKey(text: string): string {
  return text.replace(/\d+/g, '#').replace(/\s+/g, '').toLowerCase();
}

const EDGE_LINES = 2;
const CACHE_LIMIT = 64;
/**
 * Text layers read ahead for a neighbour's sake, kept until their own page is
 * converted: a page ahead is usually this worker's next one, and reading a
 * text layer is the costliest part of an untagged page after the operator list.
 */
const AHEAD_LIMIT = 8;

export function createEdgeCache(doc: PDFDocumentProxy) {
  const cache = new Map<number, Promise<EdgeLines>>();
  const ahead = new Map<number, TextItem[]>();
  const readAhead = async (pageNumber: number): Promise<TextItem[]> => {
    const page = await doc.getPage(pageNumber);
    try {
      // the same read as the page's own conversion, so the page can take it instead of reading again
      const items = await readTextLayer(page);
      ahead.set(pageNumber, items);
      if (ahead.size > AHEAD_LIMIT) ahead.delete(ahead.keys().next().value!);
      return items;
    } finally {
      page.cleanup();
    }
  };
  const read = async (pageNumber: number): Promise<EdgeLines> => edgesOf(await readAhead(pageNumber));
  const remember = (pageNumber: number, entry: Promise<EdgeLines>) => {
    cache.set(pageNumber, entry);
    if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  };
  return {
    /** The page's text layer if a neighbour read it already; handed over once, then forgotten. */
    takeTextLayer(pageNumber: number): TextItem[] | undefined {
      const items = ahead.get(pageNumber);
      ahead.delete(pageNumber);
      return items;
    },
    /**
     * A page's text layer read for another reason (the document's inspection samples its first pages for
     * the title and language): kept for the page's own conversion as a neighbour's is, its edge lines recorded.
     */
    async textLayer(pageNumber: number): Promise<TextItem[]> {
      const items = await readAhead(pageNumber);
      if (!cache.has(pageNumber)) remember(pageNumber, Promise.resolve(edgesOf(items)));
      return items;
    },
    /** Records a page's own edge lines, read anyway while converting it, so neighbours need not read it again. */
    remember(pageNumber: number, items: { text: string; y: number }[]) {
      if (!cache.has(pageNumber)) remember(pageNumber, Promise.resolve(edgesOf(items)));
    },
    /** Edge lines of the pages near `pageNumber` (not the page itself). */
    async neighbours(pageNumber: number): Promise<EdgeLines[]> {
      const numbers = [pageNumber - 2, pageNumber - 1, pageNumber + 1, pageNumber + 2].filter((n) => n >= 1 && n <= doc.numPages);
      return Promise.all(
        numbers.map((n) => {
          let entry = cache.get(n);
          if (!entry) {
            entry = read(n).catch(() => ({ top: [], bottom: [] }));
            remember(n, entry);
          }
          return entry;
        }),
      );
    },
  };
}

function edgesOf(items: { text: string; y: number }[]): EdgeLines {
  const lines = new Map<number, string>();
  for (const item of items) {
    if (item.text.trim() === '') continue;
    const y = Math.round(item.y);
    lines.set(y, `${lines.get(y) ?? ''} ${item.text}`);
  }
  const ordered = [...lines.entries()].sort((a, b) => b[0] - a[0]).map(([, text]) => edgeKey(text));
  return { top: ordered.slice(0, EDGE_LINES), bottom: ordered.slice(-EDGE_LINES) };
}
