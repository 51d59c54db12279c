/** Escapes text for an HTML body. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);
}

/**
 * Headers for converted HTML served from our origin: a sandboxed document of
 * its own (no scripts, no outside requests), so a document's content can
 * never act on the API or the session of whoever opens it.
 */
export const SANDBOXED_DOCUMENT_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'",
  'referrer-policy': 'no-referrer',
  'x-robots-tag': 'noindex',
  'cache-control': 'private, no-store',
} as const;
