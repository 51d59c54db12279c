import { describe, expect, it } from 'vitest';
import { joinContinuedFootnotes, joinContinuedFootnotesInOrder } from '../../server/conversion/footnotes.ts';
import type { Block, PageResult } from '../../server/conversion/model.ts';
import { page } from './render-fixture.ts';

/** A small deterministic generator, so a failure names a seed that replays it. */
function random(seed: number) {
  let state = seed;
  return () => (state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

function randomPages(seed: number): PageResult[] {
  const next = random(seed);
  return Array.from({ length: 2 + Math.floor(next() * 12) }, (_, index) => {
    const n = index + 1;
    const blocks: Block[] = [];
    if (next() < 0.5) blocks.push({ kind: 'footnote', page: n, id: `c${n}`, label: '', continued: true, content: [{ kind: 'text', text: `rest ${n}` }] });
    if (next() < 0.6) blocks.push({ kind: 'paragraph', page: n, content: [{ kind: 'text', text: `body ${n}` }] });
    if (next() < 0.6) blocks.push({ kind: 'footnote', page: n, id: `n${n}`, label: String(n), content: [{ kind: 'text', text: `note ${n}` }] });
    if (next() < 0.2) blocks.push({ kind: 'figure', page: n, decorative: false, needsAlt: true });
    return page(n, blocks);
  });
}

async function* stream(pages: PageResult[]) {
  for (const item of pages) yield item;
}

describe('continued footnotes over pages streaming in', () => {
  it('joins exactly as over the whole document, whatever the run of notes and continuations', async () => {
    for (let seed = 1; seed <= 300; seed++) {
      const pages = randomPages(seed);
      const streamed: PageResult[] = [];
      for await (const item of joinContinuedFootnotesInOrder(stream(pages))) streamed.push(item);
      expect(streamed, `seed ${seed}`).toEqual(joinContinuedFootnotes(pages));
    }
  });

  it('lets a page go as soon as no later page can change it', async () => {
    const pages = randomPages(7).map((item) => ({ ...item, blocks: item.blocks.filter((block) => block.kind !== 'footnote') }));
    // with no note on a page, each page comes out before the next is read
    let read = 0;
    async function* counting() {
      for (const item of pages) {
        read++;
        yield item;
      }
    }
    const first = await joinContinuedFootnotesInOrder(counting()).next();
    expect(first.value?.page).toBe(1);
    expect(read).toBe(1);
  });
});
