import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';

/** The math alphabets whose fonts draw letters that extract as plain ones. */
export type MathAlphabet = 'mathbb' | 'mathfrak' | 'mathcal' | 'mathscr';

/** TeX's fonts of math alphabets, whose letters extract as plain ones: AMS blackboard and Fraktur, cmsy's calligraphic capitals, RSFS script. */
const ALPHABETS: [RegExp, MathAlphabet][] = [
  [/^(?:MSBM|BBOLD|DSROM|KaTeX_AMS|PazoMathBlackboard)/i, 'mathbb'],
  [/^(?:EUF[MB]|KaTeX_Fraktur)/i, 'mathfrak'],
  [/^(?:CMB?SY|KaTeX_Caligraphic)/i, 'mathcal'],
  [/^(?:RSFS|KaTeX_Script)/i, 'mathscr'],
];

/** Advent's faces (Elsevier's typesetting) name their style by a suffix after a hashed name: "AdvOTb83ee1dd.B", ".I", ".BI", "+20". */
const ADVENT_BOLD = /(^|\+)Adv\w*\.BI?(\+\w+)?$/;
const ADVENT_ITALIC = /(^|\+)Adv\w*\.B?I(\+\w+)?$/;

/** Glyph names by font: bold and italic from the font's name ("ABCDEF+Times-BoldItalic", "CMMI10", "KaTeX_Math-Italic"), and a math alphabet's font. */
export function fontStyle(name: string | undefined): { bold: boolean; italic: boolean; alphabet?: MathAlphabet } {
  const bare = (name ?? '').replace(/^[A-Z]{6}\+/, '');
  const alphabet = ALPHABETS.find(([pattern]) => pattern.test(bare))?.[1];
  return {
    // URW's fonts call their bold "Medi" (NimbusRomNo9L-Medi, TeX's Times bold)
    bold: /bold|black|heavy|semibold|demi|CMBX|CMMIB|BX\d|Medi(?![a-z])/i.test(bare) || ADVENT_BOLD.test(bare),
    // URW's Times calls its italic "ReguItal", a slanted Symbol "Slant" (mathptmx's Greek)
    italic: /italic|oblique|CMMI|CMTI|[-_]It\b|Math-Italic|Ital(?![a-z])|Slant/i.test(bare) || ADVENT_ITALIC.test(bare),
    ...(alphabet ? { alphabet } : {}),
  };
}

/** What pdf.js tells of a loaded font, as far as these choices go. */
type LoadedFont = { name?: string; bold?: boolean; italic?: boolean; isMonospace?: boolean };

/** The ids of the page's fonts (those its items use) that pdf.js loaded with the operator list and that pass the test; fonts not loaded pass none. */
export function fontIdsWhere(page: PDFPageProxy, items: { font: string }[], test: (font: LoadedFont) => boolean): Set<string> {
  const ids = new Set<string>();
  for (const id of new Set(items.map((item) => item.font))) {
    if (!page.commonObjs.has(id)) continue;
    const font = page.commonObjs.get(id) as LoadedFont | null;
    if (font && test(font)) ids.add(id);
  }
  return ids;
}

/** Which of the page's fonts are monospaced (Courier, a "Mono" face, TeX's CMTT), from the names pdf.js loaded. */
export function monoFontIds(page: PDFPageProxy, items: { font: string }[]): Set<string> {
  return fontIdsWhere(
    page,
    items,
    (font) => font.isMonospace === true || /mono|courier|consol|menlo|inconsolata|CMTT|typewriter|lucidaconsole|sourcecodepro|firacode/i.test(font.name ?? ''),
  );
}

/**
 * Which of the page's fonts are bold, from the names pdf.js loaded with the
 * operator list ("ABCDEF+Helvetica-Bold"); fonts not loaded count as regular.
 */
export function boldFontIds(page: PDFPageProxy, items: { font: string; text: string }[]): Set<string> {
  // TeX's bold faces are CMBX/CMB (and their Latin Modern twins); many foundries abbreviate Bold as Bd
  const named = fontIdsWhere(
    page,
    items,
    (font) =>
      font.bold === true ||
      /bold|black|heavy|semibold|demi|BX\d{2,4}|CMB\d|LMRomanDemi|[-,+]Bd|Bd$|Medi(?![a-z])/i.test(font.name ?? '') ||
      ADVENT_BOLD.test(font.name ?? ''),
  );
  // over a light body, a face two steps heavier is the page's bold: Korean reports set their subheadings in
  // KoPubDotumMedium over a KoPubBatangLight body
  const characters = new Map<string, number>();
  for (const item of items) characters.set(item.font, (characters.get(item.font) ?? 0) + item.text.length);
  const body = [...characters.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  const bodyFont = body !== undefined && page.commonObjs.has(body) ? (page.commonObjs.get(body) as LoadedFont | null) : null;
  const bodyWeight = weightOf(bodyFont?.name);
  if (bodyWeight >= 400) return named;
  return new Set([...named, ...fontIdsWhere(page, items, (font) => weightOf(font.name) >= bodyWeight + 200)]);
}

/** Weights a face's name gives, on CSS's scale; the more specific names first (ExtraLight before Light). */
const WEIGHTS: [RegExp, number][] = [
  [/hairline|thin/i, 100],
  [/(extra|ultra)-?light/i, 200],
  [/light/i, 300],
  [/semi-?bold|demi/i, 600],
  [/(extra|ultra)-?bold/i, 800],
  [/black|heavy/i, 900],
  [/bold/i, 700],
  [/medium/i, 500],
];

/** A face's weight from its name ("ABCDEF+KoPubBatangLight" 300); 400 when the name says none. */
function weightOf(name: string | undefined): number {
  const bare = (name ?? '').replace(/^[A-Z]{6}\+/, '');
  return WEIGHTS.find(([pattern]) => pattern.test(bare))?.[1] ?? 400;
}

/**
 * Which of the page's fonts set mathematics' letters: TeX's math italic and symbol fonts (and Latin Modern's), and
 * any italic face. A line whose every letter is in one is variables ("mc" of E = mc²), not words.
 */
export function mathFontIds(page: PDFPageProxy, items: { font: string }[]): Set<string> {
  return fontIdsWhere(page, items, (font) => {
    const style = fontStyle(font.name);
    return font.italic === true || style.italic || style.alphabet !== undefined || MATH_FONT.test(font.name ?? '');
  });
}

/**
 * Which of the page's fonts are faces only mathematics is set in: TeX's math italic, symbol, extension and AMS fonts,
 * the math alphabets and the OpenType math faces; not a text italic, which sets emphasis as often as variables.
 */
export function texMathFontIds(page: PDFPageProxy, items: { font: string }[]): Set<string> {
  return fontIdsWhere(page, items, (font) => MATH_FONT.test(font.name ?? '') || fontStyle(font.name).alphabet !== undefined);
}

/**
 * TeX's math fonts beyond the italic and alphabet faces fontStyle knows: symbols, extension, AMS symbols, Euler, the
 * OpenType math faces, URW's Symbol as TeX's Times (mathptmx) sets its Greek in it, and Palatino's (mathpazo).
 */
const MATH_FONT = /CMMI|CMSY|CMEX|MSAM|EURM|LMMath|Math-?Italic|STIXMath|CambriaMath|StandardSym|PazoMath/i;
