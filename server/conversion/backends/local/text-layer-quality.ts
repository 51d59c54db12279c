import { OPS, type PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { STOP_WORDS } from './language.ts';
import type { TextItem } from './text-layer.ts';

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

/** Latin words a layer must have before it is judged as language: fewer say too little either way. */
const MIN_JUDGED_WORDS = 12;
/** Share of a language's commonest words in running text: 25–45% in prose; a shifted map gives 0–3%. */
const STOP_SHARE_TEXT = 0.12;
const STOP_SHARE_NONE = 0.04;
/** Share of words of four letters or more without a vowel: 0–10% in Latin-script prose, 40–70% with a shifted map. */
const VOWELLESS_SHARE = 0.35;

const stopWordSets = Object.values(STOP_WORDS).map((list) => new Set(list));

/** The highest share of one language's commonest words among the words. */
function stopShare(words: string[]): number {
  let best = 0;
  for (const set of stopWordSets) best = Math.max(best, words.filter((word) => set.has(word)).length / words.length);
  return best;
}

/** The letters moved k places along the alphabet, as a font map shifted by k codes would show them. */
function shiftLetters(word: string, k: number): string {
  return word.replace(/[a-z]/g, (letter) => String.fromCharCode(97 + ((letter.charCodeAt(0) - 97 + k + 26) % 26)));
}

/** The share of common words the words have once their letters are moved back by each shift a lying map is tried for, nearest first. */
function sharesByShift(words: string[]): { k: number; share: number }[] {
  return [1, -1, 2, -2, 3, -3].map((k) => ({ k, share: stopShare(words.map((word) => shiftLetters(word, k))) }));
}

/**
 * A text layer of valid letters that is not language: a font whose Unicode
 * map is shifted ("sgd Rbhdmbd ne KZmftZfd" for "the Science of Language").
 * No check on characters catches it. Two tests, on the Latin words only
 * (other scripts are left alone), of two letters or more with a lower-case one (single letters are
 * variables and marks in tables, capitals abbreviations, not words): hardly any of a language's commonest words
 * while the same letters moved one to three places along the alphabet have
 * their share of them (the shift test), or hardly any common words and many
 * words of four letters or more without a vowel. With fewer than 12 words of three letters or more, the shift test alone (judgeShortRun).
 */
export function isNotLanguage(text: string): boolean {
  return judgeLanguage(text) === 'not';
}

/** isNotLanguage's verdict, with undefined where there are too few words to tell. */
function judgeLanguage(text: string): 'language' | 'not' | undefined {
  const all = text.match(/\p{L}+/gu) ?? [];
  const latin = all.filter((word) => /^[A-Za-z\u00C0-\u024F]+$/.test(word));
  // a page in another script with some Latin names and abbreviations in it is not judged by them
  if (latin.join('').length < all.join('').length / 2) return undefined;
  const words = latin.filter((word) => word.length >= 2 && /[a-z]/.test(word)).map((word) => word.toLowerCase());
  const long = words.filter((word) => word.length >= 3);
  // a math font's two-letter names ("ia", "ib") are no words to judge language by
  if (long.length < MIN_JUDGED_WORDS) return judgeShortRun(words);
  const share = stopShare(words);
  if (share >= STOP_SHARE_NONE) return 'language';
  if (sharesByShift(words).some(({ share }) => share >= STOP_SHARE_TEXT)) return 'not';
  // units and abbreviations ("kHz", "dBm", "std") are short: vowels are judged on words of four letters or more
  const longer = words.filter((word) => word.length >= 4);
  if (longer.length < MIN_JUDGED_WORDS / 2) return 'language';
  return longer.filter((word) => !/[aeiouyà-öø-ÿ]/.test(word)).length > longer.length * VOWELLESS_SHARE ? 'not' : 'language';
}

/**
 * A run too short for the shares (a title line in a font of its own) lies
 * only on the shift test's proof: a word of four letters or more without a
 * vowel, and at least two of a language's commonest words, a quarter of its
 * words and twice as many as it has as it reads, once its letters are moved
 * back ("sgd Rbhdmbd ne KZmftZfd Lncdkr": "the", "of"; "ne" is French).
 * Otherwise undecided.
 */
function judgeShortRun(words: string[]): 'not' | undefined {
  if (words.length < 3 || !words.some((word) => word.length >= 4 && !/[aeiouyà-öø-ÿ]/.test(word))) return undefined;
  const asRead = stopShare(words);
  return sharesByShift(words).some(({ share }) => share * words.length >= 2 && share >= 0.25 && share >= asRead * 2) ? 'not' : undefined;
}

/** The shift (places along the alphabet) that turns the text into language, as the shift test finds it; undefined when none does. */
function shiftToLanguage(text: string): number | undefined {
  const words = (text.match(/[A-Za-z]{2,}/g) ?? []).filter((word) => /[a-z]/.test(word)).map((word) => word.toLowerCase());
  if (words.length < 3) return undefined;
  const asRead = stopShare(words);
  let best: { k: number; share: number } | undefined;
  for (const shifted of sharesByShift(words)) if (shifted.share > asRead * 2 && shifted.share > (best?.share ?? 0)) best = shifted;
  return best?.k;
}

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A word of a shifted map read back: each letter moved k places along the
 * capitals followed by the small letters, the order a subset font's glyphs
 * come in, so the map's "Z" is an "a" ("KZmftZfd" is "Language").
 */
function shiftBack(word: string, k: number): string {
  return word.replace(/[A-Za-z]/g, (letter) => LETTERS[(LETTERS.indexOf(letter) + k + LETTERS.length) % LETTERS.length]!);
}

/**
 * The fonts whose runs are to be read from the page's picture when its text
 * layer lies (the whole page, or the runs of one font, is not language):
 * each font found not to be language, and, when the whole page is not, the
 * fonts too short to judge (a shifted map rarely stops at one font). Empty
 * when the layer can be trusted.
 */
export function lyingFonts(items: TextItem[]): Set<string> {
  const byFont = new Map<string, string[]>();
  for (const item of items) {
    if (item.artifact) continue;
    let texts = byFont.get(item.font);
    if (!texts) byFont.set(item.font, (texts = []));
    texts.push(item.text);
  }
  const verdicts = new Map([...byFont].map(([font, texts]) => [font, judgeLanguage(texts.join(' '))]));
  const pageLies = judgeLanguage([...byFont.values()].map((texts) => texts.join(' ')).join(' ')) === 'not';
  const fonts = new Set<string>();
  for (const [font, verdict] of verdicts) if (verdict === 'not' || (pageLies && verdict === undefined)) fonts.add(font);
  return pageLies || [...verdicts.values()].includes('not') ? fonts : new Set();
}

/**
 * The runs of the given fonts with the words OCR read inside their boxes in
 * place of their text (left to right); a run of such a font OCR found
 * nothing in says nothing. Each word goes to one run: the one whose box holds
 * its centre, the nearest baseline when several do.
 */
export function replaceRuns(
  items: TextItem[],
  fonts: Set<string>,
  words: { text: string; x0: number; y0: number; x1: number; y1: number }[],
): { items: TextItem[]; replaced: number } {
  const taken = new Map<number, { x: number; text: string }[]>();
  for (const word of words) {
    const [cx, cy] = [(word.x0 + word.x1) / 2, (word.y0 + word.y1) / 2];
    let best = -1;
    let bestDistance = Number.POSITIVE_INFINITY;
    items.forEach((item, index) => {
      // an empty run (a line's end) or a space keeps its text: a word given to it would be lost
      if (!fonts.has(item.font) || item.size <= 0 || item.text.trim() === '') return;
      const inside =
        cx >= item.x - item.size * 0.2 && cx <= item.x + item.width + item.size * 0.2 && cy >= item.y - item.size * 0.35 && cy <= item.y + item.size * 0.95;
      const distance = Math.abs(cy - (item.y + item.size * 0.3));
      if (inside && distance < bestDistance) [best, bestDistance] = [index, distance];
    });
    if (best < 0) continue;
    let list = taken.get(best);
    if (!list) taken.set(best, (list = []));
    list.push({ x: word.x0, text: word.text });
  }
  // a word OCR cannot read (a logo drawn over it) is still in the layer: read back by the map's shift, where no OCR word lies
  const shift = shiftToLanguage(
    items
      .filter((item) => fonts.has(item.font))
      .map((item) => item.text)
      .join(' '),
  );
  let replaced = 0;
  const out = items.map((item, index) => {
    // a run that is only a space keeps words of its line apart
    if (!fonts.has(item.font) || item.text.trim() === '') return item;
    replaced++;
    const list = taken.get(index) ?? [];
    if (shift !== undefined && list.length > 0) list.push(...unreadWords(item, shift, words));
    const found = list.sort((a, b) => a.x - b.x).map((word) => word.text);
    // OCR's words are whole: spaces around them, since a word drawn in two fonts ("h" "a" "ve") went to one of its runs;
    // a colon OCR read apart from its word (the ":" after a logo) closes up to it; a lone dot or comma is more often a speck
    const joined = found.join(' ').replace(/ ([:;])(?= |$)/g, '$1');
    // …but a line-end hyphen stays last, for the paragraph to join its word
    const text = found.length > 0 ? ` ${joined}${joined.endsWith('-') ? '' : ' '}` : '';
    return { ...item, text };
  });
  return { items: out, replaced };
}

/**
 * The run's words, read back by the shift, where no OCR word lies: where each
 * sits is estimated from its place in the run's text (the run's letters share
 * its width). Words only, with a vowel once read back: marks and
 * stray letters are OCR's to read.
 */
function unreadWords(item: TextItem, shift: number, words: { x0: number; y0: number; x1: number; y1: number }[]): { x: number; text: string }[] {
  const perChar = item.width / Math.max(item.text.length, 1);
  const line = words.filter((word) => word.y1 >= item.y - item.size * 0.35 && word.y0 <= item.y + item.size * 0.95);
  const out: { x: number; text: string }[] = [];
  for (const match of item.text.matchAll(/[A-Za-z]{2,}/g)) {
    const x0 = item.x + match.index * perChar;
    const x1 = x0 + match[0].length * perChar;
    const text = shiftBack(match[0], shift);
    if (!/[aeiouy]/i.test(text)) continue;
    // any overlap: the estimate is rough, and a word OCR read there (even misread) is its own reading
    if (line.some((word) => word.x1 > x0 && word.x0 < x1)) continue;
    out.push({ x: x0, text });
  }
  return out;
}
