import type { Block, PageResult } from './model.ts';
import { joinInlines } from './paragraphs.ts';

type Footnote = Extract<Block, { kind: 'footnote' }>;

/**
 * Pages are converted one by one, so a footnote that runs over the foot of a
 * page arrives as two pieces: the note, and on the next page a `continued`
 * footnote without a marker. Here the second piece is appended to the note
 * the previous page ends with (across any number of pages); without such a
 * note (the page before came from another backend, or was not converted) it
 * is read as the paragraph it looks like. Takes the pages in order; returns
 * new pages, the given ones are left as they are.
 */
export function joinContinuedFootnotes(input: PageResult[]): PageResult[] {
  if (!input.some((page) => page.blocks.some(isContinued))) return input;
  const pages = [...input];
  // the note the last page so far ends with: where it sits, and the page number it reached
  let open: { pageIndex: number; blockIndex: number; reached: number } | undefined;
  for (const [pageIndex, page] of pages.entries()) {
    const last = lastText(page.blocks);
    const continued = page.blocks.find(isContinued);
    const joined = continued !== undefined && open !== undefined && open.reached === page.page - 1;
    if (continued && joined) {
      const host = pages[open!.pageIndex]!;
      const note = host.blocks[open!.blockIndex] as Footnote;
      const blocks = [...host.blocks];
      blocks[open!.blockIndex] = { ...note, content: joinInlines(note.content, continued.content) };
      pages[open!.pageIndex] = { ...host, blocks };
      pages[pageIndex] = { ...page, blocks: page.blocks.filter((block) => block !== continued) };
    } else if (continued) {
      pages[pageIndex] = {
        ...page,
        blocks: page.blocks.map((block) => (block === continued ? { kind: 'paragraph', page: block.page, content: block.content } : block)),
      };
    }
    if (joined && last === continued) open = { ...open!, reached: page.page };
    else {
      const index = last ? pages[pageIndex]!.blocks.indexOf(last) : -1;
      open = last?.kind === 'footnote' && !isContinued(last) && index >= 0 ? { pageIndex, blockIndex: index, reached: page.page } : undefined;
    }
  }
  return pages;
}

/**
 * The same over pages streaming in order, holding back only what a join can
 * still change: a page that ends with a note waits for the next page, and a
 * run of pages the note goes on over waits for its end. A page with no
 * continued note closes every earlier join, so the pages before it go out.
 */
export async function* joinContinuedFootnotesInOrder(pages: AsyncIterable<PageResult>): AsyncGenerator<PageResult> {
  let held: PageResult[] = [];
  for await (const page of pages) {
    if (held.length > 0 && !page.blocks.some(isContinued)) {
      yield* joinContinuedFootnotes(held);
      held = [];
    }
    held.push(page);
    if (lastText(page.blocks)?.kind !== 'footnote') {
      yield* joinContinuedFootnotes(held);
      held = [];
    }
  }
  yield* joinContinuedFootnotes(held);
}

function isContinued(block: Block): block is Footnote {
  return block.kind === 'footnote' && block.continued === true;
}

/** The page's last block a reader reads as text (figures and page breaks may come after the notes). */
function lastText(blocks: Block[]): Block | undefined {
  return blocks.findLast((block) => block.kind !== 'figure' && block.kind !== 'pageBreak');
}
