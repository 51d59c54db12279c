/**
 * Word coverage of a converted page against the page's own text layer: the
 * share of the text layer's words (counted with multiplicity) that the
 * conversion kept. It catches a model that summarised, skipped a column or
 * stopped early while still claiming `end_turn`.
 */

/**
 * Below this share the vision backend re-asks once with the coverage prompt.
 * Not 1.0: the text layer legitimately carries words a faithful conversion
 * drops (running headers, footers, page numbers) and splits words that the
 * model rightly joins; on born-digital pages those losses stay within a few
 * per cent, while a skipped column or paragraph costs far more than 10 %.
 */
export const COVERAGE_THRESHOLD = 0.9;

const CJK = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}`;
/** Han and kana are written without spaces, so each character counts as a word; other scripts split on non-letters. */
const WORD = new RegExp(String.raw`[${CJK}]|[[\p{L}\p{N}\p{M}]--[${CJK}]]+`, 'gv');

/** Normalised words of a text: NFKC (ligatures), lower case, words hyphenated across a line break joined again. */
export function wordsOf(text: string): string[] {
  const joined = text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/(\p{L})[-\u00ad\u2010]\s*\n\s*(\p{Ll})/gu, '$1$2');
  return joined.match(WORD) ?? [];
}

/** Share of `reference` words found in `candidate` (1 when the reference has none). */
export function textCoverage(reference: string, candidate: string): number {
  const wanted = wordsOf(reference);
  if (wanted.length === 0) return 1;
  const available = new Map<string, number>();
  for (const word of wordsOf(candidate)) available.set(word, (available.get(word) ?? 0) + 1);
  let found = 0;
  for (const word of wanted) {
    const left = available.get(word) ?? 0;
    if (left > 0) {
      found++;
      available.set(word, left - 1);
    }
  }
  return found / wanted.length;
}
