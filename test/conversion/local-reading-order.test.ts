import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Block } from '../../server/conversion/model.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { blocksText } from '../../server/conversion/page-content.ts';
import { convertLocally, type Doc, drawPdf, furnitureOf, inlineText } from '../helpers/local-pages.ts';
import { OPS } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { degrees, PDFDict, PDFDocument, PDFName, StandardFonts } from 'pdf-lib';
import { repairReversedLigatures, type TextItem } from '../../server/conversion/backends/local/text-layer.ts';
import { textByMarkedContent } from '../../server/conversion/backends/local/tagged.ts';

const convert = async (bytes: Uint8Array) => (await convertLocally(bytes, { ocr: false })).pages;

/**
 * The order and the pieces of an untagged page's text (issue 11): lines kept
 * apart where a table's rule or big type stands between them, a page's foot
 * after its columns, a footnote marker's own punctuation kept, a
 * right-to-left line read from the right. The PDFs are drawn here with pdfkit
 * at exact positions (top-left origin, y down), or are real pages of the corpus.
 */

type Table = Extract<Block, { kind: 'table' }>;

const text = inlineText;
const blockText = (block: Block): string =>
  block.kind === 'paragraph' || block.kind === 'heading' || block.kind === 'footnote'
    ? text(block.content)
    : block.kind === 'list'
      ? block.items.map((item) => text(item.content)).join(' ')
      : block.kind;
const write = (doc: Doc, value: string, x: number, y: number, size = 10, font = 'Helvetica') =>
  doc.font(font).fontSize(size).text(value, x, y, { lineBreak: false });
const rule = (doc: Doc, x1: number, y1: number, x2: number, y2: number) => doc.lineWidth(0.4).moveTo(x1, y1).lineTo(x2, y2).stroke();

const LEFT = [
  'The first column opens the article with a sentence',
  'that runs over several lines of the same size and',
  'leading, as body text does in a journal or a report,',
  'and its last line ends the first column here.',
];
const RIGHT = [
  'The second column carries the discussion on with',
  'lines of its own, set beside those of the first one',
  'with a clear gutter between the two columns of the',
  'page, and it ends before the foot of the page.',
];

describe('lines kept apart', () => {
  it('cuts a line where a table draws a cell border between two words set closer than a gutter, and reads the header rows the grid shades above its top rule', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, 'Table 1: Old and new classes', 72, 80, 11);
        // verticals run on above the first horizontal rule (132) to the header's top (100), drawn row by row: their
        // pieces meet under the first header row (116), where no horizontal rule is drawn
        for (const x of [140, 300]) {
          rule(doc, x, 100, x, 116);
          rule(doc, x, 116, x, 190);
        }
        for (const y of [132, 160, 190]) rule(doc, 60, y, 460, y);
        write(doc, 'Kind', 70, 104);
        write(doc, 'Before', 150, 104);
        write(doc, 'After', 310, 104);
        // each cell's text starts 4 pt from the border: no wider than a word space
        write(doc, 'Class', 70, 118);
        write(doc, 'first group', 144, 118);
        write(doc, 'grade one', 304, 118);
        write(doc, 'Basis', 70, 140);
        write(doc, 'spread by water or food', 144, 140);
        write(doc, 'spread by air or contact', 304, 140);
        write(doc, 'Count', 70, 170);
        write(doc, 'six diseases', 144, 170);
        write(doc, 'seventeen diseases', 304, 170);
      }),
    );
    const table = page!.blocks.find((block): block is Table => block.kind === 'table');
    expect(table, JSON.stringify(page!.blocks)).toBeDefined();
    expect(table!.rows.map((row) => row.map((cell) => text(cell.content)))).toEqual([
      ['Kind', 'Before', 'After'],
      ['Class', 'first group', 'grade one'],
      ['Basis', 'spread by water or food', 'spread by air or contact'],
      ['Count', 'six diseases', 'seventeen diseases'],
    ]);
    expect(text(table!.caption)).toBe('Table 1: Old and new classes');
  });

  it('takes a bracketed Korean label ("[표 1] …") above a ruled table as its caption', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        // pdfkit's standard fonts have no Hangul
        doc.registerFont('kr', 'node_modules/@expo-google-fonts/noto-sans-kr/400Regular/NotoSansKR_400Regular.ttf');
        write(doc, '[표 1] 감염병 비교', 72, 80, 11, 'kr');
        for (const x of [60, 200, 460]) rule(doc, x, 100, x, 160);
        for (const y of [100, 130, 160]) rule(doc, 60, y, 460, y);
        write(doc, 'Kind', 70, 108);
        write(doc, 'Count', 210, 108);
        write(doc, 'Class', 70, 138);
        write(doc, 'six', 210, 138);
      }),
    );
    const table = page!.blocks.find((block): block is Table => block.kind === 'table');
    expect(text(table?.caption)).toBe('[표 1] 감염병 비교');
    expect(page!.blocks.filter((block) => block.kind === 'paragraph')).toEqual([]);
  });

  it('keeps two small lines apart when big type beside them spans both their baselines (a masthead)', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, 'Issued 2 April 2020', 60, 60, 9);
        write(doc, 'Publisher Research Service', 60, 76, 9);
        write(doc, 'Editor Kim Hajung', 60, 92, 9);
        write(doc, 'Issues and Points', 330, 66, 26);
        LEFT.forEach((value, index) => write(doc, value, 60, 160 + index * 14, 10));
      }),
    );
    const all = page!.blocks.map(blockText).join(' | ');
    expect(all).toContain('Publisher Research Service');
    expect(all).toContain('Editor Kim Hajung');
    expect(all).not.toMatch(/Publisher\s*Editor/);
  });
});

describe('a page read in order', () => {
  it("puts the page's foot (an address and an ISSN under both columns) after the columns, not inside the left one, and outside the footnotes", async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        LEFT.forEach((value, index) => write(doc, value, 60, 500 + index * 14, 10));
        RIGHT.forEach((value, index) => write(doc, value, 320, 500 + index * 14, 10));
        rule(doc, 320, 690, 420, 690);
        write(doc, '1) A note at the foot of the right column.', 320, 700, 8);
        write(doc, '07233 Seoul, 1 Assembly Road', 60, 770, 9);
        write(doc, 'Tel. 02-788-4510', 60, 784, 9);
        write(doc, 'ISSN 2005-744X', 400, 770, 9);
      }),
    );
    const texts = page!.blocks.map(blockText);
    const at = (needle: string) => texts.findIndex((value) => value.includes(needle));
    expect(at('07233 Seoul')).toBeGreaterThan(at('The second column'));
    expect(at('ISSN')).toBeGreaterThan(at('07233 Seoul'));
    const note = page!.blocks.find((block) => block.kind === 'footnote');
    expect(note && text(note.content)).toBe('A note at the foot of the right column.');
  });

  it('keeps the closing parenthesis of a raised footnote marker ("law8)is"), so the reference does not run into the next word', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, 'This follows from the law', 72, 100, 11);
        write(doc, '8)', 192, 99, 7);
        write(doc, 'of large numbers, which the report cites.', 201, 100, 11);
        write(doc, 'A second line of the paragraph goes on after it.', 72, 114, 11);
        write(doc, 'And a third line of the paragraph closes it here.', 72, 128, 11);
        rule(doc, 72, 740, 200, 740);
        write(doc, '8) The law of large numbers.', 72, 748, 8);
      }),
    );
    const paragraph = page!.blocks.find((block) => block.kind === 'paragraph');
    const content = paragraph?.kind === 'paragraph' ? paragraph.content : [];
    const at = content.findIndex((item) => item.kind === 'footnoteRef');
    expect(at, JSON.stringify(content)).toBeGreaterThan(0);
    expect(content[at]).toMatchObject({ kind: 'footnoteRef', label: '8' });
    expect(text(content.slice(at + 1))).toMatch(/^\) of large numbers/);
  });
});

describe('page furniture on a page that stands alone', () => {
  it('leaves out a DOI line at the top and a "Downloaded from" and a copyright line at the foot, keeps a DOI cited in the body, and lists what it left out', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, 'doi: 10.1093/bmb/ldu038', 60, 30, 8);
        LEFT.forEach((value, index) => write(doc, value, 60, 200 + index * 14, 10));
        write(doc, 'The data are described in doi: 10.5281/zenodo.1234 as well.', 60, 270, 10);
        write(doc, 'Downloaded from https://academic.example.org/article/45 on 24 October 2023', 60, 790, 7);
        write(doc, '© The Author 2014. Published by a Press. All rights reserved.', 60, 805, 7);
      }),
    );
    const all = page!.blocks.map(blockText).join(' | ');
    expect(all).not.toContain('ldu038');
    expect(all).not.toContain('Downloaded from');
    expect(all).not.toContain('All rights reserved');
    expect(all).toContain('10.5281/zenodo.1234');
    expect(furnitureOf(page!)).toEqual([
      'page 1: left out as page furniture: "doi: 10.1093/bmb/ldu038"',
      'page 1: left out as page furniture: "Downloaded from https://academic.example.org/article/45 on 24 October 2023"',
      'page 1: left out as page furniture: "© The Author 2014. Published by a Press. All rights reserved."',
    ]);
  });
});

describe('page furniture by size and gap alone', () => {
  const BODY = [
    'A page that stands alone carries a running head above',
    'its text and a running foot below it, neither of them',
    'saying what it is in words a pattern would know, only',
    'by being smaller than the body and set apart from it.',
  ];
  it('leaves out a small head and foot set off at the edges, keeps a heading, a caption-like line and a footnote, and lists what it left out', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, 'Studies in Drawn Pages, spring issue', 60, 40, 8);
        write(doc, 'A Section Heading', 60, 110, 14);
        BODY.forEach((value, index) => write(doc, value, 60, 140 + index * 14, 10));
        write(doc, 'Figure 2 sits apart from the body at small size.', 60, 260, 8);
        BODY.forEach((value, index) => write(doc, value, 60, 290 + index * 14, 10));
        write(doc, '1 A note at the foot of the page, set off by a gap.', 60, 760, 8);
        write(doc, 'Working papers of the drawing office', 220, 805, 8);
      }),
    );
    const all = page!.blocks.map(blockText).join(' | ');
    expect(all).not.toContain('Studies in Drawn Pages');
    expect(all).not.toContain('Working papers');
    expect(page!.blocks.find((block) => block.kind === 'heading')).toMatchObject({ kind: 'heading' });
    expect(all).toContain('A Section Heading');
    expect(all).toContain('Figure 2 sits apart');
    expect(page!.blocks.filter((block) => block.kind === 'footnote').map(blockText)).toEqual(['A note at the foot of the page, set off by a gap.']);
    expect(furnitureOf(page!)).toEqual([
      'page 1: left out as page furniture: "Studies in Drawn Pages, spring issue"',
      'page 1: left out as page furniture: "Working papers of the drawing office"',
    ]);
  });

  it("leaves out a book's running head beside its page number and a foot in capitals, on a page whose statements stand further apart than its lines", async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, '9', 60, 40, 8);
        write(doc, '1.2. METRIC SPACES AND THEIR MAPS', 370, 40, 8);
        BODY.forEach((value, index) => write(doc, value, 60, 70 + index * 14, 10));
        // spaced-out statements: their step (24) outnumbers the paragraphs' (14), and must not pass for the line pitch
        ['Definition 10', 'Remark 4', 'Example 12', 'Definition 11', 'Remark 5', 'Example 13', 'Remark 6'].forEach((value, index) =>
          write(doc, `${value} stands on a line of its own.`, 60, 150 + index * 24, 10),
        );
        BODY.forEach((value, index) => write(doc, value, 60, 330 + index * 14, 10));
        // capitals take the room of larger letters: by width alone this foot would pass for body text
        write(doc, 'LECTURE NOTES ON GEOMETRY', 220, 805, 8);
      }),
    );
    const all = page!.blocks.map(blockText).join(' | ');
    expect(all).not.toContain('METRIC SPACES');
    expect(all).toMatch(/^A page that stands alone.*set apart from it\.$/);
    expect(furnitureOf(page!)).toEqual([
      'page 1: left out as page furniture: "1.2. METRIC SPACES AND THEIR MAPS"',
      'page 1: left out as page furniture: "LECTURE NOTES ON GEOMETRY"',
    ]);
  });

  it('leaves out a head set flush right at the body size on a page numbered at its foot, and keeps such a line on a page without a number', async () => {
    const page = (numbered: boolean) => (doc: Doc) => {
      doc.font('Helvetica').fontSize(10);
      const right = 60 + Math.max(...BODY.map((line) => doc.widthOfString(line)));
      write(doc, 'Shared Drawing Database', right - doc.widthOfString('Shared Drawing Database'), 50, 10);
      BODY.forEach((value, index) => write(doc, value, 60, 80 + index * 13, 10));
      BODY.forEach((value, index) => write(doc, value, 60, 150 + index * 13, 10));
      if (numbered) write(doc, '4', 300, 800, 10);
    };
    // two documents: a running head repeated on the next page would go by repetition alone
    const [[numbered], [unnumbered]] = await Promise.all([convert(await drawPdf(page(true))), convert(await drawPdf(page(false)))]);
    expect(numbered!.blocks.map(blockText).join(' | ')).not.toContain('Shared Drawing Database');
    expect(furnitureOf(numbered!)).toEqual(['page 1: left out as page furniture: "Shared Drawing Database"']);
    expect(unnumbered!.blocks.map(blockText).join(' | ')).toMatch(/^Shared Drawing Database/);
  });

  it("leaves out a running head in capitals at the body's size with no page number beside it (as OCR reads a book page), and keeps a chapter's larger title", async () => {
    const page = (head: string, size: number) => (doc: Doc) => {
      write(doc, head, 300 - doc.font('Helvetica').fontSize(size).widthOfString(head) / 2, 50, size);
      BODY.forEach((value, index) => write(doc, value, 60, 90 + index * 13, 10));
      BODY.forEach((value, index) => write(doc, value, 60, 160 + index * 13, 10));
    };
    const [[book], [chapter]] = await Promise.all([convert(await drawPdf(page('THE HISTORY OF ROME.', 10))), convert(await drawPdf(page('CHAPTER IV.', 15)))]);
    expect(book!.blocks.map(blockText).join(' | ')).not.toContain('HISTORY');
    expect(furnitureOf(book!)).toEqual(['page 1: left out as page furniture: "THE HISTORY OF ROME."']);
    expect(chapter!.blocks.map(blockText)[0]).toBe('CHAPTER IV.');
  });

  it('leaves out a line set up the side of the page in its margin, keeps the body beside it', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        BODY.forEach((value, index) => write(doc, value, 60, 100 + index * 14, 10));
        BODY.forEach((value, index) => write(doc, value, 60, 200 + index * 14, 10));
        doc.save().rotate(90, { origin: [565, 120] });
        write(doc, 'Downloaded by a reader of the drawing office on 3 May 2024', 565, 120, 8);
        doc.restore();
      }),
    );
    const all = page!.blocks.map(blockText).join(' | ');
    expect(all).not.toContain('Downloaded by');
    expect(all).toContain('by being smaller than the body and set apart from it.');
    expect(furnitureOf(page!)).toEqual(['page 1: left out as page furniture: "Downloaded by a reader of the drawing office on 3 May 2024"']);
  });

  it('keeps a small row at the foot that is a table row or a lone note line carried from the page before', async () => {
    const pages = await convert(
      await drawPdf(
        (doc) => {
          BODY.forEach((value, index) => write(doc, value, 60, 100 + index * 14, 10));
          ['Apples and quinces', 'Pears and medlars', 'Plums and damsons'].forEach((name, index) => {
            write(doc, name, 60, 755 + index * 24, 8);
            write(doc, String(12 + index), 300, 755 + index * 24, 8);
            write(doc, String(40 + index), 400, 755 + index * 24, 8);
          });
        },
        (doc) => {
          BODY.forEach((value, index) => write(doc, value, 60, 100 + index * 14, 10));
          write(doc, 'carried over from the note that the page before began.', 60, 805, 8);
        },
      ),
    );
    expect(pages.map((page) => page.blocks.map(blockText).join(' | ')).join(' || ')).toMatch(/Plums and damsons.*carried over from the note/);
    expect(pages.flatMap(furnitureOf)).toEqual([]);
  });
});

describe('line numbers in the margin', () => {
  it("leaves a manuscript's line numbers out of its paragraphs, and keeps a contents page's chapter numbers", async () => {
    const sentence = 'The reviewers read every line of the manuscript with care and';
    const numbered = (doc: Doc) => {
      for (let line = 0; line < 30; line++) {
        write(doc, String(line + 1), 40, 102 + line * 12, 7);
        write(doc, line === 29 ? 'so the paragraph ends here.' : `${sentence} line ${line + 1} runs on`, 70, 100 + line * 12, 10);
      }
    };
    const contents = (doc: Doc) => {
      for (let chapter = 0; chapter < 9; chapter++) {
        const y = 100 + chapter * 42;
        write(doc, String(chapter + 1), 60, y, 12);
        write(doc, `Chapter title number ${chapter + 1}`, 90, y, 12);
        write(doc, `${chapter + 1}.1 A section of the chapter`, 90, y + 14, 10);
        write(doc, `${chapter + 1}.2 Another section of it`, 90, y + 28, 10);
      }
    };
    // every fifth line numbered
    const everyFifth = (doc: Doc) => {
      for (let line = 0; line < 45; line++) {
        if ((line + 1) % 5 === 0) write(doc, String(line + 1), 40, 102 + line * 12, 7);
        write(doc, line === 44 ? 'so the paragraph ends here.' : `${sentence} line ${line + 1} runs on`, 70, 100 + line * 12, 10);
      }
    };
    const [page, toc, fifth] = await convert(await drawPdf(numbered, contents, everyFifth));
    expect(fifth!.blocks.map(blockText)).toEqual([expect.stringMatching(/^The reviewers read .* line 44 runs on so the paragraph ends here\.$/)]);
    expect(furnitureOf(fifth!)).toEqual(['page 3: left out as page furniture: "line numbers 5–45"']);
    expect(page!.blocks.map(blockText)).toEqual([
      expect.stringMatching(/^The reviewers read .* line 1 runs on The reviewers .* line 29 runs on so the paragraph ends here\.$/),
    ]);
    expect(furnitureOf(page!)).toEqual(['page 1: left out as page furniture: "line numbers 1–30"']);
    const text = toc!.blocks.map(blockText).join(' | ');
    for (let chapter = 1; chapter <= 9; chapter++) expect(text).toMatch(new RegExp(`\\b${chapter}\\b[^|]*\\|?\\s*Chapter title number ${chapter}\\b`));
    expect(furnitureOf(toc!)).toEqual([]);
  });
});

describe('watermarks', () => {
  it('leaves out big type set over the body, level or at an angle, or at an angle anywhere, and keeps a title above the body and a drop cap beside it', async () => {
    const sentence = 'The committee met on the first of the month and read every report';
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, 'Annual Report', 70, 50, 28);
        write(doc, 'T', 70, 100, 36);
        for (let line = 0; line < 36; line++) write(doc, `${line < 3 ? 'he' : 'and'} ${sentence} ${line + 1}`, line < 3 ? 100 : 70, 100 + line * 14, 11);
        doc.save().fillColor('#dddddd');
        write(doc, 'DRAFT', 200, 300, 60);
        doc.rotate(-45, { origin: [150, 500] });
        write(doc, 'CONFIDENTIAL', 150, 500, 72);
        doc.restore();
        // below the body, over the blank foot of the page
        doc.save().rotate(-60, { origin: [200, 780] });
        write(doc, 'TACTRI', 200, 780, 60);
        doc.restore();
      }),
    );
    const text = page!.blocks.map(blockText);
    // the body one paragraph, the drop cap in it (where its letter goes is another matter)
    expect(text).toEqual(['Annual Report', expect.stringMatching(/^he The committee .* report 1 .*\bT\b.* report 36$/)]);
    expect(furnitureOf(page!)).toEqual([
      'page 1: left out as page furniture: "watermark: DRAFT"',
      'page 1: left out as page furniture: "watermark: CONFIDENTIAL"',
      'page 1: left out as page furniture: "watermark: TACTRI"',
    ]);
  });
});

describe('soft hyphens', () => {
  it('joins a word a line-end hyphen parts where the font maps the hyphen to the soft hyphen, which pdf.js leaves out of its text', async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    const page = doc.addPage([595, 842]);
    page.drawText('Soft hyphens part a word at the end of a line, as in struc\u00AD', { x: 60, y: 700, size: 10, font });
    page.drawText('tures, and the paragraph reads on in lowercase to its end.', { x: 60, y: 688, size: 10, font });
    // LaTeX's tagging and word processors map the hyphen they draw at a line's end to U+00AD
    await font.embed();
    const cmap =
      '/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /Shy def 1 begincodespacerange <00> <FF> endcodespacerange 1 beginbfchar <AD> <00AD> endbfchar endcmap CMapName currentdict /CMap defineresource pop end end';
    doc.context.lookup(font.ref, PDFDict).set(PDFName.of('ToUnicode'), doc.context.register(doc.context.stream(cmap)));
    const [converted] = await convert(await doc.save());
    expect(converted!.blocks.map(blockText)).toEqual([
      'Soft hyphens part a word at the end of a line, as in structures, and the paragraph reads on in lowercase to its end.',
    ]);
  });
});

describe('right-to-left lines', () => {
  it('reads the pieces of an untagged Arabic line from the right, numbers in it left to right (layout set, right_to_left_02.pdf)', async () => {
    const pages = await convert(new Uint8Array(readFileSync(path.join(CORPUS_DIR, 'layout', 'right_to_left_02.pdf'))));
    const texts = pages[0]!.blocks.map(blockText);
    // the issue saw "…الم فإن الحكومة المصرية تضع صوو وعليه،": the line's first word last
    expect(texts[0]).toMatch(/^وعليه، فإن الحكومة المصرية تضع صوو عييهاوخ/);
    expect(texts.join(' ')).toContain('(2024 - 2026)');
  });

  it('puts back the lam-alef ligatures pdf.js reverses letter by letter (right_to_left_02.pdf, untagged)', async () => {
    const pages = await convert(new Uint8Array(readFileSync(path.join(CORPUS_DIR, 'layout', 'right_to_left_02.pdf'))));
    const text = pages[0]!.blocks.map(blockText).join(' ');
    // "لأ", "لإ" and "لآ" are one glyph each on this page: read reversed they were "األمووون", "اإلرهوووخ", "اآلتا"
    expect(text).toContain('الأمووون');
    expect(text).toContain('الإرهوووخ');
    expect(text).toContain('الآتا');
    expect(text).not.toMatch(/األ|اإل|اآل/);
  });

  // a run of glyphs as pdf.js's operator list gives it: letters with their widths (thousandths of an em), numbers the kerning between them
  const glyphs = (...run: (string | number)[]) =>
    run.map((glyph) => (typeof glyph === 'number' ? glyph : { unicode: glyph, width: glyph === ' ' ? 240 : glyph === 'ـ' ? 116 : 500 }));
  const item = (text: string, x = 100, more: Partial<TextItem> = {}): TextItem => ({
    text,
    x,
    y: 700,
    width: 40,
    size: 12,
    font: 'f',
    eol: false,
    artifact: false,
    ...more,
  });

  it('reads a glyph drawn again almost on top of the same glyph (kashidas overlapped to justify a line) once, each drawing of a word as drawn', () => {
    // "قوية" stretched with kashidas in stream (visual) order: ة ـ ـ ـ ي و ق, the third kashida kerned back 97 of its 116
    // (a copy), then the same word with the kashidas only half overlapped (two letters), then a word of kashidas alone
    const list = {
      fnArray: [OPS.showText, OPS.showText],
      argsArray: [
        [glyphs('ة', 'ـ', -3, 'ـ', 97, 'ـ', 'ي', 'و', 'ق', ' ', 'ة', 'ـ', 58, 'ـ', 'ي', 'و', 'ق')],
        [glyphs('ـ', -3, 'ـ', 97, 'ـ', ' ', 'ل', 'ـ', 'ـ', 'ـ', 'ا')],
      ],
    };
    // pdf.js gives each run reversed letter by letter, all glyphs kept
    const items = [item('قويـــة'), item('قويــة', 50), item('اـــل ـــ', 20)];
    expect(repairReversedLigatures(items, list).map((entry) => entry.text)).toEqual(['قويــة', 'قويــة', 'اـــل ــ']);
  });

  it('reads the words of a tagged right-to-left line that one marked content draws from the left from the right', () => {
    // two check box labels, "بلی" (yes) on the right: drawn "خير" first, as Word drew them
    const drawn = [
      item('خير', 197, { width: 14, mcid: 'p1_mc4' }),
      item(' ', 211, { width: 23, mcid: 'p1_mc4' }),
      item('بلی', 235, { width: 12, mcid: 'p1_mc4' }),
    ];
    expect(textByMarkedContent(drawn).get('p1_mc4')).toBe('بلی خير');
    // drawn from the right, as most producers do, and a date's pieces in it, stay as they are read
    const right = [
      item('بلی', 235, { width: 12, mcid: 'p1_mc5' }),
      item(' ', 211, { width: 23, mcid: 'p1_mc5' }),
      item('خير', 197, { width: 14, mcid: 'p1_mc5' }),
    ];
    expect(textByMarkedContent(right).get('p1_mc5')).toBe('بلی خير');
  });

  it('keeps the spaces a tagged right-to-left page implies by gaps and line ends, its ligatures and its dates in order (right_to_left_03.pdf)', async () => {
    const pages = await convert(new Uint8Array(readFileSync(path.join(CORPUS_DIR, 'layout', 'right_to_left_03.pdf'))));
    // most of the page is two tables: their cells' text too
    const text = blocksText(pages[0]!.blocks);
    // words drawn one by one, no space glyph between them: "کارگزاریآرمونبورس" before
    expect(text).toContain('کارگزاری آرمون بورس');
    expect(text).toContain('بر اساس قيمت های جهانی');
    // a cell's text wrapped between two marked contents: "اخذنموده"
    expect(text).toContain('اخذ نموده است؟');
    // lam-alef: "کاال" and "فوالدهای"
    expect(text).toContain('استاندارد کالا');
    expect(text).toContain('فولادهای');
    // the dates' pieces are drawn from the right: "19/09/1403"
    expect(text).toContain('1403/09/19');
    expect(text).not.toContain('19/09/1403');
  });
});

describe('text drawn over itself', () => {
  it('reads a shadowed or twice-printed word once, and keeps the overlapping single glyphs a formula builds a symbol from', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, 'A callout follows this introductory sentence of the page.', 72, 80, 11);
        // a grey shadow, then the word over it half a point up and left (as diagram labels and callouts are drawn)
        doc.fillColor('#999999');
        write(doc, 'ENFORCED FOR ALL ACCESS', 72.6, 120.6, 12, 'Helvetica-Bold');
        doc.fillColor('#000000');
        write(doc, 'ENFORCED FOR ALL ACCESS', 72, 120, 12, 'Helvetica-Bold');
        // a bold faked by printing twice, a quarter point apart
        write(doc, 'Signed on as ALICE', 72, 160, 10);
        write(doc, 'Signed on as ALICE', 72.25, 160, 10);
        // two equals signs three points apart make one long symbol: both glyphs stay
        write(doc, 'a', 72, 200, 11);
        write(doc, '=', 84, 200, 11);
        write(doc, '=', 87, 200, 11);
        write(doc, 'b', 100, 200, 11);
      }),
    );
    const all = blocksText(page!.blocks);
    expect(all.match(/ENFORCED FOR ALL ACCESS/g)).toHaveLength(1);
    expect(all.match(/Signed on as ALICE/g)).toHaveLength(1);
    expect(all.match(/=/g)).toHaveLength(2);
  });
});

describe('landscape pages turned with /Rotate', () => {
  const LINES = [
    'A landscape page is a portrait page turned a quarter, its text drawn turned the other way, so that',
    'it stands upright on the screen and runs along the long side: read in page space, every one of',
    'its lines stands on end and the page would read as a pile of one-word columns down the side.',
  ];
  const ROWS = [
    ['Region', 'Sales', 'Growth'],
    ['North', '1,204', '4.5%'],
    ['South', '983', '2.1%'],
    ['West', '1,577', '6.0%'],
  ];

  /** A portrait page with /Rotate `rotate`, written where it shows at (x, y) from the top left of the turned page. */
  async function landscape(rotate: 90 | 270) {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    const bold = await doc.embedFont(StandardFonts.HelveticaBold);
    const page = doc.addPage([595, 842]);
    page.setRotation(degrees(rotate));
    const put = (value: string, x: number, y: number, size: number, face = font) =>
      rotate === 90
        ? page.drawText(value, { x: y, y: x, size, font: face, rotate: degrees(90) })
        : page.drawText(value, { x: 595 - y, y: 842 - x, size, font: face, rotate: degrees(-90) });
    put('Quarterly figures', 60, 70, 20, bold);
    LINES.forEach((line, index) => put(line, 60, 110 + index * 14, 11));
    ROWS.forEach((row, index) => row.forEach((cell, column) => put(cell, 60 + column * 160, 192 + index * 26, 11, index === 0 ? bold : font)));
    // a cell of two lines: only the rules say the second is the same row's
    put('(estimated)', 380, 192 + 26 + 12, 11);
    // the table's grid: a rule above and below each row, one left and right of each column
    const line = (x1: number, y1: number, x2: number, y2: number) =>
      rotate === 90
        ? page.drawLine({ start: { x: y1, y: x1 }, end: { x: y2, y: x2 }, thickness: 0.5 })
        : page.drawLine({ start: { x: 595 - y1, y: 842 - x1 }, end: { x: 595 - y2, y: 842 - x2 }, thickness: 0.5 });
    for (let row = 0; row <= ROWS.length; row++) line(55, 178 + row * 26, 535, 178 + row * 26);
    for (let column = 0; column <= 3; column++) line(55 + column * 160, 178, 55 + column * 160, 178 + ROWS.length * 26);
    return doc.save();
  }

  it.each([90, 270] as const)(
    'reads a page turned by /Rotate %i with its text and rules drawn against the turn as it shows: heading, paragraph, ruled table',
    async (rotate) => {
      const [page] = await convert(await landscape(rotate));
      const blocks = page!.blocks;
      expect(blocks.map((block) => block.kind)).toEqual(['heading', 'paragraph', 'table']);
      expect(blockText(blocks[0]!)).toBe('Quarterly figures');
      expect(blockText(blocks[1]!)).toBe(LINES.join(' '));
      const table = blocks[2] as Table;
      expect(table.rows.map((row) => row.map((cell) => text(cell.content).replace(/\s+/g, ' ').trim()))).toEqual(
        ROWS.map((row, index) => (index === 1 ? [...row.slice(0, 2), `${row[2]} (estimated)`] : row)),
      );
      expect(table.rows[0]!.every((cell) => cell.header)).toBe(true);
    },
  );
});

describe('letter-spaced words', () => {
  it('reads a word set letter-spaced as the word, its neighbour apart, and leaves a run of three single letters as it is', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, 'a r t i c l e', 72, 100, 9);
        write(doc, 'i n f o', 140, 100, 9);
        write(doc, 'The letters x y z name the axes of the drawing.', 72, 140, 9);
      }),
    );
    expect(page!.blocks.map(blockText)).toEqual(['article info', 'The letters x y z name the axes of the drawing.']);
  });
});
