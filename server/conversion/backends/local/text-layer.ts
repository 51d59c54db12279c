import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';

/**
 * The page's text layer in page space (origin bottom-left, y up), as pdf.js
 * gives it, plus which marked-content id (structure tree leaf) each run
 * belongs to, and whether it sits inside an /Artifact (running header,
 * footer, page number) that a tagged PDF keeps out of the reading flow.
 */

export type TextItem = {
  text: string;
  x: number;
  y: number;
  width: number;
  /** font size in points */
  size: number;
  font: string;
  eol: boolean;
  /** innermost marked-content id, when the item is inside one */
  mcid?: string;
  artifact: boolean;
};

type RawItem = { str: string; transform: number[]; width: number; height: number; fontName: string; hasEOL: boolean };
type RawMarker = { type: 'beginMarkedContent' | 'beginMarkedContentProps' | 'endMarkedContent'; id?: string; tag?: string };

export async function readTextLayer(page: PDFPageProxy): Promise<TextItem[]> {
  const content = await page.getTextContent({ includeMarkedContent: true });
  const stack: { id?: string; artifact: boolean }[] = [];
  const items: TextItem[] = [];
  for (const raw of content.items as (RawItem | RawMarker)[]) {
    if ('type' in raw) {
      if (raw.type === 'endMarkedContent') stack.pop();
      else stack.push({ id: raw.id ?? undefined, artifact: raw.tag === 'Artifact' || (stack.at(-1)?.artifact ?? false) });
      continue;
    }
    const [a = 0, b = 0, , , e = 0, f = 0] = raw.transform;
    const size = Math.hypot(a, b) || raw.height || 0;
    const top = stack.at(-1);
    let mcid: string | undefined;
    for (let index = stack.length - 1; index >= 0; index--) {
      if (stack[index]!.id) {
        mcid = stack[index]!.id;
        break;
      }
    }
    // control characters (some fonts map glyphs to U+0003) are not text; as spaces they keep neighbouring words apart
    const text = raw.str.replace(/[\u0000-\u001f\u007f]/g, ' ');
    items.push({ text, x: e, y: f, width: raw.width, size, font: raw.fontName, eol: raw.hasEOL, mcid, artifact: top?.artifact ?? false });
  }
  return items;
}

/** Words of a text, for coverage and classification. */
export function countWords(text: string): number {
  const matches = text.match(/[\p{L}\p{N}]+/gu);
  if (!matches) return 0;
  // Han and kana are written without spaces: count each character as a word.
  let count = 0;
  for (const word of matches) count += /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(word) ? word.length : 1;
  return count;
}
