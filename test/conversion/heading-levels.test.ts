import { describe, expect, it } from 'vitest';
import { createDocumentHeadings, numberingDepth } from '../../server/conversion/heading-levels.ts';
import type { Block, PageResult } from '../../server/conversion/model.ts';
import { renderHtml } from '../../server/conversion/render/html.ts';
import { page } from './render-fixture.ts';

/** Inferred headings take document-wide levels: section numbering first, then the document's own style hierarchy. */

const heading = (text: string, level: 1 | 2 | 3, style?: { size: number; bold: boolean }): Block => ({
  kind: 'heading',
  page: 1,
  level,
  content: [{ kind: 'text', text }],
  ...(style ? { style } : {}),
});

function levels(pages: PageResult[], inferred = true): number[][] {
  const headings = createDocumentHeadings(inferred);
  for (const p of pages) headings.add(p);
  return pages.map((p) => headings.levelsOf(p));
}

describe('document-wide heading levels', () => {
  it('reads section numbers: parts over chapters, chapters with their first-level sections, dotted depth below', () => {
    expect(numberingDepth('Chapter 1. Securing your data')).toEqual({ depth: 1, family: 'chapter' });
    expect(numberingDepth('Part II Methods')).toEqual({ depth: 1, family: 'part' });
    expect(numberingDepth('1.3.1 Row permissions')).toEqual({ depth: 3, family: 'dotted' });
    expect(numberingDepth('5.1 Hyper Parameter Optimization')).toEqual({ depth: 2, family: 'dotted' });
    expect(numberingDepth('A.2 Extra tables')).toEqual({ depth: 2, family: 'dotted' });
    // a title in a script without case opens with any of its letters; a lower-case word after a number is no title
    expect(numberingDepth('2 코로나-19 관련 보험 현황')).toEqual({ depth: 1, family: 'dotted' });
    expect(numberingDepth('2 apples were counted')).toBeUndefined();
    expect(numberingDepth('A Study of Rain')).toBeUndefined();
    expect(numberingDepth('2024 was a year')).toBeUndefined();
  });

  it('levels "Chapter 1", "1.1" and "1.3.1" apart even when each page set them at one level', () => {
    const pages = [
      page(1, [heading('Chapter 1. Introduction', 1)]),
      page(2, [heading('1.1 Security', 1), heading('1.3.1 Permissions', 1)]),
      page(3, [heading('2.1.6 Masks', 1)]),
    ];
    expect(levels(pages)).toEqual([[1], [2, 3], [3]]);
  });

  it('gives unnumbered headings the level of the numbered ones set alike, and ranks other styles by size and weight across pages', () => {
    const section = { size: 14, bold: true };
    const sub = { size: 12, bold: true };
    const pages = [
      page(1, [heading('1 Introduction', 1, section), heading('Background', 2, sub)]),
      // this page's biggest heading is a subsection of the document, whatever the page thought
      page(2, [heading('Related work', 1, sub), heading('2 Method', 1, section), heading('Notes', 2, { size: 12, bold: false })]),
    ];
    expect(levels(pages)).toEqual([
      [1, 2],
      [2, 1, 3],
    ]);
  });

  it("sets a paper's title, a heading of its own style before any text, over its numbered sections and the headings set like them", () => {
    const title = { size: 18, bold: true };
    const section = { size: 12, bold: true };
    const pages = [
      page(1, [heading('Accelerating the Science of Language Models', 1, title), heading('Abstract', 1, section), heading('1 Introduction', 1, section)]),
      page(2, [heading('1.1 Open models', 2, { size: 11, bold: true }), heading('2 Data', 1, section)]),
    ];
    expect(levels(pages)).toEqual([
      [1, 2, 2],
      [3, 2],
    ]);
  });

  it("sets a journal article's title over its numbered sections when the journal's masthead lines stand above it", () => {
    const paragraph = (text: string): Block => ({ kind: 'paragraph', page: 1, content: [{ kind: 'text', text }] });
    const section = { size: 9, bold: true };
    const pages = [
      page(1, [
        paragraph('Contents lists available at ScienceDirect'),
        paragraph('Solar Energy Materials & Solar Cells'),
        heading('Performance evaluation of a solar cell structure', 1, { size: 16, bold: false }),
        heading('1. Introduction', 1, section),
      ]),
      page(2, [heading('2. Experimental method', 1, section), heading('Acknowledgements', 1, section)]),
    ];
    expect(levels(pages)).toEqual([
      [1, 2],
      [2, 2],
    ]);
    // without numbered sections a first heading under text is not taken for the title
    expect(levels([page(1, [paragraph('A line of text'), heading('Evolution', 1, { size: 16, bold: false }), heading('Notes', 1, section)])])).toEqual([
      [1, 2],
    ]);
  });

  it('keeps the levels of tagged documents and other backends as given', () => {
    const pages = [page(1, [heading('1.1 Deep', 1), heading('Chapter 3', 2)])];
    expect(levels(pages, false)).toEqual([[1, 2]]);
    expect(levels([{ ...pages[0]!, backend: 'chunked-vision' }])).toEqual([[1, 2]]);
  });

  it('renders the document-wide levels in the HTML', () => {
    const { headings } = renderHtml({
      meta: { title: 'Manual', lang: 'en', pageCount: 2, tagged: false, sourceName: 'm.pdf' },
      pages: [page(1, [heading('Chapter 1. Basics', 1)]), page(2, [heading('1.1 Setup', 1), heading('1.1.1 Install', 1)])],
    });
    expect(headings.map((entry) => [entry.level, entry.text])).toEqual([
      [1, 'Chapter 1. Basics'],
      [2, '1.1 Setup'],
      [3, '1.1.1 Install'],
    ]);
  });
});
