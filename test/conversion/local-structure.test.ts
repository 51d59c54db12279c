import { createRequire } from 'node:module';
import { createCanvas } from '@napi-rs/canvas';
import { JSDOM } from 'jsdom';
import { describe, expect, it } from 'vitest';
import type { Block, TableCell } from '../../server/conversion/model.ts';
import { renderHtml } from '../../server/conversion/render/html.ts';
import { convertLocally, type Doc, drawPdf, inlineText } from '../helpers/local-pages.ts';

/**
 * Structure the local engine infers on untagged pages nobody tagged: tables'
 * header rows and merged cells, tables aligned without rules, captions under
 * tables, and headings set in bold at the body's size. Pages drawn here.
 */

const BOX_FONT = createRequire(import.meta.url).resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf');

type Table = Extract<Block, { kind: 'table' }>;
const tablesOf = (blocks: Block[]) => blocks.filter((block): block is Table => block.kind === 'table');
const cellText = (cell: TableCell) => inlineText(cell.content).trim();
const shape = (table: Table) => table.rows.map((row) => row.map((cell) => [cellText(cell), cell.header, cell.rowSpan ?? 1, cell.colSpan ?? 1]));

/** A grid without bold or heavier rules: "Depth" and "Name" span both header rows beside "Scores" over "low" and "high"; each depth has two unruled rows. */
function subRowGrid(doc: Doc) {
  doc.font('Helvetica').fontSize(10);
  const xs = [60, 120, 200, 260, 320];
  const line = (x1: number, y1: number, x2: number, y2: number) => doc.lineWidth(0.4).moveTo(x1, y1).lineTo(x2, y2).stroke();
  for (const y of [100, 140, 176, 212]) line(xs[0]!, y, xs[4]!, y);
  line(xs[2]!, 120, xs[4]!, 120);
  // the rule between "low" and "high" starts under "Scores", which spans both
  for (const x of xs) line(x, x === xs[3] ? 120 : 100, x, 212);
  const at = (value: string, column: number, y: number) => doc.text(value, xs[column]! + 6, y, { lineBreak: false });
  at('Depth', 0, 114);
  at('Name', 1, 114);
  doc.text('Scores', xs[2]! + 30, 106, { lineBreak: false });
  at('low', 2, 126);
  at('high', 3, 126);
  for (const [top, depth] of [
    [140, '6'],
    [176, '4'],
  ] as const) {
    at(depth, 0, top + 12);
    for (const [offset, name, low, high] of [
      [4, 'alpha', '0.91', '0.97'],
      [20, 'beta', '0.88', '0.93'],
    ] as const) {
      at(name, 1, top + offset);
      at(low, 2, top + offset);
      at(high, 3, top + offset);
    }
  }
  doc.text('Table 2. Scores by depth, two runs per depth.', 60, 222, { lineBreak: false });
  doc.text('The runs were repeated on a second machine with the same results.', 60, 262, { lineBreak: false });
}

/** A table without rules: two header lines over its last two columns ("Paid by the State" wrapped), then rows of marks. */
function alignedWithHeader(doc: Doc) {
  doc.font('Helvetica').fontSize(10);
  doc.text('Which groups are served, and by whom? (Select all that apply)', 60, 80, { lineBreak: false });
  doc.font('Helvetica-Bold').text('Paid by', 300, 112, { lineBreak: false }).text('Charities', 380, 112, { lineBreak: false });
  doc.text('the State', 298, 124, { lineBreak: false });
  doc.font('Helvetica');
  ['Persons with disabilities', 'Children', 'Women', 'The elderly', 'Migrants'].forEach((group, index) => {
    const y = 145 + index * 18;
    doc.text('o', 60, y, { lineBreak: false }).text(group, 95, y, { lineBreak: false });
    doc.text('*', 318, y, { lineBreak: false }).text('*', 398, y, { lineBreak: false });
  });
  doc.text('Thank you for answering the questionnaire.', 60, 260, { lineBreak: false });
}

/** A report's back cover: bold points in a sidebar, the blurb beside them, a publisher's box in capitals at the right, each at its own pitch. */
function backCover(doc: Doc) {
  doc.font('Helvetica-Bold').fontSize(10);
  ['Implement roles and', 'separation of duties', '', 'Leverage row', 'permissions on the', 'database'].forEach((line, index) =>
    doc.text(line, 27, 245 + index * 14, { lineBreak: false }),
  );
  doc.font('Helvetica').fontSize(9);
  [
    'This Redpaper publication provides information about',
    'the row and column access control (RCAC) of release',
    '7.2. It offers a broad description of the function and',
    'advantages of controlling access to data in a',
    'comprehensive and transparent way. This publication',
    'helps you understand the capabilities of RCAC and',
    'provides examples of defining, creating, and',
    'implementing the row permissions and column masks.',
  ].forEach((line, index) => doc.text(line, 153, 244 + index * 12, { lineBreak: false }));
  [
    'This paper is intended for database engineers and',
    'security officers who want to design and implement',
    'RCAC as a part of their data governance policy.',
  ].forEach((line, index) => doc.text(line, 153, 345 + index * 12, { lineBreak: false }));
  doc.font('Helvetica-Bold').fontSize(11);
  ['INTERNATIONAL', 'TECHNICAL', 'SUPPORT', 'ORGANIZATION', '', '', '', 'BUILDING TECHNICAL', 'INFORMATION BASED ON', 'PRACTICAL EXPERIENCE'].forEach(
    (line, index) => doc.text(line, 420, 251 + index * 13, { lineBreak: false }),
  );
}

/**
 * Two columns whose baselines drift apart: the left column's second paragraph stands 8 pt lower after its break, so
 * the right column's one paragraph, 4 pt off the left's lines, meets them first below and then above their baselines.
 */
function driftingColumns(doc: Doc) {
  doc.font('Times-Roman').fontSize(10);
  const left = [
    'The first paragraph of the left column runs',
    'over five lines of the same width, set at',
    'a pitch of twelve points, as a paper sets',
    'its text, and then it comes to its end and',
    'stops here.',
    'The second paragraph of the left column',
    'starts a little lower, after the space the',
    'paper leaves between its paragraphs, and',
    'runs on for a few more lines to its end.',
  ];
  left.forEach((line, index) => doc.text(line, 60, 100 + index * 12 + (index >= 5 ? 8 : 0), { lineBreak: false }));
  const right = [
    'The right column holds a single paragraph',
    'that runs down the whole of its height at',
    'the same pitch of twelve points, four of',
    'them below the lines of the left column',
    'at first, so that the two columns meet on',
    'lines that a page reader gathers across',
    'the gutter, and then above them once the',
    'left column has left its space between',
    'its paragraphs, without any break of its',
    'own anywhere before its very last line.',
  ];
  right.forEach((line, index) => doc.text(line, 310, 104 + index * 12, { lineBreak: false }));
}

/** An OCR layer's two columns: each word drawn on its own, a point or two off its line's baseline, as a scan's words are. */
function jitteryColumns(doc: Doc) {
  doc.font('Helvetica').fontSize(9);
  const words = 'the board met on monday and agreed that the new road to the harbour should be built before the winter rains begin'.split(' ');
  const jitter = [0, 1.4, -0.9, 0.6, -1.6, 1.1, -0.3, 1.7, -1.2, 0.4];
  for (const [column, x0] of [60, 310].entries())
    for (let line = 0; line < 10; line++) {
      let x = x0;
      for (let index = 0; index < 7; index++) {
        const word = words[(line * 7 + index + column * 3) % words.length]! + (line === 9 && index === 6 ? '.' : '');
        doc.text(word, x, 100 + line * 11 + jitter[(line + index * 3 + column) % jitter.length]!, { lineBreak: false });
        x += doc.widthOfString(word) + doc.widthOfString(' ');
      }
    }
}

/**
 * A reference's mark raised over the end of a column's line, nearer the other column's line beside it than its own
 * ("… cell line.⁵˒⁶" beside the right column), and the next paragraph opening with an indent.
 */
function raisedReferenceMark(doc: Doc) {
  doc.font('Times-Roman').fontSize(9);
  const left = [
    'Approximately 30% of cases have a mosaic karyotype,',
    'where one cell line coexists with another cell',
    'line.',
    'Importantly, one in ten women has a mosaic line',
    'with a Y chromosome, and early surgery is advised.',
  ];
  left.forEach((line, index) => doc.text(line, index === 3 ? 64 : 54, 100 + index * 11, { lineBreak: false }));
  const end = 54 + doc.widthOfString('line.');
  doc.fontSize(7).text('5,6', end + 0.5, 122 - 3.4, { lineBreak: false });
  doc.fontSize(9);
  [
    'The right column runs on beside the left one',
    'at a pitch of its own, its lines falling',
    'between the lines of the left column, one',
    'of them next to the raised mark, and on',
    'down the page to the end of its paragraph.',
  ].forEach((line, index) => doc.text(line, 300, 104.95 + index * 11, { lineBreak: false }));
}

/**
 * A reference list set with a hanging indent: each entry's first line at the margin, its other lines indented, no
 * space between entries; with `carried`, the page opens with the last lines of an entry begun on the page before.
 */
function hangingReferences(doc: Doc, carried = false) {
  doc.font('Times-Roman').fontSize(9);
  const entries = [
    ...(carried ? [['', 'alternata by modification of secondary metabolism. Mol Microbiol', '52:399–411']] : []),
    ['Akamatsu H, Taga M, Kodama M (1999) Molecular karyotypes for plant', 'pathogens known to produce host-specific toxins. Curr Genet 35:647–656'],
    [
      'Altschul SF, Madden TL, Schaffer AA (1997) Gapped BLAST and PSI-BLAST:',
      'a new generation of protein database search programs. Nucleic Acids',
      'Res 25:3389–3402',
    ],
    ['Brown DW, Adams TH, Keller NP (1996) Aspergillus has distinct fatty acid', 'synthases for primary and secondary metabolism. Proc Natl Acad Sci 93:14873'],
  ];
  let y = 100;
  for (const lines of entries)
    lines.forEach((line, index) => {
      if (line !== '') doc.text(line, index === 0 ? 60 : 69, y, { lineBreak: false });
      if (line !== '') y += 11;
    });
}

/** A reference list over two columns, an entry cut at the left column's foot after an abbreviation and carried on, indented, at the right column's head. */
function referencesOverColumns(doc: Doc) {
  doc.font('Times-Roman').fontSize(9);
  const left = [
    ['Akamatsu H, Taga M, Kodama M (1999) Molecular karyotypes', 'for plant pathogens. Curr Genet 35:647–656'],
    ['Brown DW, Adams TH, Keller NP (1996) Aspergillus has', 'distinct fatty acid synthases. Proc Natl Acad Sci 93:14873'],
    ['Nyyssonen E, Amutan M, Enfield L (1996) The transposable', 'element Tan1 of Aspergillus niger var.'],
  ];
  const right = [
    ['', 'awamori, a new member of the Fot1 family. Mol Gen Genet', '253:50–56'],
    ['Okuda M, Ikeda K, Namiki F (1998) Tfo1: an Ac-like transposon', 'from a plant pathogenic fungus. Mol Gen Genet 258:599–607'],
  ];
  for (const [x, entries] of [
    [50, left],
    [310, right],
  ] as const) {
    let y = 100;
    for (const lines of entries)
      lines.forEach((line, index) => {
        if (line === '') return;
        doc.text(line, index === 0 ? x : x + 9, y, { lineBreak: false });
        y += 11;
      });
  }
}

/** A word processor's document: a bold body-size title, bold headings a little bigger, regular 12 pt text. */
function wordDocument(doc: Doc) {
  const para = (y: number, lines: string[]) =>
    lines.forEach((text, index) =>
      doc
        .font('Times-Roman')
        .fontSize(12)
        .text(text, 72, y + index * 14, { lineBreak: false }),
    );
  doc.font('Times-Bold').fontSize(12).text('The Evolution of the Printing Press', 72, 72, { lineBreak: false });
  para(100, ['The printing press changed how people read and how ideas travelled across', 'the continent within a few decades of its invention.']);
  doc.font('Times-Bold').fontSize(13.4).text('Early Presses (15th Century)', 72, 150, { lineBreak: false });
  para(178, ['Movable type reached Mainz around 1450, and presses spread to a hundred', 'cities before the end of the century.']);
  doc.font('Times-Bold').fontSize(12).text('A bold sentence that runs on over two lines is emphasis in the text and', 72, 230, { lineBreak: false });
  doc.font('Times-Bold').fontSize(12).text('not a heading at all', 72, 244, { lineBreak: false });
  para(272, ['After that paragraph the text goes on in its regular face for a while longer.']);
  doc.font('Times-Bold').fontSize(13.4).text('The Modern Era', 72, 310, { lineBreak: false });
  para(338, ['Offset printing and then digital presses took over in the twentieth century.']);
  doc.font('Times-Bold').fontSize(12).text('Printed in Mainz', 72, 780, { lineBreak: false });
}

describe('tables: header rows and merged cells', () => {
  it('splits unruled rows under one cell (a rowspan), takes a nested header without bold, and takes "Table N." under the table as its caption', async () => {
    const { pages } = await convertLocally(await drawPdf(subRowGrid), { ocr: false });
    const [table] = tablesOf(pages[0]!.blocks);
    expect(shape(table!)).toEqual([
      [
        ['Depth', true, 2, 1],
        ['Name', true, 2, 1],
        ['Scores', true, 1, 2],
      ],
      [
        ['low', true, 1, 1],
        ['high', true, 1, 1],
      ],
      [
        ['6', false, 2, 1],
        ['alpha', false, 1, 1],
        ['0.91', false, 1, 1],
        ['0.97', false, 1, 1],
      ],
      [
        ['beta', false, 1, 1],
        ['0.88', false, 1, 1],
        ['0.93', false, 1, 1],
      ],
      [
        ['4', false, 2, 1],
        ['alpha', false, 1, 1],
        ['0.91', false, 1, 1],
        ['0.97', false, 1, 1],
      ],
      [
        ['beta', false, 1, 1],
        ['0.88', false, 1, 1],
        ['0.93', false, 1, 1],
      ],
    ]);
    expect(inlineText(table!.caption)).toBe('Table 2. Scores by depth, two runs per depth.');
    const paragraphs = pages[0]!.blocks
      .filter((block) => block.kind === 'paragraph')
      .map((block) => (block.kind === 'paragraph' ? inlineText(block.content) : ''));
    expect(paragraphs.some((text) => text.startsWith('Table 2'))).toBe(false);
  });

  it('heads a table aligned without rules with the header lines above it, each cell over its column, and keeps the first row as data', async () => {
    const { meta, pages } = await convertLocally(await drawPdf(alignedWithHeader), { ocr: false });
    const [table] = tablesOf(pages[0]!.blocks);
    expect(table!.rows.map((row) => row.map((cell) => [cellText(cell), cell.header]))).toEqual([
      [
        ['', true],
        ['', true],
        ['Paid by the State', true],
        ['Charities', true],
      ],
      ...['Persons with disabilities', 'Children', 'Women', 'The elderly', 'Migrants'].map((group) => [
        ['o', false],
        [group, false],
        ['*', false],
        ['*', false],
      ]),
    ]);
    // the question above stays text
    const html = new JSDOM(renderHtml({ meta, pages }).html).window.document;
    expect(html.querySelector('main p')?.textContent).toMatch(/^Which groups are served/);
    expect([...html.querySelectorAll('thead th')].map((cell) => cell.textContent)).toEqual(['', '', 'Paid by the State', 'Charities']);
  });

  it('reads columns of prose set side by side (a back cover) as text, not as an unruled table', async () => {
    const { pages } = await convertLocally(await drawPdf(backCover), { ocr: false });
    expect(tablesOf(pages[0]!.blocks)).toEqual([]);
    const paragraphs = pages[0]!.blocks.flatMap((block) => (block.kind === 'paragraph' || block.kind === 'heading' ? [inlineText(block.content)] : []));
    expect(paragraphs).toContain('Implement roles and separation of duties');
    expect(paragraphs).toContain('INTERNATIONAL TECHNICAL SUPPORT ORGANIZATION');
    // its own pitch, not the lines it shares with the sidebar and the box, says where the blurb's paragraph ends
    expect(paragraphs).toContain(
      'This paper is intended for database engineers and security officers who want to design and implement RCAC as a part of their data governance policy.',
    );
    expect(paragraphs.find((text) => text.startsWith('This Redpaper'))).toContain(
      'This Redpaper publication provides information about the row and column access control (RCAC) of release 7.2. It offers a broad ' +
        'description of the function and advantages of controlling access to data in a comprehensive and transparent way. This publication ' +
        'helps you understand the capabilities of RCAC and provides examples of defining, creating, and implementing the row permissions and column masks.',
    );
  });
});

/** The last page of a paper: most of it a reference list in 8 pt, the text's last paragraphs in 9.3 pt, a bold 11 pt heading. */
function referencesPage(doc: Doc) {
  const body = [
    'access to other health professionals. Numerous clini-',
    'cians will be involved in the health-care provision of',
    'these young people and adults, but the primary man-',
    'aging clinician in adult care should always involve an',
  ];
  body.forEach((line, index) =>
    doc
      .font('Times-Roman')
      .fontSize(9.3)
      .text(line, 55, 80 + index * 13, { lineBreak: false }),
  );
  doc.font('Times-Bold').fontSize(11).text('Conclusion', 55, 150, { lineBreak: false });
  doc.font('Times-Roman').fontSize(9.3).text('The authors have no potential conflicts of interest.', 55, 170, { lineBreak: false });
  for (let index = 0; index < 40; index++)
    doc
      .font('Times-Roman')
      .fontSize(8)
      .text(`${index + 1}. Author A, Author B. A study of many things in many places. J Med 2014;16:53-9.`, 300, 80 + index * 11, { lineBreak: false });
}

/** A picture, then its caption's label in bold on a line of its own and its text under it. */
function figureWithLabelApart(doc: Doc) {
  const canvas = createCanvas(200, 120);
  const context = canvas.getContext('2d');
  const gradient = context.createLinearGradient(0, 0, 200, 120);
  gradient.addColorStop(0, '#1060c0');
  gradient.addColorStop(1, '#f0a020');
  context.fillStyle = gradient;
  context.fillRect(0, 0, 200, 120);
  doc.font('Helvetica').fontSize(10).text('The samples were photographed before they were cut.', 60, 60, { lineBreak: false });
  doc.image(canvas.toBuffer('image/png'), 60, 80, { width: 200, height: 120 });
  doc.font('Helvetica-Bold').fontSize(9).text('Figure 3.', 60, 210, { lineBreak: false });
  doc.font('Helvetica').fontSize(9).text('A sample before cutting.', 60, 226, { lineBreak: false });
  doc.font('Helvetica').fontSize(10).text('Each sample was then cut into four parts and weighed again.', 60, 270, { lineBreak: false });
}

describe('paragraphs', () => {
  it("reads each column's paragraphs by its own lines' pitch where the two columns' baselines drift apart", async () => {
    const { pages } = await convertLocally(await drawPdf(driftingColumns), { ocr: false });
    const paragraphs = pages[0]!.blocks.flatMap((block) => (block.kind === 'paragraph' ? [inlineText(block.content)] : []));
    expect(paragraphs.map((text) => text.split(' ').slice(0, 4).join(' '))).toEqual([
      'The first paragraph of',
      'The second paragraph of',
      'The right column holds',
    ]);
    expect(paragraphs[2]).toMatch(/ last line\.$/);
  });

  it("joins a reference's raised mark to the line it ends, not to the other column's, and opens the indented paragraph after it", async () => {
    const { pages } = await convertLocally(await drawPdf(raisedReferenceMark), { ocr: false });
    const paragraphs = pages[0]!.blocks.flatMap((block) => (block.kind === 'paragraph' ? [inlineText(block.content)] : []));
    expect(paragraphs.slice(0, 2)).toEqual([
      'Approximately 30% of cases have a mosaic karyotype, where one cell line coexists with another cell line.5,6',
      'Importantly, one in ten women has a mosaic line with a Y chromosome, and early surgery is advised.',
    ]);
  });

  it('reads each entry of a reference list set with a hanging indent as a paragraph of its own', async () => {
    const { pages } = await convertLocally(await drawPdf(hangingReferences), { ocr: false });
    const paragraphs = pages[0]!.blocks.flatMap((block) => (block.kind === 'paragraph' ? [inlineText(block.content)] : []));
    expect(paragraphs.map((text) => text.split(' ')[0])).toEqual(['Akamatsu', 'Altschul', 'Brown']);
    expect(paragraphs[1]).toBe(
      'Altschul SF, Madden TL, Schaffer AA (1997) Gapped BLAST and PSI-BLAST: a new generation of protein database search programs. Nucleic Acids Res 25:3389–3402',
    );
    // an entry carried over from the page before: the first entry out at the margin parts from it
    const carried = await convertLocally(await drawPdf((doc) => hangingReferences(doc, true)), { ocr: false });
    const pieces = carried.pages[0]!.blocks.flatMap((block) => (block.kind === 'paragraph' ? [inlineText(block.content)] : []));
    expect(pieces.map((text) => text.split(' ')[0])).toEqual(['alternata', 'Akamatsu', 'Altschul', 'Brown']);
  });

  it("reads on an entry a reference list's column foot cut after an abbreviation into the next column's indented head", async () => {
    const { pages } = await convertLocally(await drawPdf(referencesOverColumns), { ocr: false });
    const paragraphs = pages[0]!.blocks.flatMap((block) => (block.kind === 'paragraph' ? [inlineText(block.content)] : []));
    expect(paragraphs.map((text) => text.split(' ')[0])).toEqual(['Akamatsu', 'Brown', 'Nyyssonen', 'Okuda']);
    expect(paragraphs[2]).toBe(
      'Nyyssonen E, Amutan M, Enfield L (1996) The transposable element Tan1 of Aspergillus niger var. awamori, a new member of the Fot1 family. Mol Gen Genet 253:50–56',
    );
  });

  it("keeps an OCR layer's columns whole, its words jittering about their baselines", async () => {
    const { pages } = await convertLocally(await drawPdf(jitteryColumns), { ocr: false });
    const paragraphs = pages[0]!.blocks.flatMap((block) => (block.kind === 'paragraph' ? [inlineText(block.content)] : []));
    expect(paragraphs.map((text) => text.split(' ').length)).toEqual([70, 70]);
  });
});

describe('captions', () => {
  it('takes a "Figure N." label set apart from its text, and that text, as one figcaption', async () => {
    const { pages } = await convertLocally(await drawPdf(figureWithLabelApart), { ocr: false });
    const figure = pages[0]!.blocks.find((block) => block.kind === 'figure');
    expect(figure?.kind === 'figure' && inlineText(figure.caption)).toBe('Figure 3. A sample before cutting.');
    const paragraphs = pages[0]!.blocks.flatMap((block) => (block.kind === 'paragraph' ? [inlineText(block.content)] : []));
    expect(paragraphs.some((text) => /^(Figure 3|A sample)/.test(text))).toBe(false);
  });
});

/**
 * A Korean report's sections: "1" and "2" white in a dark box before their bold titles, and "(1)" subheadings set in a
 * Medium face over a Light body, each over a paragraph whose first line is indented.
 */
function koreanReport(doc: Doc) {
  const faces = 'node_modules/@expo-google-fonts/noto-sans-kr';
  doc.registerFont('light', `${faces}/300Light/NotoSansKR_300Light.ttf`);
  doc.registerFont('medium', `${faces}/500Medium/NotoSansKR_500Medium.ttf`);
  doc.registerFont('bold', `${faces}/700Bold/NotoSansKR_700Bold.ttf`);
  const lines = [
    '보험약관의 해석은 고객에게 유리하게 하여야 하며 약관의',
    '뜻이 명백하지 아니한 경우에는 고객에게 유리하게 해석되어',
    '야 한다는 원칙이 있으므로 보험회사는 이를 검토하여야 한다.',
  ];
  doc.font('bold').fontSize(20).text('보험약관상 재해보험금 지급문제', 72, 60, { lineBreak: false });
  let y = 110;
  const paragraph = () => {
    lines.forEach((line, index) =>
      doc
        .font('light')
        .fontSize(11.5)
        .text(line, index === 0 ? 84 : 72, y + index * 20, { lineBreak: false }),
    );
    y += lines.length * 20 + 16;
  };
  for (const [number, title] of [
    ['1', '들어가며'],
    ['2', '보험 현황'],
  ] as const) {
    doc.rect(70, y - 2, 16, 18).fill('#333333');
    doc.fillColor('white').font('bold').fontSize(13.5).text(number, 74, y, { lineBreak: false });
    doc.fillColor('black').font('bold').fontSize(13.5).text(title, 96, y, { lineBreak: false });
    y += 36;
    paragraph();
    for (const subheading of ['(1) 「감염병예방법」 개정', '(2) 표준약관 재해분류표']) {
      doc.font('medium').fontSize(12.5).text(subheading, 72, y, { lineBreak: false });
      y += 26;
      paragraph();
    }
  }
}

/** A drawn document converted and rendered: its facts, its HTML, and its headings as [tag, text] in order. */
async function rendered(draw: (doc: Doc) => void, name: string) {
  const { meta, pages } = await convertLocally(await drawPdf(draw), { name, ocr: false });
  const html = new JSDOM(renderHtml({ meta, pages }).html).window.document;
  const headings = [...html.querySelectorAll('main h1, main h2, main h3, main h4, main h5, main h6')].map((heading) => [heading.tagName, heading.textContent]);
  return { meta, html, headings };
}

describe('numbered sections of a report in a script without case', () => {
  it("joins a section's number to its Korean title and reads '(1)' lines in a Medium face over a Light body as the subheadings under them", async () => {
    const { html, headings } = await rendered(koreanReport, 'report.pdf');
    expect(headings).toEqual([
      ['H1', '보험약관상 재해보험금 지급문제'],
      ['H2', '1 들어가며'],
      ['H3', '(1) 「감염병예방법」 개정'],
      ['H3', '(2) 표준약관 재해분류표'],
      ['H2', '2 보험 현황'],
      ['H3', '(1) 「감염병예방법」 개정'],
      ['H3', '(2) 표준약관 재해분류표'],
    ]);
    // each paragraph whole, its indented first line with it, under its heading
    const paragraphs = [...html.querySelectorAll('main p')].map((paragraph) => paragraph.textContent ?? '').filter((text) => text.includes('보험약관의'));
    expect(paragraphs).toHaveLength(6);
    for (const paragraph of paragraphs) expect(paragraph).toMatch(/^보험약관의 해석은 .* 검토하여야 한다\.$/);
    expect(html.querySelectorAll('main li')).toHaveLength(0);
  });
});

describe('headings set in bold at the body size', () => {
  it('finds the bold lines set apart as headings, the bold first line as the title and the h1, and leaves bold sentences and a bold footer alone', async () => {
    const { meta, html, headings } = await rendered(wordDocument, 'printing.pdf');
    expect(meta.title).toBe('The Evolution of the Printing Press');
    expect(headings).toEqual([
      ['H1', 'The Evolution of the Printing Press'],
      ['H2', 'Early Presses (15th Century)'],
      ['H2', 'The Modern Era'],
    ]);
    expect(html.title).toBe('The Evolution of the Printing Press');
  });

  it('keeps text a little bigger than a page of small print as paragraphs, not headings', async () => {
    const { pages } = await convertLocally(await drawPdf(referencesPage), { ocr: false });
    const headings = pages[0]!.blocks.filter((block) => block.kind === 'heading').map((block) => (block.kind === 'heading' ? inlineText(block.content) : ''));
    expect(headings).toEqual(['Conclusion']);
  });
  it('reads a check box bigger than its answer as no heading, where its line is a few points off a line across the gutter', async () => {
    // a questionnaire's two columns (table_mislabeled_as_picture.pdf): a box glyph at 13 pt before 9 pt answers
    const questionnaire = (doc: Doc) => {
      const at = (text: string, x: number, baseline: number, font = 'Helvetica', size = 9) =>
        doc.font(font).fontSize(size).text(text, x, baseline, { lineBreak: false, baseline: 'alphabetic' });
      at('24. Do the staff lawyers coordinate to challenge common violations of due process rights?', 50, 100);
      const left = ['Yes, at the national (federal) level', 'Yes, at regional (district) level', 'Yes, at the local (municipal) level', 'No'];
      for (const [index, answer] of left.entries()) {
        at('☐', 60, 125 + index * 18, BOX_FONT, 13);
        at(answer, 78, 125 + index * 18);
      }
      const right = ['They can conduct mediation', 'They can prepare legal documents', 'Don’t know', 'Other (please specify)'];
      for (const [index, answer] of right.entries()) {
        // the third answer is 5.8 pt under the left column's first line, as on the page
        const baseline = [95.4, 113.1, 130.8, 148.5][index]!;
        at('☐', 320, baseline, BOX_FONT, 13);
        at(answer, 338, baseline);
      }
    };
    const { pages } = await convertLocally(await drawPdf(questionnaire), { ocr: false });
    const blocks = pages[0]!.blocks;
    expect(blocks.filter((block) => block.kind === 'heading')).toEqual([]);
    const text = blocks.map((block) => JSON.stringify(block)).join(' ');
    for (const answer of [...['Yes, at the national (federal) level', 'No'], 'Don’t know', 'They can conduct mediation']) expect(text).toContain(answer);
  });

  it("reads a paper's authors and affiliations, set large between its title and its abstract, as text; a page without an abstract keeps its headings", async () => {
    const BODY = 'Language models are trained on text gathered from the web, and what that text holds decides what they learn and repeat.';
    const paper = (abstract: boolean) => (doc: Doc) => {
      doc.font('Helvetica-Bold').fontSize(18).text('Reading Printed Pages with Open Tools', 72, 72, { lineBreak: false });
      doc.fontSize(12).text('Ada Lovelace*, Grace Hopper\u2020 and Alan Turing', 72, 110, { lineBreak: false });
      doc.text('Edsger Dijkstra\u2021', 72, 128, { lineBreak: false });
      doc.font('Helvetica').fontSize(12).text('University of Somewhere, Institute for Things', 72, 150, { lineBreak: false });
      if (abstract) doc.font('Helvetica-Bold').fontSize(12).text('Abstract', 72, 190, { lineBreak: false });
      doc.font('Helvetica').fontSize(10);
      for (let line = 0; line < 6; line++) doc.text(BODY.slice(0, 90), 72, 212 + line * 13, { lineBreak: false });
      doc
        .font('Helvetica-Bold')
        .fontSize(12)
        .text(abstract ? '1 Introduction' : 'Methods', 72, 310, { lineBreak: false });
      doc.font('Helvetica').fontSize(10);
      for (let line = 0; line < 6; line++) doc.text(BODY.slice(0, 90), 72, 332 + line * 13, { lineBreak: false });
    };
    const headingsOf = (blocks: Block[]) => blocks.flatMap((block) => (block.kind === 'heading' ? [inlineText(block.content).trim()] : []));
    const { pages } = await convertLocally(await drawPdf(paper(true)), { ocr: false });
    expect(headingsOf(pages[0]!.blocks)).toEqual(['Reading Printed Pages with Open Tools', 'Abstract', '1 Introduction']);
    const text = pages[0]!.blocks.map((block) => (block.kind === 'paragraph' ? inlineText(block.content) : '')).join('\n');
    expect(text).toContain('Ada Lovelace*, Grace Hopper');
    expect(text).toContain('University of Somewhere');
    // without an abstract or a first section to end the front matter, nothing says the large lines are a byline
    const { pages: plain } = await convertLocally(await drawPdf(paper(false)), { ocr: false });
    const plainHeadings = headingsOf(plain[0]!.blocks);
    expect(plainHeadings).toContain('Methods');
    expect(plainHeadings.some((heading) => heading.startsWith('Ada Lovelace'))).toBe(true);
  });
});

describe('lists', () => {
  it('reads a bullet set apart from its text by a tab stop as opening a list item, not as a paragraph of its own', async () => {
    const bulleted = (doc: Doc) => {
      doc.font('Helvetica').fontSize(11);
      doc.text('Word processors of the 1980s included these programs:', 72, 90, { lineBreak: false });
      ['WordStar (1978): one of the first for microcomputers.', 'Microsoft Word (1983): the first release for MS-DOS.'].forEach((item, index) => {
        const y = 120 + index * 18;
        doc.text('•', 84, y, { lineBreak: false });
        doc.text(item, 102, y, { lineBreak: false });
      });
      doc.text('Other notable software from this era included WordPerfect.', 72, 170, { lineBreak: false });
    };
    const { pages } = await convertLocally(await drawPdf(bulleted), { ocr: false });
    const blocks = pages[0]!.blocks;
    expect(blocks.map((block) => block.kind)).toEqual(['paragraph', 'list', 'paragraph']);
    const list = blocks[1] as Extract<Block, { kind: 'list' }>;
    expect(list.ordered).toBe(false);
    expect(list.items.map((item) => inlineText(item.content).trim())).toEqual([
      'WordStar (1978): one of the first for microcomputers.',
      'Microsoft Word (1983): the first release for MS-DOS.',
    ]);
  });

  it("reads 'A.' and 'B.' lines as a lettered list and numbered lines opening with a year as a list, and a signature's initials and a telephone's area code as text", async () => {
    const letter = (doc: Doc) => {
      doc.font('Helvetica').fontSize(11);
      const line = (text: string, x: number, y: number) => doc.text(text, x, y, { lineBreak: false });
      line('The shipment holds two kinds of goods:', 72, 90);
      line('A. Field telephones, packed in six cases.', 72, 110);
      line('B. Spare batteries, packed in two cases.', 72, 128);
      line('Please acknowledge their receipt at your earliest convenience.', 72, 160);
      line('1. 1917: the order was placed.', 72, 178);
      line('2. 1918: the goods were shipped.', 72, 196);
      line('Very respectfully,', 300, 230);
      line('J. R. Carroway, Major, Signal Corps.', 300, 270);
      line('(818) 708-8131 TELEX #298949', 300, 288);
    };
    const { pages } = await convertLocally(await drawPdf(letter), { ocr: false });
    const blocks = pages[0]!.blocks;
    const lists = blocks.filter((block): block is Extract<Block, { kind: 'list' }> => block.kind === 'list');
    expect(lists.map((list) => list.items.map((item) => inlineText(item.content).trim()))).toEqual([
      ['Field telephones, packed in six cases.', 'Spare batteries, packed in two cases.'],
      ['1917: the order was placed.', '1918: the goods were shipped.'],
    ]);
    const text = blocks.map((block) => (block.kind === 'paragraph' ? inlineText(block.content) : '')).join(' ');
    expect(text).toContain('J. R. Carroway, Major, Signal Corps.');
    expect(text).toContain('(818) 708-8131');
  });

  it('reads a line of prose that names a function in the typewriter face as prose, and a listing set wholly in it as code', async () => {
    const page = (doc: Doc) => {
      doc.font('Helvetica').fontSize(11).text('The copy requires the destination node to be ex-', 72, 90, { lineBreak: false });
      doc.text('panded by', 72, 104, { lineBreak: false });
      const call = 'asn1_create_element_of_tree()';
      const at = 72 + doc.widthOfString('panded by ');
      doc.font('Courier').fontSize(11).text(call, at, 104, { lineBreak: false });
      doc.font('Helvetica').text(' first.', at + doc.font('Courier').widthOfString(call), 104, { lineBreak: false });
      ['int main(void) {', '  return copy(node);', '}'].forEach((line, index) => doc.font('Courier').text(line, 72, 140 + index * 13, { lineBreak: false }));
    };
    const { pages } = await convertLocally(await drawPdf(page), { ocr: false });
    const blocks = pages[0]!.blocks;
    expect(blocks.map((block) => block.kind)).toEqual(['paragraph', 'code']);
    expect(inlineText((blocks[0] as Extract<Block, { kind: 'paragraph' }>).content)).toBe(
      'The copy requires the destination node to be expanded by asn1_create_element_of_tree() first.',
    );
  });

  it("keeps a reference whole where a line ending in an initial runs on into 'A. Atwater,', and still opens a list at 'A.' after a short line", async () => {
    const page = (doc: Doc) => {
      doc.font('Helvetica').fontSize(9);
      [
        '[26] D.C. Law, R.R. King, H. Yoon, M.J. Archer, A. Boca, C.M. Fetzer, S. Mesropian,',
        '       T. Isshiki, M. Haddad, K.M. Edmondson, D. Bhusari, J. Yen, R.A. Sherif, H.',
        '       A. Atwater, N.H. Karam, Future technology pathways of terrestrial III-V',
        '       multijunction solar cells, Sol. Energy Mater. Sol. Cells 94 (2010) 1314-1318.',
      ].forEach((line, index) => doc.text(line.trim(), line.startsWith(' ') ? 84 : 72, 100 + index * 11, { lineBreak: false }));
      ['The options are:', 'A. Keep the cells at room temperature.', 'B. Anneal them first.'].forEach((line, index) =>
        doc.text(line, 72, 180 + index * 11, { lineBreak: false }),
      );
    };
    const { pages } = await convertLocally(await drawPdf(page), { ocr: false });
    const blocks = pages[0]!.blocks;
    const reference = blocks.find((block) => block.kind === 'paragraph' && inlineText(block.content).startsWith('[26]'));
    expect(reference && inlineText((reference as Extract<Block, { kind: 'paragraph' }>).content)).toContain('R.A. Sherif, H. A. Atwater, N.H. Karam');
    const list = blocks.find((block) => block.kind === 'list');
    expect(list && list.kind === 'list' ? list.items.map((item) => inlineText(item.content)) : []).toEqual([
      'Keep the cells at room temperature.',
      'Anneal them first.',
    ]);
  });

  it('reads a typed page justified word by word in Courier as its paragraphs, not as a listing or a table', async () => {
    const lines = [
      'Obacht! Die grobschlachtig Naseweis bemuttern. Fraulein und Sulze',
      'bemuttern fidel Fernweh. Das feist Bagage duellieren. Der feist',
      'Personenvereinzelungsanlage. Die Lausbub duellieren das',
      'Stelldichein betoren. Die rosig Augenschmaus lobpreisen. Das',
      'Kleintierzuchtverein und Rostbratwurst lobpreisen frivol',
      'Rostbratwurst festnageln das hochgestochen Scharlatan.',
    ];
    const page = (doc: Doc) => {
      doc.font('Courier').fontSize(10);
      // each word placed on its own, the line's spare width shared out between its gaps (the last line set ragged)
      lines.forEach((line, row) => {
        const words = line.split(' ');
        const spare = 468 - doc.widthOfString(words.join(''));
        const gap = row === lines.length - 1 ? doc.widthOfString(' ') : spare / (words.length - 1);
        let x = 72;
        for (const word of words) {
          doc.text(word, x, 100 + row * 13, { lineBreak: false });
          x += doc.widthOfString(word) + gap;
        }
      });
    };
    const { pages } = await convertLocally(await drawPdf(page), { ocr: false });
    const blocks = pages[0]!.blocks;
    expect(blocks.map((block) => block.kind)).toEqual(['paragraph']);
    expect(inlineText((blocks[0] as Extract<Block, { kind: 'paragraph' }>).content)).toBe(lines.join(' '));
  });

  it('ends each entry of a contents page at its page number, set apart at the right', async () => {
    const entries = [
      ['1.1 Topological spaces', '2'],
      ['1.2 Metric spaces', '6'],
      ['1.3 Continuity', '9'],
    ];
    const page = (doc: Doc) => {
      doc.font('Helvetica').fontSize(11);
      // the leader runs to a few points short of the number's column, as TeX's \dotfill does
      entries.forEach(([title, number], row) => {
        let line = `${title} `;
        while (72 + doc.widthOfString(`${line} .`) < 480) line += ' .';
        doc.text(line, 72, 100 + row * 14, { lineBreak: false });
        doc.text(number!, 490, 100 + row * 14, { lineBreak: false });
      });
    };
    const { pages } = await convertLocally(await drawPdf(page), { ocr: false });
    const texts = pages[0]!.blocks.map((block) => (block.kind === 'paragraph' ? inlineText(block.content) : block.kind));
    expect(texts.map((text) => text.replace(/[ .]{4,}/, ' … '))).toEqual(entries.map(([title, number]) => `${title} … ${number}`));
  });

  it('takes a line in capitals set apart at body size for a heading, but not a section label over a title nor a headline quoted in the text', async () => {
    const page = (doc: Doc) => {
      doc.font('Times-Roman').fontSize(11).text('FUNGAL DISEASES', 72, 40, { lineBreak: false });
      doc.text('Sheila Ruswandi, Keiji Kitani and Mikihiro Yamamoto', 72, 66, { lineBreak: false });
      doc.fontSize(16).text('A study of the strawberry pathotype', 72, 90, { lineBreak: false });
      const body = (line: string, x: number, y: number) => doc.fontSize(11).text(line, x, y, { lineBreak: false });
      body('The introduction opens the paper with a sentence that runs over', 92, 130);
      body('two lines of the body at its usual pitch.', 72, 143);
      body('SAMPLE DESIGN', 72, 170);
      body('Probability samples should be told apart from samples of con-', 92, 190);
      body('venience, which a newspaper once headlined as', 72, 203);
      body('DEWEY AS GOOD AS ELECTED, STATISTICS CONVINCE ROPER.', 72, 230);
      body('and the text goes on under the quoted headline in lower case.', 92, 250);
    };
    const { pages } = await convertLocally(await drawPdf(page), { ocr: false });
    const headings = pages[0]!.blocks.filter((block) => block.kind === 'heading').map((block) => inlineText(block.content));
    expect(headings).toEqual(['A study of the strawberry pathotype', 'SAMPLE DESIGN']);
  });

  it('keeps an item whose lines wrap back to the margin whole, and a glossary line after a short item apart', async () => {
    const lines: [string, number][] = [
      ['(i) “Selection bias” is a systematic tendency to exclude one kind of', 96],
      ['unit or another from the sample. With a convenience sample, selection', 72],
      ['Bias is a major issue. That is the chief advantage of probability samples.', 72],
      ['(ii) Generally, the people who hang up on you are different from the', 96],
      ['ones who are willing to be interviewed.', 72],
      // at the margin, under the item's short last line: a paragraph of its own
      ['Sampling error is well-defined for probability samples, and this', 72],
      ['paragraph follows the list.', 72],
    ];
    const page = (doc: Doc) => {
      doc.font('Times-Roman').fontSize(11);
      lines.forEach(([line, x], index) => doc.text(line, x, 100 + index * 13, { lineBreak: false }));
      ['a. abbreviated', 'zhgd. zusammenhängend'].forEach((line, index) => doc.text(line, 72, 300 + index * 13, { lineBreak: false }));
    };
    const { pages } = await convertLocally(await drawPdf(page), { ocr: false });
    const blocks = pages[0]!.blocks;
    const list = blocks.find((block): block is Extract<Block, { kind: 'list' }> => block.kind === 'list');
    expect(list?.items.map((item) => inlineText(item.content).replace(/\s+/g, ' '))).toEqual([
      `${lines[0]![0].slice(4)} ${lines[1]![0]} ${lines[2]![0]}`,
      `${lines[3]![0].slice(5)} ${lines[4]![0]}`,
    ]);
    const texts = blocks.map((block) => (block.kind === 'paragraph' ? inlineText(block.content) : block.kind));
    expect(texts).toContain('Sampling error is well-defined for probability samples, and this paragraph follows the list.');
    expect(texts).toContain('zhgd. zusammenhängend');
  });

  it("keeps a listing's comment, set apart to the right, on its instruction's line, at its column", async () => {
    const page = (doc: Doc) => {
      doc.font('Courier').fontSize(9);
      [
        ['mov edx, ebx(748)', '// load primes'],
        ['mov edi(0), edx', '// store primes'],
        ['jne side_exit_1', '// side exit'],
      ].forEach(([instruction, comment], index) => {
        doc.text(instruction!, 72, 100 + index * 11, { lineBreak: false });
        doc.text(comment!, 200, 100 + index * 11, { lineBreak: false });
      });
    };
    const { pages } = await convertLocally(await drawPdf(page), { ocr: false });
    const code = pages[0]!.blocks.find((block) => block.kind === 'code');
    const lines = code?.text.split('\n') ?? [];
    expect(lines.map((line) => line.replace(/ {2,}/, ' | '))).toEqual([
      'mov edx, ebx(748) | // load primes',
      'mov edi(0), edx | // store primes',
      'jne side_exit_1 | // side exit',
    ]);
    expect(new Set(lines.map((line) => line.indexOf('//'))).size).toBe(1);
  });

  it('keeps an enumeration a full line runs on into inside its sentence, and still opens lists after a colon or a short line', async () => {
    const page = (doc: Doc) => {
      doc.font('Helvetica').fontSize(11);
      [
        'The main goals of the treatment given in puberty are to ensure',
        '(i) adequate growth of the bones, (ii) a growth spurt and (iii)',
        'an adequate development of the organs for the years to come.',
        'The goals are the following three, in the order of their weight:',
        '(i) bones grow to their full length.',
        '(ii) the growth spurt comes in time.',
        'Key features',
        '1. It is short.',
        '2. It is clear.',
      ].forEach((line, index) => doc.text(line, 72, 90 + index * 14, { lineBreak: false }));
    };
    const { pages } = await convertLocally(await drawPdf(page), { ocr: false });
    const blocks = pages[0]!.blocks;
    expect(blocks.map((block) => block.kind)).toEqual(['paragraph', 'list', 'paragraph', 'list']);
    expect(inlineText((blocks[0] as Extract<Block, { kind: 'paragraph' }>).content)).toBe(
      'The main goals of the treatment given in puberty are to ensure (i) adequate growth of the bones, (ii) a growth spurt and (iii) an adequate development of the organs for the years to come. The goals are the following three, in the order of their weight:',
    );
    const lists = blocks.filter((block): block is Extract<Block, { kind: 'list' }> => block.kind === 'list');
    expect(lists.map((list) => list.items.map((item) => inlineText(item.content).trim()))).toEqual([
      ['bones grow to their full length.', 'the growth spurt comes in time.'],
      ['It is short.', 'It is clear.'],
    ]);
  });
});
