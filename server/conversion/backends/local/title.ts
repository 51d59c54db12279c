import { numberingDepth } from '../../heading-levels.ts';
import type { TextItem } from './text-layer.ts';
import { isNotLanguage } from './text-layer-quality.ts';

/**
 * The document's title: its metadata title when that names the document, else
 * the largest text of its first page, else the file name. Producers fill the
 * metadata title with junk often enough ("Microsoft Word - draft3.docx",
 * "untitled", "PowerPoint Presentation", the file's own name) that it has to
 * earn its place; a reader would rather hear the title printed on the page.
 */

const JUNK_TITLES = [
  /^(untitled|no title|title|document|slide ?\d*|presentation|powerpoint presentation|microsoft word document)$/i,
  /^microsoft (word|powerpoint|excel)\s*[-–]/i,
  /\.(pdf|docx?|pptx?|xlsx?|odt|rtf|tex|dvi|ps|eps|indd|qxd|txt|html?)$/i,
  /^[a-z]:\\|^\//i,
  // a job or manuscript number, not a name: one word with digits or underscores ("sag-39-3-4-0902-21:sag-0", "report_v2")
  /^(?=\S*[\d_])\S+$/,
];

/** Most words a printed title has; past this the largest text is a banner sentence or a pull quote. */
const MAX_TITLE_WORDS = 30;
/** The title's size over the page's body size: text only a little larger is a heading or a bold lead. */
const TITLE_OVER_BODY = 1.15;

/** An XMP title with two language alternatives comes back from pdf.js as both, run together. */
export function undoubled(title: string): string {
  return /^(.{3,})\1$/su.exec(title.trim())?.[1] ?? title.trim();
}

/**
 * Latin words without a vowel are not words: a font whose Unicode map is
 * shifted ("KZmftZfd") extracts as letters that read as nothing. Some of its
 * words keep a vowel by chance ("Enkhn: Qdzchmf sgd Bnktlmr"): the shift
 * test of the lying-layer check settles those.
 */
function readsAsWords(text: string): boolean {
  const latin = text.match(/\b\p{Script=Latin}{3,}\b/gu) ?? [];
  if (latin.length === 0) return true;
  return latin.filter((word) => /[aeiouyàâäéèêëíìîïóòôöúùûüýÿ]/i.test(word)).length * 2 >= latin.length && !isNotLanguage(text);
}

export function isUsableTitle(title: string, sourceName: string): boolean {
  const text = title.trim();
  if (text.length < 3 || !/\p{L}{2,}/u.test(text) || !readsAsWords(text)) return false;
  if (JUNK_TITLES.some((pattern) => pattern.test(text))) return false;
  const stem = (name: string) =>
    name
      .replace(/^.*[\\/]/, '')
      .replace(/\.[a-z0-9]{1,5}$/i, '')
      .toLowerCase();
  return stem(text) !== stem(sourceName);
}

/**
 * The largest text of a page, when it stands out from the body text: its
 * lines of that size from the top one down, while they follow each other.
 */
export function largestText(items: TextItem[]): string | undefined {
  const usable = items.filter((item) => !item.artifact && item.text.trim() !== '' && item.size > 0);
  const body = bodySizeOf(usable);
  if (body === undefined) return undefined;
  const sizeOf = drawnSizes(usable, body);
  const sizes = [...new Set(usable.map(sizeOf))].filter((size) => size >= body * TITLE_OVER_BODY).sort((a, b) => b - a);
  for (const size of sizes) {
    const lines = new Map<number, TextItem[]>();
    for (const item of usable.filter((entry) => sizeOf(entry) === size)) {
      const key = Math.round(item.y);
      lines.set(key, [...(lines.get(key) ?? []), item]);
    }
    const ys = [...lines.keys()].sort((a, b) => b - a);
    const kept: string[] = [];
    let previous: number | undefined;
    for (const y of ys) {
      if (previous !== undefined && previous - y > size * 2) break;
      kept.push(
        lines
          .get(y)!
          .sort((a, b) => a.x - b.x)
          .map((item) => item.text)
          .join(' ')
          .replace(/\s+/g, ' ')
          .trim(),
      );
      previous = y;
    }
    const text = kept.join(' ').replace(/\s+/g, ' ').trim();
    const letters = (text.match(/\p{L}/gu) ?? []).length;
    // a drop cap, a big page number or a logo's initials is not a title: try the next size down
    if (letters < 4 || text.split(' ').length > MAX_TITLE_WORDS || !readsAsWords(text)) continue;
    if (echoedIn(text, edgeLines(usable, sizeOf, size))) continue;
    return text;
  }
  return undefined;
}

/**
 * Whether a line's text stands, with more beside it, in one of `lines`: a journal's name in its masthead, which the
 * page's citation line repeats word for word, in the same case ("Solar Energy Materials & Solar Cells 137 (2015)
 * 1–5"), names the publication, not the article under it.
 */
export function echoedIn(text: string, lines: string[]): boolean {
  const own = wordsOf(text);
  // a section's heading, numbered or set in capitals in the running head over it ("1.2. METRISCHE RÄUME"), is the page's own
  if (own.length < 2 || own.join(' ').length < 8 || numberingDepth(text)) return false;
  return lines.some((line) => {
    const other = wordsOf(line);
    return other.length > own.length && ` ${other.join(' ')} `.includes(` ${own.join(' ')} `);
  });
}

const wordsOf = (text: string) => text.match(/[\p{L}\p{N}]+/gu) ?? [];

/** The page's top and bottom lines, where a running head or a citation line stands, when set smaller than `size`. */
function edgeLines(items: TextItem[], sizeOf: (item: TextItem) => number, size: number): string[] {
  const rows = new Map<number, TextItem[]>();
  for (const item of items) {
    const row = rows.get(Math.round(item.y));
    if (row) row.push(item);
    else rows.set(Math.round(item.y), [item]);
  }
  const ys = [...rows.keys()].sort((a, b) => a - b);
  return [...new Set([ys[0]!, ys.at(-1)!])]
    .map((y) => rows.get(y)!)
    .filter((row) => row.every((item) => sizeOf(item) < size))
    .map((row) =>
      row
        .sort((a, b) => a.x - b.x)
        .map((item) => item.text)
        .join(' '),
    );
}

/**
 * Each item's size, rounded; text pdf.js reports smaller than the body is
 * judged by the room its letters take as well: a font whose matrix misleads
 * pdf.js reports a big title as 7 pt (a paper's first page). Only there, so a
 * wide face at the body's size (bold, a sans beside a serif) is not made a title.
 */
function drawnSizes(items: TextItem[], body: number): (item: TextItem) => number {
  const atBody = items.filter((item) => Math.round(item.size) === body);
  const chars = atBody.reduce((sum, item) => sum + item.text.length, 0);
  const emPerChar = chars > 0 ? atBody.reduce((sum, item) => sum + item.width, 0) / chars / body : 0;
  // judged per font and reported size, not per item: one line's letters say little
  const room = new Map<string, { width: number; chars: number }>();
  const keyOf = (item: TextItem) => `${item.font}\u0000${Math.round(item.size)}`;
  for (const item of items) {
    const entry = room.get(keyOf(item)) ?? { width: 0, chars: 0 };
    room.set(keyOf(item), { width: entry.width + item.width, chars: entry.chars + item.text.length });
  }
  return (item) => {
    const size = Math.round(item.size);
    const { width, chars } = room.get(keyOf(item))!;
    if (size >= body || emPerChar <= 0 || chars < 8) return size;
    const drawn = width / chars / emPerChar;
    // the same font reported right near that size (a title's second line) is the size it is drawn at
    const reported = items.find((other) => other.font === item.font && other.size >= body && Math.abs(other.size - drawn) <= drawn * 0.15);
    return Math.max(size, Math.round(reported?.size ?? drawn));
  };
}

/**
 * A title set in bold at the body's size (a word processor's plain
 * document): the page's first line, wholly bold, short, not a numbered
 * section, and set apart from the text under it by more than a line's pitch.
 * The text alone settles all but the boldness: the line and the fonts it is
 * set in come back, and the caller, who must read the page's operators to
 * know which fonts are bold, does so only for a line that could be a title.
 */
export function firstLineTitle(items: TextItem[]): { text: string; fonts: string[] } | undefined {
  const usable = items.filter((item) => !item.artifact && item.text.trim() !== '' && item.size > 0);
  const lines: { y: number; size: number; items: TextItem[] }[] = [];
  for (const item of [...usable].sort((a, b) => b.y - a.y || a.x - b.x)) {
    const line = lines.at(-1);
    if (line && Math.abs(line.y - item.y) <= Math.max(line.size, item.size) * 0.5) line.items.push(item);
    else lines.push({ y: item.y, size: item.size, items: [item] });
  }
  if (lines.length < 3) return undefined;
  const [first, second, third] = lines as [(typeof lines)[0], (typeof lines)[0], (typeof lines)[0]];
  const text = first.items
    .sort((a, b) => a.x - b.x)
    .map((item) => item.text)
    .join(' ')
    .replace(/\s+/g, ' ')
    .trim();
  const words = text.split(' ').length;
  if (words < 2 || words > 15 || /[.,;:]$/.test(text) || numberingDepth(text) || !readsAsWords(text) || !/^[\p{Lu}\d]/u.test(text)) return undefined;
  // apart: the gap under it wider than the pitch of the lines that follow
  const pitch = second.y - third.y;
  return first.y - second.y > Math.max(pitch, first.size) * 1.5 ? { text, fonts: first.items.map((item) => item.font) } : undefined;
}

/**
 * The page's text with each run at the size it is drawn at, where pdf.js
 * misreports it: a font whose matrix misleads pdf.js reports a title at 7 pt
 * while the same font's authors beside it come right at 12. A font's letters
 * take the same room per point whatever its size (counted in half-em cells), so a size of the font whose
 * letters take twice the room or more of its other sizes' is that much bigger,
 * and is laid out so (a title is a heading, not a paragraph of small print).
 * Only title-sized text is changed: a font seen at one size has nothing to
 * be compared with, and a wide face against a narrow body is no misreport.
 */
export function atDrawnSizes(items: TextItem[]): TextItem[] {
  const usable = items.filter((item) => !item.artifact && item.text.trim() !== '' && item.size > 0);
  const body = bodySizeOf(usable);
  if (body === undefined) return items;
  const sizeKey = (item: TextItem) => `${item.font}\u0000${Math.round(item.size * 2) / 2}`;
  const room = new Map<string, { font: string; size: number; width: number; chars: number }>();
  for (const item of usable) {
    const entry = room.get(sizeKey(item)) ?? { font: item.font, size: Math.round(item.size * 2) / 2, width: 0, chars: 0 };
    entry.width += item.width;
    entry.chars += halfWidths(item.text);
    room.set(sizeKey(item), entry);
  }
  const scale = new Map<string, number>();
  for (const [key, group] of room) {
    const others = [...room.values()].filter((other) => other.font === group.font && other !== group && other.chars >= 8);
    if (group.chars < 8 || others.length === 0) continue;
    const perPoint = (entry: { size: number; width: number; chars: number }) => entry.width / entry.chars / entry.size;
    const usual = others.reduce((sum, other) => sum + perPoint(other) * other.chars, 0) / others.reduce((sum, other) => sum + other.chars, 0);
    const factor = perPoint(group) / usual;
    if (factor >= 1.8 && group.size * factor >= body * TITLE_OVER_BODY) scale.set(key, factor);
  }
  if (scale.size === 0) return items;
  return items.map((item) => {
    const factor = item.size > 0 ? scale.get(sizeKey(item)) : undefined;
    return factor === undefined ? item : { ...item, size: item.size * factor };
  });
}

/** Characters counted in half-em cells: a Hangul or CJK character is drawn as wide as two Latin letters. */
function halfWidths(text: string): number {
  let cells = 0;
  for (const char of text.replace(/\s/g, '')) cells += FULL_WIDTH.test(char) ? 2 : 1;
  return cells;
}

const FULL_WIDTH = /[\p{Script=Hangul}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\uFF01-\uFF60]/u;

/** The size most of the page's letters are set in, rounded. */
function bodySizeOf(usable: TextItem[]): number | undefined {
  const weight = new Map<number, number>();
  for (const item of usable) weight.set(Math.round(item.size), (weight.get(Math.round(item.size)) ?? 0) + item.text.length);
  return [...weight.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
}
