import { describe, expect, it } from 'vitest';
import type { Block, Inline, PageResult } from '../../server/conversion/model.ts';
import { joinBrokenParagraphs, joinBrokenParagraphsInOrder } from '../../server/conversion/paragraphs.ts';
import { renderHtml } from '../../server/conversion/render/html.ts';
import { convertLocally, type Doc, drawPdf, inlineText } from '../helpers/local-pages.ts';
import { page } from './render-fixture.ts';

/**
 * Issue 11, "lines of one paragraph become one <p>": a paragraph cut by a
 * page break or a column break is read as one paragraph when it ends
 * mid-sentence, the next starts mid-sentence, and both are set at one size.
 */

const text = (value: string): Inline => ({ kind: 'text', text: value });
const paragraph = (pageNumber: number, value: string, size?: number): Block => ({
  kind: 'paragraph',
  page: pageNumber,
  content: [text(value)],
  ...(size === undefined ? {} : { size }),
});
/** Each page's blocks as text, a page marker inside a paragraph shown as ⟨label⟩. */
const shown = (pages: PageResult[]) =>
  pages.map((each) =>
    each.blocks.map((block) =>
      block.kind === 'paragraph'
        ? block.content.map((inline) => (inline.kind === 'pageBreak' ? `⟨${inline.label}⟩` : inlineText([inline]))).join('')
        : block.kind,
    ),
  );

describe('joinBrokenParagraphs', () => {
  it('joins a paragraph a page break cut mid-word: the word mended, the page marker where the page began, notes and figures left in place', () => {
    const input = [
      page(1, [
        paragraph(1, 'Intro.', 10),
        paragraph(1, 'The results were con-', 10),
        { kind: 'footnote', page: 1, id: 'n1', label: '1', content: [text('A note.')] },
      ]),
      page(
        2,
        [
          { kind: 'pageBreak', page: 2, label: 'ii' },
          { kind: 'figure', page: 2, decorative: true, needsAlt: false },
          paragraph(2, 'firmed by the second trial.', 10),
          paragraph(2, 'Next.', 10),
        ],
        { label: 'ii' },
      ),
    ];
    expect(shown(joinBrokenParagraphs(input))).toEqual([
      ['Intro.', 'The results were con⟨ii⟩firmed by the second trial.', 'footnote'],
      ['figure', 'Next.'],
    ]);
    // the given pages are left as they were
    expect(shown(input)[1]).toEqual(['pageBreak', 'figure', 'firmed by the second trial.', 'Next.']);

    const html = renderHtml({ meta: { title: 'T', lang: 'en', pageCount: 2, tagged: false, sourceName: 't.pdf' }, pages: input }).html;
    expect(html).toContain(
      '<p>The results were con<span class="pagebreak" role="doc-pagebreak" id="page-ii" title="Page ii"></span>firmed by the second trial.</p>',
    );
    expect(html.match(/id="page-ii"/g)).toHaveLength(1);
  });

  it('leaves apart a paragraph that ends a sentence, a next one that starts one, and two set at different sizes', () => {
    const cases = [
      [paragraph(1, 'It ended here.', 10), paragraph(2, 'and this starts low', 10)],
      [paragraph(1, 'It ended here: see', 10), paragraph(2, 'The next page starts anew', 10)],
      [paragraph(1, 'The body text runs on', 10), paragraph(2, 'into a caption set smaller', 8)],
    ];
    const apart = [page(1, [paragraph(1, 'A sentence on page one runs')]), page(3, [paragraph(3, 'on page three, page two not converted.')])];
    expect(shown(joinBrokenParagraphs(apart))).toEqual(shown(apart));
    for (const [foot, head] of cases) {
      const input = [page(1, [foot!]), page(2, [head!])];
      expect(shown(joinBrokenParagraphs(input))).toEqual(shown(input));
    }
  });

  it('reads on past a full stop that closes an abbreviation, not a sentence', () => {
    const input = [
      page(1, [paragraph(1, 'The element Tan1 of Aspergillus niger var.', 9)]),
      page(2, [paragraph(2, 'awamori, a new member of the family.', 9)]),
    ];
    expect(shown(joinBrokenParagraphs(input))).toEqual([['The element Tan1 of Aspergillus niger var. ⟨2⟩awamori, a new member of the family.'], []]);
  });

  it('reads on past a table and a caption set smaller, which stay where they are', () => {
    const table: Block = { kind: 'table', page: 2, rows: [[{ header: false, content: [text('cell')] }]] };
    const input = [
      page(1, [paragraph(1, 'products including polyketides, which are sec-', 9.5), paragraph(1, 'Fig. 1. A caption at the foot', 8)]),
      page(2, [table, paragraph(2, 'a The numbers match the lanes in Fig. 5', 8), paragraph(2, 'ondary fungal metabolites.', 9.5)]),
    ];
    expect(shown(joinBrokenParagraphs(input))).toEqual([
      ['products including polyketides, which are sec⟨2⟩ondary fungal metabolites.', 'Fig. 1. A caption at the foot'],
      ['table', 'a The numbers match the lanes in Fig. 5'],
    ]);
  });

  it('reads a reference list set smaller than the text on over the page, but not a caption alone at the foot', () => {
    const body =
      'The text of the page, set bigger than its references and longer than all of them together as a page’s text is, ends its page before the list of references begins at its foot.';
    const references = [
      page(1, [
        paragraph(1, body, 9.5),
        paragraph(1, 'Hatta R (2002) A chromosome. Genetics 161:59–70', 8),
        paragraph(1, 'Ito K (2004) Dissection of the host range of Alternaria', 8),
      ]),
      page(2, [paragraph(2, 'alternata by modification of metabolism. Mol Microbiol 52:399–411', 8), paragraph(2, 'Body text goes on.', 9.5)]),
    ];
    expect(shown(joinBrokenParagraphs(references))).toEqual([
      [
        body,
        'Hatta R (2002) A chromosome. Genetics 161:59–70',
        'Ito K (2004) Dissection of the host range of Alternaria ⟨2⟩alternata by modification of metabolism. Mol Microbiol 52:399–411',
      ],
      ['Body text goes on.'],
    ]);
    const caption = [
      page(1, [paragraph(1, body, 9.5), paragraph(1, 'Fig. 1. A caption at the foot', 8)]),
      page(2, [paragraph(2, 'a The numbers match the lanes in Fig. 5', 8)]),
    ];
    expect(shown(joinBrokenParagraphs(caption))).toEqual(shown(caption));
  });

  it('joins on the text alone where a backend does not know the sizes, over a page the paragraph fills, and not twice', () => {
    const input = [
      page(1, [paragraph(1, 'One sentence runs')]),
      page(2, [paragraph(2, 'over a whole page and')]),
      page(3, [paragraph(3, 'ends on the third. ')]),
    ];
    const joined = joinBrokenParagraphs(input);
    expect(shown(joined)).toEqual([['One sentence runs ⟨2⟩over a whole page and ⟨3⟩ends on the third. '], [], []]);
    // joined again (the benchmark's pass, then the render's), a paragraph already over a break does not take the next block there too
    const twice = joinBrokenParagraphs([
      page(1, [paragraph(1, 'A sentence runs')]),
      page(2, [paragraph(2, 'on over the page and'), paragraph(2, 'a line set apart')]),
    ]);
    expect(shown(twice)).toEqual([['A sentence runs ⟨2⟩on over the page and'], ['a line set apart']]);
    expect(joinBrokenParagraphs(twice)).toEqual(twice);
  });

  it('over pages streaming in, holds back only a page that ends with an open paragraph', async () => {
    const pages = [
      page(1, [paragraph(1, 'A closed paragraph.')]),
      page(2, [paragraph(2, 'An open one')]),
      page(3, [paragraph(3, 'goes on here.')]),
      page(4, [paragraph(4, 'Last.')]),
    ];
    let read = 0;
    async function* counting() {
      for (const each of pages) {
        read++;
        yield each;
      }
    }
    const seen: { page: number; read: number }[] = [];
    for await (const each of joinBrokenParagraphsInOrder(counting())) seen.push({ page: each.page, read });
    // page 1 goes out as soon as it is read; page 2 waits for page 3, which takes its head
    expect(seen).toEqual([
      { page: 1, read: 1 },
      { page: 2, read: 3 },
      { page: 3, read: 3 },
      { page: 4, read: 4 },
    ]);
    const streamed: PageResult[] = [];
    for await (const each of joinBrokenParagraphsInOrder(counting())) streamed.push(each);
    expect(streamed).toEqual(joinBrokenParagraphs(pages));
    expect(shown(streamed)[1]).toEqual(['An open one ⟨3⟩goes on here.']);
  });
});

describe('a paragraph over a column break (local engine)', () => {
  const write = (doc: Doc, value: string, x: number, y: number, size = 10) => doc.font('Helvetica').fontSize(size).text(value, x, y, { lineBreak: false });

  it('reads on from the foot of the left column to the head of the right one, and not into a paragraph the right column opens', async () => {
    const bytes = await drawPdf((doc) => {
      const left = ['The survey counted birds at', 'every station along the coast', 'from the first week of spring', 'until the colonies had left'];
      const right = ['their nesting grounds in the', 'autumn of the following year.', '', 'Counts were made at dawn and', 'checked against the records.'];
      for (const [index, line] of left.entries()) write(doc, line, 50, 100 + index * 13);
      for (const [index, line] of right.entries()) if (line) write(doc, line, 310, 100 + index * 13);
    });
    const [converted] = (await convertLocally(bytes, { ocr: false })).pages;
    const paragraphs = converted!.blocks.filter((block) => block.kind === 'paragraph').map((block) => inlineText(block.content));
    expect(paragraphs).toEqual([
      'The survey counted birds at every station along the coast from the first week of spring until the colonies had left their nesting grounds in the autumn of the following year.',
      'Counts were made at dawn and checked against the records.',
    ]);
  });
});
