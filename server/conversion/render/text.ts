import type { Inline } from '../model.ts';

/** C0/C1 controls (except tab/newline), lone surrogates and non-characters break HTML and PDF text alike. */
const INVALID_CHARS =
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

export function cleanText(text: string): string {
  return text.replace(INVALID_CHARS, '');
}

export function escapeHtml(text: string): string {
  return cleanText(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** The plain text of inline content, as a screen reader would read it. */
export function inlineText(content: Inline[] | undefined): string {
  if (!content) return '';
  let out = '';
  for (const node of content) {
    switch (node.kind) {
      case 'text':
      case 'code':
      case 'math':
        out += node.text;
        break;
      case 'emphasis':
      case 'link':
      case 'lang':
        out += inlineText(node.children);
        break;
      case 'footnoteRef':
        out += node.label;
        break;
      case 'lineBreak':
        out += ' ';
        break;
      // a page ends here, inside a word as often as between two: it adds no text
      case 'pageBreak':
        break;
    }
  }
  return cleanText(out).replace(/\s+/g, ' ').trim();
}

/** A well-formed BCP 47 tag (shape only), so `lang` never carries garbage axe would flag. */
export function validLang(lang: string | undefined): string | undefined {
  if (!lang) return undefined;
  const trimmed = lang.trim().replace(/_/g, '-');
  return /^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/.test(trimmed) ? trimmed : undefined;
}

const RTL = new Set(['ar', 'he', 'fa', 'ur', 'yi', 'ps', 'sd', 'ug', 'dv', 'ku']);

export function isRtl(lang: string | undefined): boolean {
  const primary = lang?.split('-')[0]?.toLowerCase();
  return primary !== undefined && RTL.has(primary);
}

/** Only schemes that are safe to follow; anything else (javascript:, data:) is dropped. */
export function safeHref(href: string): string | undefined {
  const trimmed = cleanText(href).trim();
  if (trimmed === '') return undefined;
  if (trimmed.startsWith('#')) return trimmed;
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme === undefined) return trimmed;
  return ['http', 'https', 'mailto', 'tel', 'ftp'].includes(scheme) ? trimmed : undefined;
}

/** A token usable inside an id attribute and a fragment. */
export function idToken(value: string): string {
  const token = cleanText(value)
    .replace(/[^a-zA-Z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return token === '' ? 'x' : token;
}
