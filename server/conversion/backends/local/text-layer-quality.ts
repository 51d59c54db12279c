import { OPS, type PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';

/**
 * Whether a page's text layer can be trusted as its text, or the page must be
 * read from its picture.
 */

/** Whether the page draws anything (paths, glyphs as curves): a blank page needs no OCR. */
export async function hasInk(page: PDFPageProxy): Promise<boolean> {
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
