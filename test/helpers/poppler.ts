import { execFileSync, spawnSync } from 'node:child_process';

/** poppler-utils (pdftotext, pdfinfo, pdftohtml) as an oracle; tests skip with a message when it is missing. */
export function hasPoppler(): boolean {
  return spawnSync('pdftotext', ['-v']).status === 0;
}

/** pdftotext of the whole file, or of one page range, in reading order (no -layout). */
export function pdftotext(file: string, range?: { first: number; last: number }): string {
  const args = range ? ['-f', String(range.first), '-l', String(range.last)] : [];
  return execFileSync('pdftotext', [...args, '-enc', 'UTF-8', file, '-'], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
}

/**
 * Words for comparison: NFKC, lower case, letters and digits only. A word
 * broken by a hyphen at a line end in pdftotext ("exam-" "ple") is joined,
 * because our engine repairs hyphenation.
 */
export function wordsOf(text: string): string[] {
  const joined = text.normalize('NFKC').replace(/(\p{L})-\s*\n\s*(\p{Ll})/gu, '$1$2');
  return joined
    .toLowerCase()
    .split(/[^\p{L}\p{N}\p{M}]+/u)
    .filter((word) => word.length > 0)
    .map(canonicalRtl);
}

const RTL = /[\p{Script=Arabic}\p{Script=Hebrew}]/u;

/**
 * Extractors disagree on right-to-left words: some give the visual order
 * (pdftotext on WeasyPrint's Arabic), some the logical one. Either spelling
 * maps to the same key, so recall measures presence, not the bidi choice.
 */
function canonicalRtl(word: string): string {
  if (!RTL.test(word)) return word;
  const reversed = [...word].reverse().join('');
  return reversed < word ? reversed : word;
}

/**
 * Fraction of the reference's words (as a multiset) that the candidate
 * contains. A word the candidate splits into two or three adjacent tokens
 * ("a1" as "a" "1": a subscript; "시행된3" with its footnote mark apart)
 * still counts: the words are there, only the tokenisation differs.
 */
export function wordRecall(reference: string[], candidate: string[]): number {
  if (reference.length === 0) return 1;
  return (reference.length - unmatched(reference, candidate, Infinity).count) / reference.length;
}

function unmatched(reference: string[], candidate: string[], limit: number): { count: number; words: string[] } {
  const present = presenceMatcher(candidate);
  const words: string[] = [];
  let count = 0;
  for (const word of reference) {
    if (present(word)) continue;
    count++;
    if (words.length < limit) words.push(word);
  }
  return { count, words };
}

function counts(words: string[]): Map<string, number> {
  const map = new Map<string, number>();
  for (const word of words) map.set(word, (map.get(word) ?? 0) + 1);
  return map;
}

function take(map: Map<string, number>, word: string): boolean {
  const left = map.get(word) ?? 0;
  if (left === 0) return false;
  map.set(word, left - 1);
  return true;
}

/** Words the candidate misses (as wordRecall counts them), for failure messages. */
export function missingWords(reference: string[], candidate: string[], limit = 20): string[] {
  return unmatched(reference, candidate, limit).words;
}

/**
 * Reading order: the share of the reference's word trigrams that appear,
 * as consecutive words, in the candidate. A block placed elsewhere costs only
 * its two edge trigrams; columns interleaved line by line break two trigrams
 * per line (measured: 0.71–0.81 on pdftotext -layout's interleaved output
 * against 0.99–1.00 for a right order).
 */
export function trigramRecall(reference: string[], candidate: string[]): number {
  const trigrams = (words: string[]) => words.slice(2).map((word, i) => `${words[i]} ${words[i + 1]} ${word}`);
  const wanted = trigrams(reference);
  if (wanted.length === 0) return 1;
  const available = counts(trigrams(candidate));
  return wanted.filter((trigram) => take(available, trigram)).length / wanted.length;
}

/**
 * The reference's words (in order) that a second, independent extractor also
 * finds. Where pdftotext and pdf.js disagree — TeX symbol fonts mapped to
 * letters ("kxk" for ‖x‖, "jfj" for |f|) — neither is ground truth, so those
 * words are left out of recall and order.
 */
export function agreedWords(reference: string[], other: string[]): string[] {
  const present = presenceMatcher(other);
  return reference.filter((word) => present(word));
}

function presenceMatcher(candidate: string[]): (word: string) => boolean {
  const available = counts(candidate);
  const joined = counts(
    candidate.flatMap((word, i) => {
      const next = candidate[i + 1];
      const third = candidate[i + 2];
      return next === undefined ? [] : third === undefined ? [word + next] : [word + next, word + next + third];
    }),
  );
  return (word) => take(available, word) || take(joined, word);
}

/** pdftotext's pages: it ends each page with a form feed. */
export function pdftotextPages(file: string): string[] {
  const pages = pdftotext(file).split('\f');
  if (pages.at(-1)?.trim() === '') pages.pop();
  return pages;
}

/**
 * Drops what PDF/UA calls artifacts from pdftotext's pages, because our engine
 * keeps them out of the text flow: page numbers, and first/last lines that
 * recur (digits aside) on at least three pages or on every page of a short
 * document — running heads and feet. Pages of under five lines lose only their page number.
 */
/** arabic or roman (up to 399) page numbers; the roman pattern is strict so that words such as "civil" stay */
const PAGE_NUMBER = /^\s*(\d+|(?=[ivxlc])c{0,3}(xc|xl|l?x{0,3})(ix|iv|v?i{0,3}))\s*$/i;

export function withoutRunningArtifacts(pages: string[]): string[] {
  const key = (line: string) => line.trim().replace(/\d+/g, '#').toLowerCase();
  const edgeLines = pages.map((page) => {
    const lines = page.split('\n').filter((line) => line.trim() !== '');
    return [...lines.slice(0, 2), ...lines.slice(-2)].map(key);
  });
  const seen = new Map<string, number>();
  for (const lines of edgeLines) for (const line of new Set(lines)) seen.set(line, (seen.get(line) ?? 0) + 1);
  const recurring = new Set([...seen].filter(([, count]) => pages.length > 1 && count >= Math.min(3, pages.length)).map(([line]) => line));
  return pages.map((page) => {
    const lines = page.split('\n');
    const nonEmpty = lines.map((line, index) => ({ line, index })).filter(({ line }) => line.trim() !== '');
    const edges = new Set([...nonEmpty.slice(0, 2), ...nonEmpty.slice(-2)].map(({ index }) => index));
    // on a page of a few lines every line is content, even when every page repeats it; a page number still is not
    const short = nonEmpty.length < 5;
    return lines
      .filter((line, index) => !(edges.has(index) && nonEmpty.length > 1 && (PAGE_NUMBER.test(line) || (!short && recurring.has(key(line))))))
      .join('\n');
  });
}
