/**
 * Slices above this many characters of HTML (image bytes not counted) are audited in pieces, so a
 * 1,000-page document never sits in one jsdom. Apart from the audit so the renderer can cut slices
 * without loading jsdom.
 */
export const AUDIT_SLICE_CHARS = 400_000;

/**
 * The HTML with the base64 payload of data: images emptied. No rule reads
 * the pixels (jsdom decodes none), but axe builds selectors from attribute
 * values and jsdom holds them: a page of figure pictures made the audit of
 * one 117-page book several times slower and cut it into needless slices.
 */
const DATA_IMAGE = /(src="data:image\/[a-z+.-]+;base64,)[A-Za-z0-9+/=]+"/g;
export function withoutImageBytes(html: string): string {
  return html.replace(DATA_IMAGE, '$1"');
}
