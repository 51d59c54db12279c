import { joinLines } from './backends/local/inline.ts';
import type { Block, Inline, PageResult } from './model.ts';
import { inlineText } from './render/text.ts';

type Paragraph = Extract<Block, { kind: 'paragraph' }>;

/**
 * A paragraph that a page break cut in two arrives as two: the foot of page
 * n and the head of page n+1. Screen-reader users would hear a paragraph end
 * mid-sentence. A paragraph reads on into the next one when it ends without
 * closing punctuation, the next starts mid-sentence (a lower-case letter, a
 * comma) and both are set at one size; a heading, list, table or formula in
 * between means the flow went elsewhere. The local engine joins the same way
 * across a column break within a page (page-blocks.ts).
 */

/** What closes a paragraph: a sentence's end, a colon or semicolon before something set apart, a closing quote or bracket. */
const CLOSED = /[.!?:;…。！？"”’»)\]]$/u;
/** What only goes on a sentence: a lower-case letter, or punctuation no sentence starts with. */
const CONTINUES = /^[\p{Ll},;)\]]/u;
/** Lines of one paragraph may differ a little in size (a line of italics, a rounding); body text and a caption or a note do not. */
const SAME_SIZE = 0.6;

/** Whether a paragraph ending with `tail` reads on into one starting with `head`; sizes are asked only when both are known. */
export function readsOn(tail: { text: string; size?: number }, head: { text: string; size?: number }): boolean {
  if (tail.size !== undefined && head.size !== undefined && Math.abs(tail.size - head.size) > SAME_SIZE) return false;
  const end = tail.text.trimEnd();
  const start = head.text.trimStart();
  return end !== '' && (!CLOSED.test(end) || ABBREVIATED.test(end)) && CONTINUES.test(start);
}

/** A full stop that closes an abbreviation, not a sentence ("Aspergillus niger var." / "awamori, …", "Smith et al."). */
const ABBREVIATED = /(?:^|[\s(])(?:et al|var|subsp|spp?|e\.g|i\.e|cf|vs|viz|ca|approx|resp|incl|Figs?|Eqs?|Refs?|Sect|Vol|No|pp|eds?)\.$/u;

/**
 * `first` read on into `rest`: lines join as lines do (joinLines: a word
 * hyphenated over the break made whole, else one space). A `marker` (the
 * page that starts there) goes exactly where the break was, even inside the
 * mended word, so the page's place stays where the printed page put it.
 */
export function joinInlines(first: Inline[], rest: Inline[], marker?: Inline): Inline[] {
  const tail = first.at(-1);
  const head = rest[0];
  const between = marker ? [marker] : [];
  if (tail?.kind !== 'text' || head?.kind !== 'text') return [...first, { kind: 'text', text: ' ' }, ...between, ...rest];
  const after = head.text.trimStart();
  const joined = joinLines(tail.text.trimEnd(), after);
  const pieces: Inline[] = marker
    ? [{ kind: 'text', text: joined.slice(0, joined.length - after.length) }, marker, { kind: 'text', text: after }]
    : [{ kind: 'text', text: joined }];
  return [...first.slice(0, -1), ...pieces.filter((piece) => piece.kind !== 'text' || piece.text !== ''), ...rest.slice(1)];
}

/**
 * Blocks set beside the running text: a paragraph reads on past them, and
 * they stay where they are. Floats (a figure, a table, a note, a page
 * marker) and, where sizes are known, a paragraph at another size than the
 * text's (a caption, a table's note: journals set them between the two
 * halves of a sentence).
 */
export function besideFlow(block: Block, textSize: number | undefined): boolean {
  if (block.kind === 'footnote' || block.kind === 'figure' || block.kind === 'pageBreak' || block.kind === 'table') return true;
  return block.kind === 'paragraph' && textSize !== undefined && block.size !== undefined && Math.abs(block.size - textSize) > SAME_SIZE;
}

/** The size most of a page's paragraph text is set at; undefined where the backend gives no sizes. */
function textSizeOf(blocks: Block[]): number | undefined {
  const characters = new Map<number, number>();
  for (const block of blocks) {
    if (block.kind === 'paragraph' && block.size !== undefined)
      characters.set(block.size, (characters.get(block.size) ?? 0) + inlineText(block.content).length);
  }
  return [...characters].sort((a, b) => b[1] - a[1])[0]?.[0];
}

/** The paragraph already holds the page's marker: it was joined over that break before (the benchmark's pass, then the render's). */
function runsOnto(paragraph: Paragraph, page: PageResult): boolean {
  return paragraph.content.some((inline) => inline.kind === 'pageBreak' && inline.label === page.label);
}

function isOpen(block: Block | undefined): block is Paragraph {
  return block?.kind === 'paragraph' && readsOn({ text: inlineText(block.content) }, { text: 'a' });
}

/**
 * Pages go in, in order; pages come out once no later page can change them.
 * Only the pages from the one holding an open paragraph (its last flow block
 * ends mid-sentence) to the newest are held: a page the paragraph reads on
 * over, wholly, keeps it open; any other page closes it.
 */
function createParagraphJoiner() {
  let held: PageResult[] = [];
  // where the open paragraph sits in `held`; `small` when it is small print (a reference list) ending its page
  let open: { pageIndex: number; blockIndex: number; small?: true } | undefined;
  const release = () => {
    const out = held;
    held = [];
    open = undefined;
    return out;
  };
  const openAt = (pageIndex: number, textSize = textSizeOf(held[pageIndex]!.blocks)): typeof open => {
    const blocks = held[pageIndex]!.blocks;
    const blockIndex = blocks.findLastIndex((block) => !besideFlow(block, textSize));
    if (isOpen(blocks[blockIndex])) return { pageIndex, blockIndex };
    // small print that ends the page mid-sentence reads on at its own size where it is a run of paragraphs (a
    // reference list set smaller than the text), not a caption alone at the foot
    const last = blocks.findLastIndex((block) => !besideFlow(block, undefined));
    const [before, tail] = [blocks[last - 1], blocks[last]];
    const run =
      before?.kind === 'paragraph' &&
      tail?.kind === 'paragraph' &&
      before.size !== undefined &&
      tail.size !== undefined &&
      Math.abs(before.size - tail.size) <= SAME_SIZE;
    return last > blockIndex && run && isOpen(tail) ? { pageIndex, blockIndex: last, small: true } : undefined;
  };
  return {
    add(given: PageResult): PageResult[] {
      let page = given;
      let out: PageResult[] = [];
      const host = open ? held[open.pageIndex]! : undefined;
      const tail = open && host ? (host.blocks[open.blockIndex] as Paragraph) : undefined;
      // small print reads on only into the next page's first text (its running text may come later, at its own size)
      const headIndex = page.blocks.findIndex((block) => !besideFlow(block, open?.small ? undefined : tail?.size));
      const head = page.blocks[headIndex];
      if (
        open &&
        host &&
        tail &&
        head?.kind === 'paragraph' &&
        // a page left out (converted pages 1 and 3) is text left out: nothing reads on over it
        held.at(-1)!.page === page.page - 1 &&
        !runsOnto(tail, page) &&
        readsOn({ text: inlineText(tail.content), size: tail.size }, { text: inlineText(head.content), size: head.size })
      ) {
        // a page marker set before the head moves into the paragraph; without one the page's own marker goes there
        const markerIndex = page.blocks.findIndex((block, index) => index < headIndex && block.kind === 'pageBreak');
        const label = markerIndex >= 0 ? (page.blocks[markerIndex] as Extract<Block, { kind: 'pageBreak' }>).label : page.label;
        const blocks = [...host.blocks];
        blocks[open.blockIndex] = { ...tail, content: joinInlines(tail.content, head.content, { kind: 'pageBreak', label }) };
        held[open.pageIndex] = { ...host, blocks };
        page = { ...page, blocks: page.blocks.filter((_, index) => index !== headIndex && index !== markerIndex) };
        held.push(page);
        const hostOpen = open;
        // the page's running text is the paragraph's: its captions and notes are not where the text ends
        open = page.blocks.some((block) => !besideFlow(block, tail.size))
          ? openAt(held.length - 1, tail.size)
          : isOpen(blocks[hostOpen.blockIndex])
            ? hostOpen
            : undefined;
        // pages before the one the paragraph now ends in can no longer change
        if (open && open.pageIndex > 0) {
          out = held.slice(0, open.pageIndex);
          held = held.slice(open.pageIndex);
          open = { ...open, pageIndex: 0 };
        }
      } else {
        out = release();
        held = [page];
        open = openAt(0);
      }
      if (!open) out.push(...release());
      return out;
    },
    finish(): PageResult[] {
      return release();
    },
  };
}

/** Every paragraph a page break cut in two read as one, kept on the page it starts on. Returns new pages; the given ones are left as they are. */
export function joinBrokenParagraphs(pages: PageResult[]): PageResult[] {
  const joiner = createParagraphJoiner();
  return [...pages.flatMap((page) => joiner.add(page)), ...joiner.finish()];
}

/** The same over pages streaming in order, holding back only a page whose last flow block is an open paragraph (and the pages it reads on over). */
export async function* joinBrokenParagraphsInOrder(pages: AsyncIterable<PageResult>): AsyncGenerator<PageResult> {
  const joiner = createParagraphJoiner();
  for await (const page of pages) yield* joiner.add(page);
  yield* joiner.finish();
}
