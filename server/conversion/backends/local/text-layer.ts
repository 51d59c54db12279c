import { OPS, type PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { OperatorList } from './drawing.ts';

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
  /** set at an angle to the page's lines (a "Downloaded from …" line up the margin): its x and width are not along the line */
  rotated?: boolean;
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
    const rotated = size > 0 && Math.abs(a) < size * 0.5;
    items.push({
      text,
      x: e,
      y: f,
      width: raw.width,
      size,
      font: raw.fontName,
      eol: raw.hasEOL,
      mcid,
      artifact: top?.artifact ?? false,
      ...(rotated ? { rotated } : {}),
    });
  }
  return items;
}

/** An Arabic letter or mark: what a word of a right-to-left run is made of. */
const ARABIC = /^[\p{Script=Arabic}]+$/u;

/**
 * Right-to-left ligatures put back in order. A lam-alef is one glyph whose
 * Unicode is two letters ("لا"); pdf.js reverses a right-to-left run letter
 * by letter, so the ligature comes out as "ال" ("کاال" for "کالا"), and the
 * text alone cannot tell it from a real alef-lam. The operator list has the
 * glyphs: each word drawn (glyphs between spaces, all Arabic) that holds a
 * glyph of several letters is found in the items as pdf.js reversed it,
 * letter by letter, and replaced by the word reversed glyph by glyph.
 */
export function repairReversedLigatures(items: TextItem[], list: OperatorList): TextItem[] {
  const fixes = new Map<string, string>();
  for (let index = 0; index < list.fnArray.length; index++) {
    if (list.fnArray[index] !== OPS.showText) continue;
    const glyphs = ((list.argsArray[index] as unknown[])?.[0] ?? []) as ({ unicode?: string } | number | null)[];
    let word: string[] = [];
    const settle = () => {
      if (word.some((letter) => letter.length > 1) && word.every((letter) => ARABIC.test(letter))) {
        const wrong = [...word.join('')].reverse().join('');
        const right = [...word].reverse().join('');
        if (wrong !== right) fixes.set(wrong, right);
      }
      word = [];
    };
    for (const glyph of glyphs) {
      // numbers are kerning: a word goes on across them
      if (typeof glyph === 'number' || !glyph) continue;
      const letter = glyph.unicode ?? '';
      if (letter.trim() === '' || !ARABIC.test(letter)) settle();
      else word.push(letter);
    }
    settle();
  }
  if (fixes.size === 0) return items;
  // longest first, so a word's fix is not cut short by a shorter one inside it
  const ordered = [...fixes].sort((a, b) => b[0].length - a[0].length);
  return items.map((item) => {
    let text = item.text;
    for (const [wrong, right] of ordered) if (text.includes(wrong)) text = text.replaceAll(wrong, right);
    return text === item.text ? item : { ...item, text };
  });
}
