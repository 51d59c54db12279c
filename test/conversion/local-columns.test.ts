import { describe, expect, it } from 'vitest';
import type { Block } from '../../server/conversion/model.ts';
import { buildSegments } from '../../server/conversion/backends/local/segments.ts';
import type { TextItem } from '../../server/conversion/backends/local/text-layer.ts';
import { expectInOrder } from '../helpers/in-order.ts';
import { convertLocally, type Doc, drawPdf, furnitureOf, inlineText } from '../helpers/local-pages.ts';

/**
 * Columns found per region (issue 11, item 1): a recursive XY-cut reads
 * three columns one after another, the runs of columns above and below a
 * full-width figure in turn, a title block's names before the columns under
 * it, and keeps two columns whole when both happen to leave a gap at one
 * height. The PDFs are drawn here with pdfkit at exact positions (top-left
 * origin, y down).
 */

const convert = async (bytes: Uint8Array) => (await convertLocally(bytes, { ocr: false })).pages;
const blockText = (block: Block): string =>
  block.kind === 'paragraph' || block.kind === 'heading' || block.kind === 'footnote'
    ? inlineText(block.content)
    : block.kind === 'list'
      ? block.items.map((item) => inlineText(item.content)).join(' ')
      : '';
const write = (doc: Doc, value: string, x: number, y: number, size = 10) => doc.font('Helvetica').fontSize(size).text(value, x, y, { lineBreak: false });

/** A column of `count` lines, each naming the column by `word`, at the line pitch of its size. */
function column(doc: Doc, word: string, x: number, y: number, count: number, size = 10, line = 'line runs on in its own column') {
  for (let index = 0; index < count; index++) write(doc, `${word} ${index + 1} ${line}`, x, y + index * size * 1.3, size);
}

/** The page's text, block by block, in the order read. */
const pageText = (page: { blocks: Block[] }) => page.blocks.map(blockText).join(' | ');

describe('columns per region', () => {
  it('reads three columns one after another, each as one paragraph', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        // the third column's lines sit between the others' (it starts under a heading of its own)
        write(doc, 'Cedar Notes', 400, 82, 11);
        // each line a sentence of its own: a column that ended mid-sentence would read on into the next (paragraphs.ts)
        column(doc, 'amber', 40, 100, 12, 9, 'line runs on in its own column.');
        column(doc, 'birch', 220, 100, 12, 9, 'line runs on in its own column.');
        column(doc, 'cedar', 400, 106, 12, 9, 'line runs on in its own column.');
      }),
    );
    const paragraphs = page!.blocks.filter((block) => block.kind === 'paragraph').map(blockText);
    expect(paragraphs, paragraphs.join('\n')).toHaveLength(3);
    ['amber', 'birch', 'cedar'].forEach((word, index) => {
      expect(paragraphs[index]).toContain(`${word} 1 `);
      expect(paragraphs[index]).toContain(`${word} 12 `);
      expect(paragraphs[index]!.match(/amber|birch|cedar/g)!.every((found) => found === word)).toBe(true);
    });
  });

  it('reads the columns above a full-width figure before those below it', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        column(doc, 'north', 60, 80, 8);
        column(doc, 'east', 320, 80, 8);
        doc.rect(60, 210, 470, 260).fill('#888888');
        doc.fillColor('black');
        column(doc, 'south', 60, 500, 8);
        column(doc, 'west', 320, 500, 8);
      }),
    );
    expectInOrder(pageText(page!), ['north 1 ', 'east 1 ', 'south 1 ', 'west 1 ']);
  });

  it("reads a title block's names, row by row, before the columns under it", async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, 'A Study of Columns Found per Region', 150, 60, 18);
        write(doc, 'Ann Lee', 130, 100, 11);
        write(doc, 'Bo Park Jones', 250, 100, 11);
        write(doc, 'Cy Diaz', 400, 100, 11);
        write(doc, 'Dan Roe Smith', 170, 118, 11);
        write(doc, 'Eve Moss', 330, 118, 11);
        column(doc, 'north', 60, 170, 20);
        column(doc, 'east', 320, 170, 20);
      }),
    );
    const text = pageText(page!);
    expectInOrder(text, ['Ann Lee', 'Bo Park', 'Cy Diaz', 'Dan Roe', 'Eve Moss', 'north 1 ']);
    expect(text.indexOf('north 20 ')).toBeLessThan(text.indexOf('east 1 '));
  });

  it('keeps two columns whole when both leave a gap at one height (a figure beside the end of a table)', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        column(doc, 'north', 60, 80, 6);
        column(doc, 'east', 320, 80, 5);
        // both columns leave about four lines empty above 200: the left for a drawing, the right after its table's notes
        doc.rect(60, 165, 220, 30).fill('#888888');
        doc.fillColor('black');
        column(doc, 'south', 60, 200, 14);
        column(doc, 'west', 320, 200, 14);
      }),
    );
    expectInOrder(pageText(page!), ['north 1 ', 'south 1 ', 'east 1 ', 'west 1 ']);
  });

  it("keeps a column whole past a scrap of text across the gutter with both columns' lines running on beside it, and still parts them at a heading across both", async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        column(doc, 'north', 60, 80, 24);
        column(doc, 'east', 320, 80, 24);
        // an OCR layer's two words of two columns read as one line over the gutter, half a line off the columns' lines;
        // the word stretched over its box as an OCR layer draws it (pdfkit's types lack the option)
        const stretched = { lineBreak: false, horizontalScaling: 500 };
        doc
          .font('Helvetica')
          .fontSize(10)
          .text('he.ng', 200, 80 + 11.5 * 13, stretched);
        write(doc, 'A Heading Set Across Both Columns of the Page', 150, 420, 14);
        column(doc, 'south', 60, 460, 8);
        column(doc, 'west', 320, 460, 8);
      }),
    );
    const text = pageText(page!);
    expectInOrder(text, ['north 1 ', 'north 24 ', 'east 1 ', 'east 24 ', 'A Heading Set', 'south 1 ', 'south 8 ', 'west 1 ']);
  });

  it("parts a column's line from a larger heading of the next column on its baseline, a gutter of 10 pt apart (LaTeX's)", async () => {
    const words = 'an abstract runs down the left column in full lines of justified prose as a paper sets it'.split(' ');
    const [page] = await convert(
      await drawPdf((doc) => {
        doc.font('Helvetica').fontSize(10);
        // the left column's lines, word by word, justified to end at x = 290 (word spaces of 3 to 5 pt); the right
        // column starts at 300
        for (let line = 0, next = 0; line < 8; line++) {
          const text = [`west${line + 1}`];
          while (doc.widthOfString([...text, words[next % words.length]].join(' ')) < (line === 7 ? 180 : 222)) text.push(words[next++ % words.length]!);
          if (line === 7) text.push('ends.');
          const widths = text.map((word) => doc.widthOfString(word));
          const space = line === 7 ? doc.widthOfString(' ') : (230 - widths.reduce((sum, width) => sum + width, 0)) / (text.length - 1);
          let x = 60;
          for (const [index, word] of text.entries()) {
            doc.text(word, x, 100 + line * 12, { lineBreak: false });
            x += widths[index]! + space;
          }
        }
        // the right column's lines half a line off the left's, save its heading's, which shares the fourth line's
        write(doc, 'east 1 line of the right column.', 300, 106.5);
        write(doc, 'east 2 line of the right column.', 300, 118.5);
        doc
          .font('Helvetica-Bold')
          .fontSize(14)
          .text('2 Document structures', 300, 100 + 3 * 12 - 3, { lineBreak: false });
        for (let line = 0; line < 4; line++) write(doc, `south ${line + 1} line of the right column.`, 300, 160 + line * 12);
      }),
    );
    const paragraphs = page!.blocks.map(blockText);
    const west = paragraphs.find((text) => text.startsWith('west1 '));
    expect(west, paragraphs.join('\n')).toMatch(/west8 .* ends\.$/);
    expect(west).not.toContain('Document');
    expect(page!.blocks.find((block) => block.kind === 'heading' && inlineText(block.content) === '2 Document structures')).toBeDefined();
    expectInOrder(pageText(page!), ['west1 ', 'west8 ', 'east 1 ', '2 Document structures', 'south 4 ']);
  });
});

describe('columns between lines set across them', () => {
  it('reads the columns between a list set across them and a section under them, a line apart, and keeps short lines with the wide text they end or open', async () => {
    const wide = (doc: Doc, word: string, y: number, count: number) => {
      for (let index = 0; index < count; index++)
        write(doc, `${word} ${index + 1} runs across the whole width of the page over both of the columns`, 60, y + index * 13);
    };
    const [page] = await convert(
      await drawPdf((doc) => {
        wide(doc, 'listed', 80, 10);
        // a wide paragraph's last words, short of the gutter
        write(doc, 'and the list ends here.', 60, 80 + 10 * 13);
        column(doc, 'north', 60, 80 + 11 * 13 + 9, 14);
        column(doc, 'east', 320, 80 + 11 * 13 + 9, 14);
        // the heading over the section under the columns, short of the gutter, a line under the columns' ends
        write(doc, 'Closing Section', 60, 80 + 11 * 13 + 9 + 14 * 13 + 9);
        wide(doc, 'closing', 80 + 11 * 13 + 9 + 15 * 13 + 9, 6);
      }),
    );
    const text = pageText(page!);
    expectInOrder(text, [
      'listed 1 ',
      'listed 10 ',
      'the list ends here',
      'north 1 ',
      'north 14 ',
      'east 1 ',
      'east 14 ',
      'Closing Section',
      'closing 1 ',
      'closing 6 ',
    ]);
  });
});

describe('a narrow column beside the body', () => {
  const prose = 'the abstract runs on across the wide column in full lines of prose as a journal sets it out for its readers'.split(' ');
  // at baselines, as the page sets them: a sidebar's smaller line level with a line of the abstract shares its baseline
  const write = (doc: Doc, value: string, x: number, y: number, size: number) =>
    doc.font('Helvetica').fontSize(size).text(value, x, y, { lineBreak: false, baseline: 'alphabetic' });
  /** `count` lines of one paragraph, each a window of the prose, the last ending it. */
  const body = (doc: Doc, x: number, y: number, size: number, count: number, pitch: number) => {
    for (let index = 0; index < count; index++)
      write(
        doc,
        `${index === 0 ? 'Aim' : `line${index + 1}`} ${prose.slice(index % 4, (index % 4) + 17).join(' ')}${index === count - 1 ? '.' : ''}`,
        x,
        y + index * pitch,
        size,
      );
  };

  it("reads a journal's sidebar of affiliations and dates apart from the abstract its lines stand level with", async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        // the abstract in 9 pt, 10.8 pt apart, 30 pt right of the sidebar's 7.5 pt lines, two of which share its baselines
        // a masthead: the article's kind in a box, the journal's lines at the right
        write(doc, 'ORIGINAL ARTICLE', 214, 62, 11);
        ['Turk J Med Sci', '2009; 39 (3): 361-365', 'doi:10.3906/sag-0902-21'].forEach((line, index) => write(doc, line, 413, 46 + index * 10.8, 9));
        // the author's name level with the title, centred over the abstract
        write(doc, 'Ozcan SAYGIN', 45, 140, 9);
        write(doc, 'Acute effect of speed on nitric oxide', 225, 140, 14);
        body(doc, 172, 180, 9, 16, 10.8);
        ['The School of Physical', 'Education and Sports,', 'Mugla University'].forEach((line, index) => write(doc, line, 45, 190.8 + index * 9, 7.5));
        ['Received: February 25, 2009', 'Accepted: April 30, 2009'].forEach((line, index) => write(doc, line, 45, 255.6 + index * 10.8, 7.5));
      }),
    );
    const paragraphs = page!.blocks.map(blockText);
    const abstract = paragraphs.find((text) => text.startsWith('Aim '));
    expect(abstract, paragraphs.join('\n')).toMatch(/line16 .*\.$/);
    expect(abstract).not.toMatch(/School|Received|Accepted/);
    expect(paragraphs).toContain('The School of Physical Education and Sports, Mugla University');
    expect(paragraphs.some((text) => text.startsWith('Received: February 25, 2009') && text.includes('Accepted: April 30, 2009'))).toBe(true);
  });

  it("keeps a résumé's dates beside the line each stands level with: labels, not a column", async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        for (let index = 0; index < 8; index++) {
          write(doc, `${2010 + index}–${2011 + index}`, 60, 100 + index * 40, 10);
          write(doc, `Post${index + 1} held at the harbour office, keeping the tide tables and the pilot rota in order.`, 160, 100 + index * 40, 10);
        }
      }),
    );
    expectInOrder(pageText(page!), ['2010–2011', 'Post1 ', '2011–2012', 'Post2 ', '2017–2018', 'Post8 ']);
  });
});

describe("a script beside another column's line", () => {
  it("keeps O₂'s subscript in its sentence where the other column's heading stands a few points above the line", async () => {
    const at = (doc: Doc, value: string, x: number, y: number, size: number) =>
      doc.font('Times-Roman').fontSize(size).text(value, x, y, { lineBreak: false, baseline: 'alphabetic' });
    const [page] = await convert(
      await drawPdf((doc) => {
        const left = [
          'In sports trainings, the organism is exposed to loads',
          'which are over daily life levels. In exercise, it is',
          'blood that provides the metabolic and O',
          'the tissues. Blood pressure is the force that enables',
          'the blood flow through the veins of the body.',
        ];
        left.forEach((line, index) => at(doc, line, 44, 100 + index * 13.3, 11));
        const o = 44 + doc.font('Times-Roman').fontSize(11).widthOfString(left[2]!);
        at(doc, '2', o, 100 + 2 * 13.3 + 2.7, 6.6);
        at(doc, 'needs of', o + 5, 100 + 2 * 13.3, 11);
        // the right column: a heading 5.4 pt above the left line with the subscript, its text under it
        at(doc, 'Blood Measures', 308, 100 + 2 * 13.3 - 5.4, 11);
        ['Blood samples were drawn from the vein into', 'heparinised tubes before and after the test', 'and kept cold until they were analysed.'].forEach(
          (line, index) => at(doc, line, 308, 100 + 2 * 13.3 + 11 + index * 13.3, 11),
        );
      }),
    );
    const paragraphs = page!.blocks.map(blockText);
    expect(
      paragraphs.find((text) => text.startsWith('In sports')),
      paragraphs.join('\n'),
    ).toContain('the metabolic and O2 needs of the tissues.');
    expect(paragraphs).not.toContain('2');
  });
});

describe("a page's foot of two captions side by side", () => {
  it('reads the left caption whole before the right one, where one line of each shares a baseline', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        // one column of text, figures (not drawn) beside and under it, their captions at the page's foot
        for (let index = 0; index < 30; index++) write(doc, `line${index + 1} of the text runs down the page's one column.`, 42, 80 + index * 13, 9);
        write(doc, 'Fig. 5. (a) Two- and (b) three-dimensional images showing the', 312, 770, 7);
        write(doc, 'Fig. 3. Dispersions of the dopant elements in the layer.', 65, 779, 7);
        write(doc, 'surface morphology of the structure.', 312, 779, 7);
      }),
    );
    const paragraphs = page!.blocks.map(blockText);
    expect(paragraphs, paragraphs.join('\n')).toContain('Fig. 3. Dispersions of the dopant elements in the layer.');
    expect(paragraphs).toContain('Fig. 5. (a) Two- and (b) three-dimensional images showing the surface morphology of the structure.');
  });
});

describe('columns parted by gutters narrower than a word space', () => {
  it("reads a scanned newspaper's OCR layer column by column: each word placed by its own box, each column's lines a few points off the next one's", async () => {
    // four columns 130 pt wide, 6 pt apart; the OCR layer's words are 4-8 pt apart, so no gap tells the gutter from a
    // word space: only that dozens of lines leave it open, one over another
    const words = 'the harbor pilot saw the ship at dawn and rowed out to meet her before the tide turned'.split(' ');
    const page = (doc: Doc) => {
      doc.font('Times-Roman').fontSize(10);
      for (let column = 0; column < 4; column++) {
        const left = 40 + column * 136;
        // each column's baselines are its own: up to 5 pt off its neighbour's
        const drop = [0, 3, 5, 1.5][column]!;
        for (let line = 0; line < 30; line++) {
          const y = 80 + drop + line * 12;
          // the line's words, justified: spread over the column's width by the OCR's loose boxes
          const text = [`C${column + 1}L${line + 1}`, ...words.slice((line * 3) % 9, ((line * 3) % 9) + 5)];
          const widths = text.map((word) => doc.widthOfString(word));
          const space = (130 - widths.reduce((sum, width) => sum + width, 0)) / (text.length - 1);
          let x = left;
          for (const [index, word] of text.entries()) {
            doc.text(word, x, y, { lineBreak: false });
            x += widths[index]! + space;
          }
        }
      }
    };
    const [converted] = await convert(await drawPdf(page));
    const text = converted!.blocks.map(blockText).join(' ');
    const order = [...text.matchAll(/C(\d)L(\d+)/g)].map((match) => [Number(match[1]), Number(match[2])]);
    expect(order).toHaveLength(120);
    // every line of a column before the next column's first, each column top to bottom
    expect(order).toEqual([1, 2, 3, 4].flatMap((column) => Array.from({ length: 30 }, (_, line) => [column, line + 1])));
  });
});

describe('page furniture at body size on a page that stands alone', () => {
  it('leaves out a journal line at the head and a proceedings line over a copyright line at the foot, with the page number, and lists them', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, 'Journal of Drawn Pages, 2021, Vol. 7', 60, 40);
        column(doc, 'north', 60, 110, 20);
        write(doc, '15725', 290, 770);
        write(doc, 'Proceedings of the 9th Meeting on Drawn Pages, pages 15725–15788', 60, 786);
        write(doc, '© 2021 The Drawing Office', 60, 800);
      }),
    );
    const text = pageText(page!);
    expect(text).toContain('north 20 ');
    for (const furniture of ['Journal of Drawn Pages', 'Proceedings of the 9th', '© 2021', '15725']) expect(text).not.toContain(furniture);
    expect(furnitureOf(page!)).toEqual([
      'page 1: left out as page furniture: "Journal of Drawn Pages, 2021, Vol. 7"',
      'page 1: left out as page furniture: "Proceedings of the 9th Meeting on Drawn Pages, pages 15725–15788"',
      'page 1: left out as page furniture: "© 2021 The Drawing Office"',
    ]);
  });

  it('leaves out a word processor\'s page number with its spaced-out "Page", and one in German, and keeps a roman numeral\'s look-alike word', async () => {
    const page = (foot: string) => (doc: Doc) => {
      column(doc, 'north', 60, 110, 20);
      write(doc, foot, 480, 800);
    };
    const pages = await convert(await drawPdf(page('12 | P a g e'), page('Seite 12'), page('civil')));
    expect(pages.map((converted) => pageText(converted).endsWith('north 20 line runs on in its own column'))).toEqual([true, true, false]);
    expect(pageText(pages[2]!)).toMatch(/civil$/);
  });

  it("leaves out a venue's line at the head of a paper's page and a preprint's line at its foot, both at the body's size", async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, 'Published as a conference paper at ICLR 2024', 60, 40);
        column(doc, 'north', 60, 110, 20);
        write(doc, 'Preprint. Under review.', 60, 800);
      }),
    );
    const text = pageText(page!);
    expect(text).toMatch(/^north 1 .*north 20 [^|]*$/);
    expect(furnitureOf(page!)).toEqual([
      'page 1: left out as page furniture: "Published as a conference paper at ICLR 2024"',
      'page 1: left out as page furniture: "Preprint. Under review."',
    ]);
  });

  it('keeps a reference ending with its pages as the last row of the body, and a footnote with a URL set off at the foot', async () => {
    const pages = await convert(
      await drawPdf(
        (doc) => {
          column(doc, 'north', 60, 110, 50);
          write(doc, 'Lee, A. (2019). Columns. In Proceedings of the Drawing Meeting, pages 101–112.', 60, 110 + 50 * 13);
        },
        (doc) => {
          column(doc, 'north', 60, 110, 40);
          write(doc, '1 https://example.org/drawn-pages', 60, 800, 8);
        },
      ),
    );
    const text = pages.map((page) => page.blocks.map(blockText).join(' | ')).join(' || ');
    expect(text).toContain('pages 101–112');
    expect(text).toContain('https://example.org/drawn-pages');
    expect(pages.flatMap(furnitureOf)).toEqual([]);
  });
});

describe('gaps justification opens', () => {
  const item = (text: string, x: number, y: number, size = 10): TextItem => ({
    text,
    x,
    y,
    width: text.length * size * 0.5,
    size,
    font: 'f',
    eol: false,
    artifact: false,
  });
  /** A line of `words` from x = 72, each word at the x given. */
  const line = (y: number, ...words: [string, number][]) => words.map(([text, x]) => item(text, x, y));
  const texts = (items: TextItem[]) => buildSegments(items, []).map((segment) => segment.text);

  it('keeps a justified line whose words stand wide apart one line, where the lines above and below run across its gaps', () => {
    const full = (y: number) => line(y, ['a full line of words runs across the page', 72]);
    expect(texts([...full(700), ...line(688, ['Personenvereinzelung.', 72], ['Die', 207], ['Lausbub', 252]), ...full(676)])).toEqual([
      'a full line of words runs across the page',
      'Personenvereinzelung. Die Lausbub',
      'a full line of words runs across the page',
    ]);
  });

  it("parts a column's last line from the next column's indented first line, and a table's cells", () => {
    // the left column's lines end at 252, the right column's start at 262; its new paragraph is indented
    const columns = [
      ...line(700, ['the left column runs on to its edge', 72], ['right column', 262]),
      ...line(688, ['the last line of its paragraph.', 72], ['Indented', 272]),
      ...line(676, ['the left column runs on to its edge', 72], ['right column', 262]),
    ];
    expect(texts(columns)).toHaveLength(6);
    const table = [
      ...line(600, ['Capital', 72], ['Language', 165]),
      ...line(588, ['Vienna City', 72], ['German', 165]),
      ...line(576, ['Washington D.C.', 72], ['English', 165]),
    ];
    expect(texts(table)).toEqual(['Capital', 'Language', 'Vienna City', 'German', 'Washington D.C.', 'English']);
  });
});
