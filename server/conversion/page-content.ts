import type { Block, FormField, Inline, PageClass } from './model.ts';

/**
 * Words of a text, for coverage and classification. Here, apart from the text layer's reader (which loads
 * pdf.js), as the renderer counts them too and the engine's thread never needs pdf.js for that.
 */
export function countWords(text: string): number {
  const matches = text.match(/[\p{L}\p{N}]+/gu);
  if (!matches) return 0;
  // Han and kana are written without spaces: count each character as a word.
  let count = 0;
  for (const word of matches) count += /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(word) ? word.length : 1;
  return count;
}

/** The readable text of blocks (what a screen reader would read), for coverage checks. */
export function blocksText(blocks: Block[]): string {
  const inline = (list: Inline[] | undefined): string =>
    (list ?? [])
      .map((item) => {
        if (item.kind === 'text' || item.kind === 'code' || item.kind === 'math') return item.text;
        if (item.kind === 'lineBreak') return '\n';
        if (item.kind === 'footnoteRef') return item.label;
        if (item.kind === 'pageBreak') return '';
        return inline(item.children);
      })
      .join('');
  const block = (item: Block): string => {
    switch (item.kind) {
      case 'heading':
      case 'paragraph':
      case 'footnote':
        return inline(item.content);
      case 'list':
        return item.items.map((entry) => `${inline(entry.content)}\n${entry.children ? block(entry.children) : ''}`).join('\n');
      case 'table':
        return [inline(item.caption), ...item.rows.map((row) => row.map((cell) => inline(cell.content)).join(' '))].join('\n');
      case 'figure':
        return [item.alt ?? '', inline(item.caption), item.text ?? ''].join('\n');
      case 'formula':
        return item.text;
      case 'blockquote':
        return blocksText(item.children);
      case 'code':
        return item.text;
      case 'form':
        return item.fields.map(formFieldText).join('\n');
      case 'pageBreak':
        return '';
    }
  };
  return blocks.map(block).join('\n');
}

/** What a field says when read out: its label and its value ("Subscribe: checked"). */
function formFieldText(field: FormField): string {
  if (field.kind === 'checkbox') return `${field.label}: ${field.checked ? 'checked' : 'not checked'}`;
  return `${field.label}: ${field.value || 'empty'}`;
}

/** Why a page is complex, from what its blocks hold ('table', 'figure', 'formula'), in that order. */
export function structuralReasons(blocks: Block[]): string[] {
  const found = new Set<string>();
  const visit = (list: Block[]) => {
    for (const item of list) {
      if (item.kind === 'table' || item.kind === 'figure' || item.kind === 'formula') found.add(item.kind);
      if (item.kind === 'blockquote') visit(item.children);
    }
  };
  visit(blocks);
  return ['table', 'figure', 'formula'].filter((reason) => found.has(reason));
}

export function classify(reasons: string[]): PageClass {
  return reasons.length > 0 ? 'complex' : 'standard';
}
