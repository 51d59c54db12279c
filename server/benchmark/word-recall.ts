import { openPdf } from '../conversion/backends/local/pdf.ts';
import type { PageResult } from '../conversion/model.ts';
import { blocksText } from '../conversion/page-content.ts';

/** Words as recall counts them: runs of letters and digits, case folded. */
function wordsOf(text: string): string[] {
  return (text
    .normalize('NFKC')
    .toLowerCase()
    .match(/[\p{L}\p{N}]+/gu) ?? []) as string[];
}

/**
 * Share of the reference's words (a multiset) that the candidate holds; null
 * when the reference has none (a scan has no text layer to measure against).
 */
export function wordRecall(reference: string[], candidate: string[]): number | null {
  if (reference.length === 0) return null;
  const available = new Map<string, number>();
  for (const word of candidate) available.set(word, (available.get(word) ?? 0) + 1);
  let found = 0;
  for (const word of reference) {
    const left = available.get(word) ?? 0;
    if (left > 0) {
      available.set(word, left - 1);
      found++;
    }
  }
  return found / reference.length;
}

/** The words of the PDF's text layer, every page, as pdf.js reads them. */
export async function textLayerWords(pdf: Uint8Array, signal?: AbortSignal): Promise<string[]> {
  const doc = await openPdf(pdf);
  try {
    const words: string[] = [];
    for (let number = 1; number <= doc.numPages; number++) {
      signal?.throwIfAborted();
      const page = await doc.getPage(number);
      const content = await page.getTextContent();
      for (const item of content.items) if ('str' in item) words.push(...wordsOf(item.str));
      page.cleanup();
    }
    return words;
  } finally {
    await doc.loadingTask.destroy();
  }
}

/** The words a reader of the converted pages gets. */
export function convertedWords(pages: PageResult[]): string[] {
  return pages.flatMap((page) => wordsOf(blocksText(page.blocks)));
}
