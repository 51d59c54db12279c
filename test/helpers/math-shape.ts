import katex from 'katex';
import type { Inline, PageResult } from '../../server/conversion/model.ts';

/** One spelling per symbol where TeX and the page's text differ only in code point. */
const SAME: Record<string, string> = { '−': '-', '∣': '|', '∶': ':', '′': "'", '″': "''", ϵ: 'ε', '·': '⋅', '〈': '⟨', '〉': '⟩', '∥': '‖' };

/**
 * What KaTeX draws for a TeX: each symbol in order with where it stands (base, superscript, subscript, numerator,
 * denominator, root, under, over), as "x", "2^" for x^2. Spaces and invisible operators are not symbols; an
 * operator name is its letters.
 */
function drawnShape(tex: string): string[] {
  // display mode, as a display's \tag needs
  const mathml = katex.renderToString(tex, { output: 'mathml', throwOnError: false, displayMode: true });
  const body = mathml.replace(/<annotation[\s\S]*?<\/annotation>/g, '');
  const out: string[] = [];
  const stack: { tag: string; child: number }[] = [];
  const role = () =>
    stack
      .map(({ tag, child }) => {
        if (tag === 'msup') return child === 1 ? '^' : '';
        if (tag === 'msub') return child === 1 ? '_' : '';
        if (tag === 'msubsup') return child === 1 ? '_' : child === 2 ? '^' : '';
        if (tag === 'mfrac') return child === 0 ? '/n' : '/d';
        if (tag === 'msqrt' || tag === 'mroot') return '√';
        if (tag === 'munder') return child === 1 ? '_' : '';
        if (tag === 'mover') return child === 1 ? '^' : '';
        if (tag === 'munderover') return child === 1 ? '_' : child === 2 ? '^' : '';
        return '';
      })
      .join('');
  for (const match of body.matchAll(/<(\/?)([a-z]+)\b[^>]*?(\/?)>([^<]*)/g)) {
    const [, closing, tag, selfClosing, text] = match;
    if (closing) {
      stack.pop();
      if (stack.length > 0) stack.at(-1)!.child++;
      continue;
    }
    if (/^(mi|mn|mo|mtext)$/.test(tag!)) {
      for (const char of (text ?? '').replace(/&amp;/g, '&').replace(/&lt;/g, '<').replace(/&gt;/g, '>')) {
        if (/\s|[\u200b\u2061-\u2064]/.test(char)) continue;
        out.push(`${SAME[char] ?? char}${role()}`);
      }
    }
    if (selfClosing) {
      if (stack.length > 0) stack.at(-1)!.child++;
      continue;
    }
    stack.push({ tag: tag!, child: 0 });
  }
  return out;
}

/** Every formula's TeX in converted pages: display blocks' and inline ones'. */
export function formulasOf(pages: PageResult[]): string[] {
  const out: string[] = [];
  const walk = (list: Inline[] | undefined) => {
    for (const node of list ?? []) {
      if (node.kind === 'math') out.push(node.tex);
      if ('children' in node) walk(node.children);
    }
  };
  for (const page of pages)
    for (const block of page.blocks) {
      if (block.kind === 'formula' && block.tex) out.push(block.tex);
      if ('content' in block) walk(block.content);
    }
  return out;
}

/**
 * The first of `ours` that draws the symbols of `source` in its order and places, anywhere within it (a formula read
 * as part of a longer one counts, as a reader finds it there); undefined when none does.
 */
export function drawnWithin(source: string, ours: string[]): string | undefined {
  const shape = ` ${drawnShape(source).join(' ')} `;
  return ours.find((tex) => ` ${drawnShape(tex).join(' ')} `.includes(shape));
}
