/**
 * Slices above this many characters of HTML (image bytes not counted) are audited in pieces, so a
 * 1,000-page document never sits in one jsdom. Apart from the audit so the renderer can cut slices
 * without loading jsdom.
 */
export const AUDIT_SLICE_CHARS = 400_000;
