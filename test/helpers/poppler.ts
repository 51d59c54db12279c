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
    .filter((word) => word.length > 0);
}

/** Fraction of the reference's words (as a multiset) that the candidate contains. */
export function wordRecall(reference: string[], candidate: string[]): number {
  if (reference.length === 0) return 1;
  const available = new Map<string, number>();
  for (const word of candidate) available.set(word, (available.get(word) ?? 0) + 1);
  let found = 0;
  for (const word of reference) {
    const left = available.get(word) ?? 0;
    if (left > 0) {
      found++;
      available.set(word, left - 1);
    }
  }
  return found / reference.length;
}

/** Words the candidate misses, for failure messages. */
export function missingWords(reference: string[], candidate: string[], limit = 20): string[] {
  const available = new Map<string, number>();
  for (const word of candidate) available.set(word, (available.get(word) ?? 0) + 1);
  const missing: string[] = [];
  for (const word of reference) {
    const left = available.get(word) ?? 0;
    if (left > 0) available.set(word, left - 1);
    else if (missing.length < limit) missing.push(word);
  }
  return missing;
}

/**
 * Reading order: the longest common subsequence of the two word sequences
 * over the reference's length. Interleaved columns drop it to about a half;
 * the right order keeps it near the word recall. Quadratic, so callers
 * compare page by page.
 */
export function orderRatio(reference: string[], candidate: string[]): number {
  if (reference.length === 0) return 1;
  const m = candidate.length;
  let previous = new Uint32Array(m + 1);
  let current = new Uint32Array(m + 1);
  for (const word of reference) {
    for (let j = 1; j <= m; j++) {
      current[j] = word === candidate[j - 1] ? previous[j - 1]! + 1 : Math.max(previous[j]!, current[j - 1]!);
    }
    [previous, current] = [current, previous];
  }
  return previous[m]! / reference.length;
}
