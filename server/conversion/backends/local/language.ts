/**
 * Document language from its text when the catalog has no /Lang: the
 * dominant script first (Hangul, kana, Han, Arabic, Hebrew, Cyrillic, Greek,
 * Thai, Devanagari), then, for Latin text, the language whose commonest
 * words occur most. Good enough to set `lang` right for a screen reader's
 * voice; not a general identifier.
 */

export const STOP_WORDS: Record<string, string[]> = {
  en: ['the', 'and', 'of', 'to', 'in', 'is', 'that', 'for', 'it', 'with', 'as', 'was', 'on', 'are', 'this', 'be', 'by', 'not', 'or', 'from'],
  de: ['der', 'die', 'und', 'in', 'den', 'von', 'zu', 'das', 'mit', 'sich', 'des', 'auf', 'für', 'ist', 'im', 'dem', 'nicht', 'ein', 'eine', 'wir'],
  fr: ['le', 'la', 'les', 'de', 'des', 'et', 'un', 'une', 'du', 'est', 'que', 'pour', 'dans', 'qui', 'par', 'sur', 'pas', 'au', 'avec', 'ce'],
  es: ['el', 'la', 'de', 'que', 'y', 'en', 'los', 'las', 'del', 'se', 'por', 'un', 'una', 'para', 'con', 'no', 'es', 'al', 'lo', 'como'],
  it: ['il', 'di', 'che', 'e', 'la', 'per', 'un', 'una', 'non', 'sono', 'della', 'del', 'con', 'le', 'gli', 'da', 'si', 'nel', 'alla', 'questo'],
  pt: ['de', 'que', 'e', 'o', 'a', 'do', 'da', 'em', 'um', 'para', 'com', 'não', 'uma', 'os', 'no', 'se', 'na', 'por', 'mais', 'as'],
  nl: ['de', 'het', 'een', 'van', 'en', 'in', 'is', 'dat', 'op', 'te', 'zijn', 'met', 'voor', 'niet', 'aan', 'er', 'om', 'ook', 'als', 'bij'],
  la: ['et', 'in', 'est', 'non', 'ut', 'cum', 'ad', 'sed', 'quod', 'qui', 'quae', 'nec', 'sit', 'vel', 'eget', 'sed', 'nunc', 'ac', 'id', 'amet'],
};

const SCRIPTS: [RegExp, string][] = [
  [/\p{Script=Hangul}/gu, 'ko'],
  [/[\p{Script=Hiragana}\p{Script=Katakana}]/gu, 'ja'],
  [/\p{Script=Han}/gu, 'zh'],
  [/\p{Script=Arabic}/gu, 'ar'],
  [/\p{Script=Hebrew}/gu, 'he'],
  [/\p{Script=Cyrillic}/gu, 'ru'],
  [/\p{Script=Greek}/gu, 'el'],
  [/\p{Script=Thai}/gu, 'th'],
  [/\p{Script=Devanagari}/gu, 'hi'],
];

export function detectLanguage(text: string, fallback = 'en'): string {
  const letters = (text.match(/\p{L}/gu) ?? []).length;
  if (letters < 20) return fallback;
  let bestScript: string | undefined;
  let bestCount = 0;
  for (const [pattern, lang] of SCRIPTS) {
    const count = (text.match(pattern) ?? []).length;
    if (count > bestCount) [bestScript, bestCount] = [lang, count];
  }
  // Japanese mixes kana with Han: any real amount of kana means Japanese
  const kana = (text.match(/[\p{Script=Hiragana}\p{Script=Katakana}]/gu) ?? []).length;
  if (kana > letters * 0.05) return 'ja';
  // Persian writes Arabic script with letters Arabic lacks (پ چ ژ گ)
  if (bestScript === 'ar' && bestCount > letters * 0.3) return (text.match(/[\u067e\u0686\u0698\u06af]/gu) ?? []).length > bestCount * 0.01 ? 'fa' : 'ar';
  if (bestScript && bestCount > letters * 0.3) return bestScript;
  const words = text.toLowerCase().match(/\p{L}+/gu) ?? [];
  const counts = new Map<string, number>();
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1);
  let best = fallback;
  let bestScore = 0;
  for (const [lang, list] of Object.entries(STOP_WORDS)) {
    const score = [...new Set(list)].reduce((sum, word) => sum + (counts.get(word) ?? 0), 0);
    if (score > bestScore) [best, bestScore] = [lang, score];
  }
  return bestScore >= 3 ? best : fallback;
}
