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
  /** of a rotated item, the quarter turns (counter-clockwise) of its baseline from the page's x axis: 1 runs up, 3 down */
  quarter?: 1 | 3;
  /** set slanting, neither level nor upright (a watermark across the page): its width runs along the slant */
  slanted?: boolean;
  /** a big delimiter or operator seated on its line (hanging-glyphs.ts): how far its ink reaches over and under the page's bottom */
  reach?: Reach;
  /** the text as pdf.js spelled it, where it held control characters that `text` has as spaces */
  codes?: string;
};

export type Reach = { top: number; bottom: number };

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
    const spelled = raw.str.replace(/[\u0000-\u001f\u007f]/g, ' ');
    // a glyph pdf.js spells by its code, below the space, is one an extension font may still name (spellExtensionGlyphs)
    const codes = spelled === raw.str ? undefined : raw.str;
    const text = closeLetterSpacing(spelled);
    const rotated = size > 0 && Math.abs(a) < size * 0.5;
    const slanted = !rotated && size > 0 && Math.abs(b) > size * 0.2;
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
      ...(rotated ? { rotated, quarter: b >= 0 ? 1 : 3 } : {}),
      ...(slanted ? { slanted } : {}),
      ...(codes ? { codes } : {}),
    });
  }
  return withAccentsOnTheirLetters(withoutOverprints(items));
}

/** A run of single letters a space apart, four or more: a word set letter-spaced ("a r t i c l e", "藥 劑 名 稱"). */
const LETTER_SPACED = /^\s*\p{L}(?: \p{L}){3,}\s*$/u;

/**
 * A word set letter-spaced (a journal's "a r t i c l e   i n f o", German Sperrsatz, a Chinese table's heading)
 * comes from pdf.js as one run per word with a space between each letter; read so it is letters, not a word. The
 * words stay apart: pdf.js gives each its own run.
 */
function closeLetterSpacing(text: string): string {
  return LETTER_SPACED.test(text) ? text.replace(/(\p{L}) (?=\p{L})/gu, '$1') : text;
}

/** Spacing accents and the combining marks they are on a letter. */
const ACCENTS: Record<string, string> = {
  '´': '\u0301',
  '`': '\u0300',
  '¨': '\u0308',
  ˆ: '\u0302',
  '˜': '\u0303',
  '¸': '\u0327',
  '˘': '\u0306',
  ˇ: '\u030c',
  '˙': '\u0307',
  '˚': '\u030a',
  '˝': '\u030b',
  '¯': '\u0304',
  // a math font's vector arrow comes as the combining mark itself, a run of its own
  '\u20d7': '\u20d7',
};

/**
 * TeX sets an accent as a glyph of its own over its letter (a font without é draws e and ´; a math \hat{P} draws P
 * and ˆ raised over it): read as text, "Universit´e" and "ˆ P". An accent is put on its letter as a combining mark
 * where the page draws it over the letter: a run of its own whose edge or middle is over the first letter of the run
 * after it or the last of the run before it, on about that line (a cedilla hangs below); or closing or opening a
 * run that the letter's run is drawn back over. Within one run the drawing is not known, and an accent there stays
 * as it is ("don´t" typed with its own advance).
 */
export function withAccentsOnTheirLetters(items: TextItem[]): TextItem[] {
  const out: TextItem[] = [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index]!;
    const accent = item.text.trim();
    const mark = accent.length === 1 ? ACCENTS[accent] : undefined;
    if (mark && !item.artifact) {
      const onto = (letterItem: TextItem | undefined, first: boolean) => {
        if (!letterItem || letterItem.artifact || letterItem.size <= 0) return false;
        const chars = [...letterItem.text];
        const at = first ? chars.findIndex((char) => char.trim() !== '') : chars.findLastIndex((char) => char.trim() !== '');
        if (at < 0 || !/\p{L}/u.test(chars[at]!)) return false;
        const step = letterItem.width / chars.length;
        const left = letterItem.x + step * at;
        const rise = item.y - letterItem.y;
        // its left edge over the letter (a wide accent reaches past it), or its middle (a narrow one over a narrower letter)
        const centre = item.x + item.width / 2;
        const over = (item.x >= left - letterItem.size * 0.2 && item.x <= left + step) || (centre >= left && centre <= left + step);
        if (!over || rise < -letterItem.size * 0.4 || rise > letterItem.size * 0.9) return false;
        chars[at] = chars[at]! + mark;
        letterItem.text = chars.join('').normalize('NFC');
        return true;
      };
      if (onto(items[index + 1], true) || onto(out.at(-1), false)) continue;
    }
    // an accent opening a run drawn back over the last letter of the run before (the letter first, then its accent)
    const opening = ACCENTS[item.text[0] ?? ''];
    const previous = out.at(-1);
    if (
      opening &&
      !mark &&
      previous &&
      !previous.artifact &&
      /\p{L}$/u.test(previous.text) &&
      Math.abs(previous.y - item.y) <= item.size * 0.2 &&
      item.x < previous.x + previous.width - item.size * 0.1
    ) {
      previous.text = (previous.text + opening).normalize('NFC');
      const step = item.width / [...item.text].length;
      item.text = item.text.slice(1);
      item.x += step;
      item.width -= step;
    }
    // an accent closing a run, the next run's letter drawn back under it (the accent first, then its letter)
    const closing = ACCENTS[item.text.at(-1) ?? ''];
    const next = items[index + 1];
    if (
      closing &&
      !mark &&
      next &&
      !next.artifact &&
      /^\p{L}/u.test(next.text) &&
      Math.abs(next.y - item.y) <= item.size * 0.2 &&
      next.x < item.x + item.width - item.size * 0.1
    ) {
      item.text = item.text.slice(0, -1);
      const letter = [...next.text][0]!;
      next.text = (letter + closing + next.text.slice(letter.length)).normalize('NFC');
    }
    out.push(item);
  }
  return out;
}

/**
 * A word drawn again on top of itself (a shadow or outline under the text, a bold faked by printing twice) is
 * read once: the same text, at the same size, within a fifth of an em of the first drawing. Single glyphs stay,
 * since a formula builds symbols from overlapping ones ("=" over "=", a slash through a sign).
 */
function withoutOverprints(items: TextItem[]): TextItem[] {
  const seen = new Map<string, TextItem[]>();
  return items.filter((item) => {
    if (item.text.trim().length < 2) return true;
    const drawn = seen.get(item.text);
    const copy = drawn?.some(
      (other) =>
        other.artifact === item.artifact &&
        Math.abs(other.size - item.size) < 0.01 * item.size &&
        Math.abs(other.x - item.x) <= item.size * 0.2 &&
        Math.abs(other.y - item.y) <= item.size * 0.2,
    );
    if (copy) return false;
    if (drawn) drawn.push(item);
    else seen.set(item.text, [item]);
    return true;
  });
}

/** An Arabic letter or mark: what a word of a right-to-left run is made of (the tatweel and the harakat too, which Unicode counts as common and inherited script). */
const ARABIC = /^[\p{Script_Extensions=Arabic}]+$/u;

/**
 * Right-to-left words put back as drawn. A lam-alef is one glyph whose
 * Unicode is two letters ("لا"); pdf.js reverses a right-to-left run letter
 * by letter, so the ligature comes out as "ال" ("کاال" for "کالا"), and the
 * text alone cannot tell it from a real alef-lam. And a glyph drawn again
 * almost on top of the same glyph (a justified line stretched with
 * overlapping kashidas, an overprint) is one letter on the page, not two:
 * the copy starts within a third of the glyph's width of it. The operator
 * list has the glyphs: each word drawn (glyphs between spaces, all Arabic)
 * that holds a glyph of several letters or such a copy is found in the items
 * as pdf.js reversed it, letter by letter, and replaced by the word reversed
 * glyph by glyph, without the copies.
 */
export function repairReversedLigatures(items: TextItem[], list: OperatorList): TextItem[] {
  const fixes = new Map<string, string>();
  // every Arabic word drawn, by its text as pdf.js gives it: what each drawing of it reads, in stream order
  const drawings = new Map<string, string[]>();
  const copied = new Set<string>();
  for (let index = 0; index < list.fnArray.length; index++) {
    if (list.fnArray[index] !== OPS.showText) continue;
    const glyphs = ((list.argsArray[index] as unknown[])?.[0] ?? []) as ({ unicode?: string; width?: number } | number | null)[];
    let word: string[] = [];
    let kept: string[] = [];
    const settle = () => {
      if (word.length > 0 && word.every((letter) => ARABIC.test(letter))) {
        const wrong = [...word.join('')].reverse().join('');
        const right = [...kept].reverse().join('');
        if (kept.length < word.length) copied.add(wrong);
        else if (wrong !== right) fixes.set(wrong, right);
        drawings.set(wrong, [...(drawings.get(wrong) ?? []), right]);
      }
      word = [];
      kept = [];
    };
    // the advance from the last glyph's start, in thousandths of the font size: its width less the kerning after it
    let last: { unicode: string; width: number } | undefined;
    let advance = 0;
    for (const glyph of glyphs) {
      // numbers are kerning: a word goes on across them
      if (typeof glyph === 'number') {
        advance -= glyph;
        continue;
      }
      if (!glyph) continue;
      const letter = glyph.unicode ?? '';
      const width = glyph.width ?? 0;
      if (letter.trim() === '' || !ARABIC.test(letter)) settle();
      else {
        word.push(letter);
        if (!(last?.unicode === letter && last.width > 0 && advance < last.width / 3)) kept.push(letter);
      }
      last = { unicode: letter, width };
      advance = width;
    }
    settle();
  }
  if (fixes.size === 0 && copied.size === 0) return items;
  // longest first, so a word's fix is not cut short by a shorter one inside it
  const ordered = [...fixes].sort((a, b) => b[0].length - a[0].length);
  // A word drawn with copies reads the same, as pdf.js gives it, as other words drawn without ("فووا" twice, one
  // kashida a copy in one of them), and a word of kashidas alone ("وووو") is inside many others: each whole word
  // of that text takes the reading of its own drawing, the items being in stream order, and a right-to-left
  // item's words from its end.
  const whole = [...copied].sort((a, b) => b.length - a.length);
  const wholeWord =
    whole.length > 0 ? new RegExp(`(?<!\\p{Script_Extensions=Arabic})(?:${whole.join('|')})(?!\\p{Script_Extensions=Arabic})`, 'gu') : undefined;
  return items.map((item) => {
    let text = item.text;
    if (wholeWord && whole.some((wrong) => text.includes(wrong))) {
      const found = [...text.matchAll(wholeWord)];
      const reads = new Map<number, string>();
      for (const match of found.reverse()) reads.set(match.index, drawings.get(match[0])?.shift() ?? match[0]);
      text = text.replace(wholeWord, (match, at: number) => reads.get(at) ?? match);
    }
    for (const [wrong, right] of ordered) if (text.includes(wrong)) text = text.replaceAll(wrong, right);
    return text === item.text ? item : { ...item, text };
  });
}
