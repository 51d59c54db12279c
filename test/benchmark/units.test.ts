import { describe, expect, it } from 'vitest';
import { parseQueuesOption } from '../../jobs/registry.ts';
import { wordRecall } from '../../server/benchmark/word-recall.ts';
import type { Block, PageResult } from '../../server/conversion/model.ts';
import { joinBrokenParagraphs } from '../../server/conversion/paragraphs.ts';

function page(number: number, blocks: Block[]): PageResult {
  return {
    page: number,
    label: String(number),
    backend: 'local',
    classification: 'standard',
    reasons: [],
    blocks,
    warnings: [],
    textLayerWords: 0,
    ocr: false,
    timings: { ms: 1 },
    costUsd: 0,
  };
}
const paragraph = (pageNumber: number, text: string): Block => ({ kind: 'paragraph', page: pageNumber, content: [{ kind: 'text', text }] });
const texts = (pages: PageResult[]) =>
  pages.map((p) => p.blocks.map((b) => (b.kind === 'paragraph' ? b.content.map((i) => (i.kind === 'text' ? i.text : '')).join('') : b.kind)));

describe('joinBrokenParagraphs (the uxOptimizer pass)', () => {
  it('joins a paragraph a page break cut mid-sentence, and a word hyphenated across it', () => {
    const input = [
      page(1, [paragraph(1, 'Intro.'), paragraph(1, 'The results were con-'), { kind: 'footnote', page: 1, id: 'n1', label: '1', content: [] }]),
      page(2, [paragraph(2, 'firmed by the second trial.'), paragraph(2, 'Next.')]),
      page(3, [paragraph(3, 'the next page starts a sentence of its own')]),
    ];
    expect(texts(joinBrokenParagraphs(input))).toEqual([
      ['Intro.', 'The results were confirmed by the second trial.', 'footnote'],
      ['Next.'],
      ['the next page starts a sentence of its own'],
    ]);
    // the input is left as it was
    expect(texts(input)[1]).toEqual(['firmed by the second trial.', 'Next.']);
  });

  it('leaves a page that ends a sentence, or a next page that starts one, alone', () => {
    const input = [page(1, [paragraph(1, 'It ended here')]), page(2, [paragraph(2, 'Capital start.')])];
    expect(texts(joinBrokenParagraphs(input))).toEqual(texts(input));
  });
});

describe('wordRecall', () => {
  it('counts words as a multiset and is null without a text layer', () => {
    expect(wordRecall(['a', 'a', 'b', 'c'], ['a', 'b', 'x'])).toBe(0.5);
    expect(wordRecall([], ['a'])).toBeNull();
  });
});

describe('parseQueuesOption (node jobs/main.ts --queues)', () => {
  it('takes areas comma-separated, repeated, or with =; every area without the option', () => {
    expect(parseQueuesOption(['--queues', 'benchmark'])).toEqual(['benchmark']);
    expect(parseQueuesOption(['--queues=benchmark,conversion', '--queues', 'benchmark'])).toEqual(['benchmark', 'conversion']);
    expect(parseQueuesOption([])).toContain('benchmark');
    expect(parseQueuesOption([]).length).toBeGreaterThan(5);
  });

  it('refuses an unknown area or a missing list', () => {
    expect(() => parseQueuesOption(['--queues', 'benchmrk'])).toThrow(/unknown --queues area benchmrk/);
    expect(() => parseQueuesOption(['--queues'])).toThrow(/needs a list/);
  });
});
