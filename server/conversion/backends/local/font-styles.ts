import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';

/** Which of the page's fonts are monospaced (Courier, a "Mono" face, TeX's CMTT), from the names pdf.js loaded. */
export function monoFontIds(page: PDFPageProxy, items: { font: string }[]): Set<string> {
  const mono = new Set<string>();
  for (const id of new Set(items.map((item) => item.font))) {
    if (!page.commonObjs.has(id)) continue;
    const font = page.commonObjs.get(id) as { name?: string; isMonospace?: boolean } | null;
    if (font?.isMonospace || /mono|courier|consol|menlo|inconsolata|CMTT|typewriter|lucidaconsole|sourcecodepro|firacode/i.test(font?.name ?? '')) mono.add(id);
  }
  return mono;
}

/**
 * Which of the page's fonts are bold, from the names pdf.js loaded with the
 * operator list ("ABCDEF+Helvetica-Bold"); fonts not loaded count as regular.
 */
export function boldFontIds(page: PDFPageProxy, items: { font: string }[]): Set<string> {
  const bold = new Set<string>();
  for (const id of new Set(items.map((item) => item.font))) {
    if (!page.commonObjs.has(id)) continue;
    const font = page.commonObjs.get(id) as { name?: string; bold?: boolean } | null;
    // TeX's bold faces are CMBX/CMB (and their Latin Modern twins); many foundries abbreviate Bold as Bd
    if (font?.bold || /bold|black|heavy|semibold|demi|BX\d{2,4}|CMB\d|LMRomanDemi|[-,+]Bd|Bd$/i.test(font?.name ?? '')) bold.add(id);
  }
  return bold;
}

/**
 * Which of the page's fonts set mathematics' letters: TeX's math italic and symbol fonts (and Latin Modern's), and
 * any italic face. A line whose every letter is in one is variables ("mc" of E = mc²), not words.
 */
export function mathFontIds(page: PDFPageProxy, items: { font: string }[]): Set<string> {
  const math = new Set<string>();
  for (const id of new Set(items.map((item) => item.font))) {
    if (!page.commonObjs.has(id)) continue;
    const font = page.commonObjs.get(id) as { name?: string; italic?: boolean } | null;
    if (font?.italic || /CMMI|CMSY|CMEX|MSBM|MSAM|EUFM|EURM|LMMath|Math-?Italic|STIXMath|CambriaMath|Italic|Oblique|CMTI/i.test(font?.name ?? '')) math.add(id);
  }
  return math;
}
