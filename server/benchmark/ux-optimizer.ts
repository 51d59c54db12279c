import type { Block, Inline, PageResult } from '../conversion/model.ts';
import { inlineText } from '../conversion/render/text.ts';

type Paragraph = Extract<Block, { kind: 'paragraph' }>;

/** The page's last block that runs in the text flow (footnotes and page-break markers sit outside it). */
function lastFlowIndex(blocks: Block[]): number {
  for (let index = blocks.length - 1; index >= 0; index--) {
    const kind = blocks[index]!.kind;
    if (kind !== 'footnote' && kind !== 'pageBreak') return index;
  }
  return -1;
}

function firstFlowIndex(blocks: Block[]): number {
  return blocks.findIndex((block) => block.kind !== 'pageBreak');
}

/**
 * The `uxOptimizer` pass of a benchmark pipeline: a paragraph that a page
 * break cut in two (no closing punctuation at the foot of one page, a
 * lower-case start at the head of the next) is read as one paragraph, a word
 * hyphenated across the break made whole. Screen-reader users otherwise hear
 * two paragraphs in mid-sentence. Pure: returns new pages, the input is kept.
 */
export function optimizeReadingFlow(input: PageResult[]): PageResult[] {
  const pages = input.map((page) => ({ ...page, blocks: [...page.blocks] }));
  for (let index = 0; index + 1 < pages.length; index++) {
    const here = pages[index]!;
    const next = pages[index + 1]!;
    const tailAt = lastFlowIndex(here.blocks);
    const headAt = firstFlowIndex(next.blocks);
    if (tailAt < 0 || headAt < 0) continue;
    const tail = here.blocks[tailAt]!;
    const head = next.blocks[headAt]!;
    if (tail.kind !== 'paragraph' || head.kind !== 'paragraph') continue;
    const tailText = inlineText(tail.content).trimEnd();
    const headText = inlineText(head.content).trimStart();
    if (/[.!?:;"”’)\]]$/.test(tailText) || !/^\p{Ll}/u.test(headText)) continue;
    const hyphenated = /\p{L}-$/u.test(tailText);
    const joined: Inline[] = hyphenated ? withoutTrailingHyphen(tail.content) : [...tail.content, { kind: 'text', text: ' ' }];
    here.blocks[tailAt] = { ...tail, content: [...joined, ...head.content] } satisfies Paragraph;
    next.blocks.splice(headAt, 1);
  }
  return pages;
}

function withoutTrailingHyphen(content: Inline[]): Inline[] {
  const copy = [...content];
  const last = copy.at(-1);
  if (last?.kind === 'text') copy[copy.length - 1] = { kind: 'text', text: last.text.trimEnd().replace(/-$/, '') };
  return copy;
}
