import { degrees, PDFDocument } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { inspectDocument } from '../../server/conversion/backends/local/document-meta.ts';
import { joinContinuedFootnotes } from '../../server/conversion/footnotes.ts';
import { createConversionEngine } from '../../server/conversion/create-conversion-engine.ts';
import type { Block, Inline } from '../../server/conversion/model.ts';
import { renderHtml } from '../../server/conversion/render/html.ts';
import { silentLog } from '../../server/log.ts';
import { htmlText } from '../helpers/corpus.ts';
import { convertLocally, type Doc, drawPdf, inlineText } from '../helpers/local-pages.ts';

const convert = async (bytes: Uint8Array) => (await convertLocally(bytes, { ocr: false })).pages;

/**
 * What an untagged page draws, read by the local backend: booktabs-style
 * tables (horizontal rules only), figures drawn with vector paths, and
 * footnotes that go on in the next column or on the next page. Every PDF is
 * drawn here with pdfkit at exact positions (top-left origin, y down).
 */

type Figure = Extract<Block, { kind: 'figure' }>;
type Table = Extract<Block, { kind: 'table' }>;

const text = inlineText;
const paragraphs = (blocks: Block[]) => blocks.flatMap((block) => (block.kind === 'paragraph' ? [text(block.content)] : []));
const line = (doc: Doc, x1: number, y: number, x2: number, width: number) => doc.lineWidth(width).moveTo(x1, y).lineTo(x2, y).stroke();
const write = (doc: Doc, value: string, x: number, y: number, size = 10, font = 'Helvetica') =>
  doc.font(font).fontSize(size).text(value, x, y, { lineBreak: false });

const PROSE = [
  'The survey measured every fastener in the store room twice.',
  'Each value below is the mean of both readings in millimetres.',
  'Readings that differed by more than a tenth were taken again.',
];

/**
 * A booktabs table: heavy top and bottom rules, a mid rule under two header
 * rows, "Measurements" over Width and Height with a cmidrule under it, and
 * "Item" alone in its column over both header rows; no vertical rule.
 */
function booktabs(doc: Doc, options: { cmidrule: boolean; header?: string }) {
  PROSE.forEach((value, index) => write(doc, value, 72, 80 + index * 14, 11));
  write(doc, 'Table 2: Fastener sizes', 72, 140, 11);
  line(doc, 66, 160, 400, 0.8);
  write(doc, 'Item', 72, 166);
  // centred over Width and Height, or (a longer text) from Width's left edge past Height's
  if (options.header) write(doc, options.header, 200, 166);
  else write(doc, 'Measurements', 236, 166);
  if (options.cmidrule) line(doc, 196, 181, 380, 0.4);
  write(doc, 'Width', 200, 186);
  write(doc, 'Height', 300, 186);
  line(doc, 66, 201, 400, 0.5);
  [
    ['Bolt', '12 mm', '40 mm'],
    ['Nut', '10 mm', '8 mm'],
    ['Washer', '16 mm', '2 mm'],
  ].forEach((row, index) => row.forEach((value, column) => write(doc, value, [72, 200, 300][column]!, 207 + index * 16)));
  line(doc, 66, 256, 400, 0.8);
  write(doc, 'The sizes above are nominal and measured at room temperature.', 72, 280, 11);
}

const shape = (table: Table) =>
  table.rows.map((row) => row.map((cell) => [text(cell.content), cell.header ? (cell.scope ?? 'th') : 'td', cell.rowSpan ?? 1, cell.colSpan ?? 1]));

describe('booktabs-style tables (horizontal rules only)', () => {
  it('reads the table between its top and bottom rules: header rows above the mid rule, a spanning header from its cmidrule, "Item" over both header rows', async () => {
    const [page] = await convert(await drawPdf((doc) => booktabs(doc, { cmidrule: true })));
    const tables = page!.blocks.filter((block): block is Table => block.kind === 'table');
    expect(tables).toHaveLength(1);
    const table = tables[0]!;
    expect(table.uncertain).toBeUndefined();
    expect(text(table.caption)).toBe('Table 2: Fastener sizes');
    expect(shape(table)).toEqual([
      [
        ['Item', 'col', 2, 1],
        ['Measurements', 'colgroup', 1, 2],
      ],
      [
        ['Width', 'col', 1, 1],
        ['Height', 'col', 1, 1],
      ],
      [
        ['Bolt', 'td', 1, 1],
        ['12 mm', 'td', 1, 1],
        ['40 mm', 'td', 1, 1],
      ],
      [
        ['Nut', 'td', 1, 1],
        ['10 mm', 'td', 1, 1],
        ['8 mm', 'td', 1, 1],
      ],
      [
        ['Washer', 'td', 1, 1],
        ['16 mm', 'td', 1, 1],
        ['2 mm', 'td', 1, 1],
      ],
    ]);
    // the table's text is not repeated around it, and the prose keeps its place
    const kinds = page!.blocks.map((block) => (block.kind === 'paragraph' ? text(block.content) : block.kind));
    expect(kinds).toEqual([PROSE.join(' '), 'table', 'The sizes above are nominal and measured at room temperature.']);
  });

  it("without a cmidrule, takes a header's span from the columns its own text covers", async () => {
    const [page] = await convert(await drawPdf((doc) => booktabs(doc, { cmidrule: false, header: 'Measurements in millimetres' })));
    const table = page!.blocks.find((block): block is Table => block.kind === 'table')!;
    expect(shape(table).slice(0, 2)).toEqual([
      [
        ['Item', 'col', 2, 1],
        ['Measurements in millimetres', 'colgroup', 1, 2],
      ],
      [
        ['Width', 'col', 1, 1],
        ['Height', 'col', 1, 1],
      ],
    ]);
  });

  it("does not take prose set between two rules of the same width (a pull quote, a page's head and foot rules) for a table", async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        line(doc, 72, 60, 523, 0.5);
        for (let index = 0; index < 12; index++) write(doc, `${PROSE[index % 3]!} Line ${index + 1} of the running text.`, 72, 80 + index * 14, 11);
        line(doc, 72, 270, 523, 0.5);
      }),
    );
    expect(page!.blocks.some((block) => block.kind === 'table')).toBe(false);
    expect(paragraphs(page!.blocks).join(' ')).toContain('Line 12 of the running text.');
  });

  it("does not take a diagram's labels between two rules of one width, with a figure's caption among them, for a table", async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        line(doc, 66, 80, 420, 0.5);
        [
          ['Trace 1', 'Trace 2'],
          ['Number', 'Boolean'],
          ['Closed', 'Linked'],
        ].forEach((row, index) => row.forEach((label, column) => write(doc, label, [90, 220][column]!, 90 + index * 14, 8)));
        write(doc, 'Figure 6. We handle type-unstable loops by allowing traces', 72, 150);
        write(doc, 'to compile that cannot loop back to themselves.', 72, 163);
        [
          ['Trace 3', 'Trace 4'],
          ['String', 'Number'],
        ].forEach((row, index) => row.forEach((label, column) => write(doc, label, [90, 220][column]!, 184 + index * 14, 8)));
        line(doc, 66, 220, 420, 0.5);
      }),
    );
    expect(page!.blocks.some((block) => block.kind === 'table')).toBe(false);
    expect(paragraphs(page!.blocks).join(' ')).toContain(
      'Figure 6. We handle type-unstable loops by allowing traces to compile that cannot loop back to themselves.',
    );
  });

  it('joins the lines a booktabs cell wraps onto to its row, and keeps a row that opens in capitals and a column of lower-case words apart', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, 'Table 4: Checks by age', 72, 100, 10);
        line(doc, 72, 116, 450, 0.8);
        ['Area', 'Childhood', 'Status'].forEach((value, column) => write(doc, value, [78, 200, 380][column]!, 122));
        line(doc, 72, 137, 450, 0.5);
        const rows = [
          ['Auxology', 'Height, weight', 'done'],
          ['', 'Pubertal assessment', 'due'],
          ['Growth hormone', 'IGF1 and bone age (if on', 'done'],
          ['monitoring', 'growth hormone therapy)', ''],
          ['Renal', 'Renal ultrasound', 'overdue'],
          ['', '', 'referred'],
        ];
        rows.forEach((row, index) => row.forEach((value, column) => value && write(doc, value, [78, 200, 380][column]!, 143 + index * 14)));
        line(doc, 72, 143 + rows.length * 14 + 4, 450, 0.8);
      }),
    );
    const table = page!.blocks.find((block): block is Table => block.kind === 'table')!;
    expect(shape(table).map((row) => row.map(([cell]) => cell))).toEqual([
      ['Area', 'Childhood', 'Status'],
      ['Auxology', 'Height, weight', 'done'],
      ['', 'Pubertal assessment', 'due'],
      ['Growth hormone monitoring', 'IGF1 and bone age (if on growth hormone therapy)', 'done'],
      ['Renal', 'Renal ultrasound', 'overdue'],
      ['', '', 'referred'],
    ]);
  });

  it("does not take two columns of prose between a running head's rule and a table's top rule of its width for the table's header rows", async () => {
    const words =
      'the store room holds every fastener the survey measured twice and each reading was taken again when the two differed by more than a tenth of a millimetre'.split(
        ' ',
      );
    // each column's lines run one sentence on: seven words a line, the next line going on in lower case
    const columnLines = (first: string) =>
      Array.from({ length: 8 }, (_, index) => `${index === 0 ? first : ''}${words.slice((index * 7) % 21, ((index * 7) % 21) + 7).join(' ')}`);
    const [page] = await convert(
      await drawPdf((doc) => {
        write(doc, 'Journal of Fasteners', 72, 48, 9);
        line(doc, 72, 60, 523, 0.5);
        columnLines('West: ').forEach((value, index) => write(doc, value, 72, 80 + index * 14, 9.5));
        columnLines('East: ').forEach((value, index) => write(doc, value, 310, 80 + index * 14, 9.5));
        write(doc, 'Table 3 Fastener sizes', 72, 210, 10);
        line(doc, 72, 226, 523, 0.5);
        write(doc, 'Item', 78, 232);
        write(doc, 'Width', 300, 232);
        line(doc, 72, 247, 523, 0.5);
        [
          ['Bolt', '12 mm'],
          ['Nut', '10 mm'],
          ['Washer', '16 mm'],
        ].forEach((row, index) => row.forEach((value, column) => write(doc, value, [78, 300][column]!, 253 + index * 16)));
        line(doc, 72, 302, 523, 0.5);
      }),
    );
    const table = page!.blocks.find((block): block is Table => block.kind === 'table')!;
    expect(text(table.caption)).toBe('Table 3 Fastener sizes');
    expect(shape(table).map((row) => row.map(([cell]) => cell))).toEqual([
      ['Item', 'Width'],
      ['Bolt', '12 mm'],
      ['Nut', '10 mm'],
      ['Washer', '16 mm'],
    ]);
    const prose = paragraphs(page!.blocks);
    expect(prose.find((value) => value.startsWith('West: '))).toContain(columnLines('').slice(1).join(' '));
    expect(prose.find((value) => value.startsWith('East: '))).toContain(columnLines('').slice(1).join(' '));
  });
});

/** A line chart drawn with paths: axes with ticks, a data line, round markers, labels, a caption under it. */
function chart(doc: Doc) {
  doc.font('Helvetica-Bold').fontSize(18).text('Rainfall survey', 72, 60, { lineBreak: false });
  write(doc, 'The stations recorded rain on most days of the three years.', 72, 100, 11);
  write(doc, 'The chart below gives the yearly totals for the valley.', 72, 114, 11);
  doc.lineWidth(1).moveTo(120, 160).lineTo(120, 360).lineTo(420, 360).stroke();
  for (const [index, label] of ['0', '100', '200'].entries()) {
    const y = 360 - index * 90;
    line(doc, 115, y, 120, 1);
    write(doc, label, 92, y - 4, 8);
  }
  const points: [number, number][] = [
    [170, 300],
    [270, 220],
    [370, 250],
  ];
  doc
    .lineWidth(1.5)
    .strokeColor('#1060c0')
    .moveTo(...points[0]!)
    .lineTo(...points[1]!)
    .lineTo(...points[2]!)
    .stroke()
    .strokeColor('black');
  for (const [x, y] of points) doc.circle(x, y, 3).fillColor('#1060c0').fill();
  doc.fillColor('black');
  for (const [index, year] of ['2019', '2020', '2021'].entries()) write(doc, year, 160 + index * 100, 366, 8);
  write(doc, 'Rain (mm)', 130, 150, 8);
  write(doc, 'Figure 3: Yearly rainfall in the valley', 120, 392, 10);
  write(doc, 'Rain fell most in the second year, and least in the first.', 72, 430, 11);
  write(doc, 'The third year came close to the long-term mean.', 72, 444, 11);
}

/**
 * Everything drawn on a text page that is no figure: a page frame, rows
 * shaded behind short text, a list with drawn bullets and underlined items,
 * a rounded callout around a short remark, rules.
 */
function decoys(doc: Doc) {
  doc.lineWidth(1).rect(20, 20, 555, 802).stroke();
  line(doc, 72, 60, 523, 0.5);
  write(doc, 'Station notes', 72, 70, 16, 'Helvetica-Bold');
  for (const [index, value] of ['Gauge A: clean', 'Gauge B: clean', 'Gauge C: blocked'].entries()) {
    doc
      .rect(66, 98 + index * 16, 460, 16)
      .fillColor(index % 2 ? '#e8eef8' : '#d0dcf0')
      .fill()
      .fillColor('black');
    write(doc, value, 72, 101 + index * 16, 11);
  }
  for (let index = 0; index < 5; index++) {
    doc.circle(78, 204 + index * 12, 2.5).fill();
    doc
      .font('Helvetica')
      .fontSize(10)
      .text(`Checklist item ${index + 1}: inspect the funnel`, 88, 199 + index * 12, { lineBreak: false, underline: true });
  }
  doc.lineWidth(1).roundedRect(66, 280, 460, 48, 8).stroke();
  write(doc, 'Remark: gauges cleaned weekly.', 76, 290, 11);
  write(doc, 'See the handbook.', 76, 306, 11);
  line(doc, 72, 400, 523, 0.5);
  write(doc, 'The survey ends with this paragraph after the separator rule.', 72, 410, 11);
}

describe('grids ruled by their columns only', () => {
  /** A frame, a rule under the header, a rule between columns, and no rule between the body's rows. */
  function columnGrid(doc: Doc, top: number, rows: string[][][], columns: number[]) {
    const right = 520;
    const cellTop = top + 20;
    doc.font('Helvetica-Bold').fontSize(9);
    ['Product', 'Time', 'Method'].forEach((head, column) => doc.text(head, columns[column]! + 4, top + 6, { lineBreak: false }));
    let y = cellTop + 5;
    for (const row of rows) {
      row.forEach((cell, column) => cell.forEach((value, index) => write(doc, value, columns[column]! + 4, y + index * 11, 9)));
      y += Math.max(...row.map((cell) => cell.length)) * 11 + 8;
    }
    const bottom = y;
    doc
      .lineWidth(0.6)
      .rect(columns[0]!, top, right - columns[0]!, bottom - top)
      .stroke();
    line(doc, columns[0]!, cellTop, right, 0.6);
    for (const x of columns.slice(1)) doc.moveTo(x, top).lineTo(x, bottom).stroke();
  }

  it("parts the body's rows where a column of one-line cells (a time) starts each row beside cells of several lines", async () => {
    const anchored = [
      [['25.9% Tebuconazole', 'water-based', '(emulsion)'], ['24'], ['Soak the seed for a day,', 'then sprout it.']],
      [['50% Benomyl', 'wettable powder'], ['4-12'], ['Sprout the seed first,', 'soak it in the mixture,', 'stir it now and then.']],
      [['40% Thiram'], ['6'], ['Soak the sprouted seed.']],
    ];
    const [page] = await convert(
      await drawPdf((doc) => {
        columnGrid(doc, 80, anchored, [72, 220, 280]);
      }),
    );
    const tables = page!.blocks.filter((block): block is Table => block.kind === 'table');
    const body = (table: Table) => table.rows.slice(1).map((row) => row.map((cell) => text(cell.content).replace(/\s+/g, ' ').trim()));
    expect(tables.map(body)).toEqual([anchored.map((row) => row.map((cell) => cell.join(' ')))]);
  });
});

describe('figures drawn with vector paths', () => {
  it('makes a chart drawn with paths one figure, rendered to a picture, needing alt, with its caption and its labels kept inside it', async () => {
    const [page] = await convert(await drawPdf(chart));
    const kinds = page!.blocks.map((block) => block.kind);
    expect(kinds).toEqual(['heading', 'paragraph', 'figure', 'paragraph']);
    const figure = page!.blocks[2] as Figure;
    expect(figure).toMatchObject({ needsAlt: true, decorative: false });
    expect(figure.alt).toBeUndefined();
    expect(figure.image?.mime).toBe('image/png');
    expect([...Buffer.from(figure.image!.base64, 'base64').subarray(0, 4)]).toEqual([0x89, 0x50, 0x4e, 0x47]);
    // the region (about 330 × 250 points with its labels) at 150 dpi
    expect(figure.image!.width).toBeGreaterThan(600);
    expect(figure.image!.width).toBeLessThan(800);
    expect(figure.image!.width).toBeGreaterThan(figure.image!.height);
    expect(text(figure.caption)).toBe('Figure 3: Yearly rainfall in the valley');
    for (const label of ['Rain (mm)', '200', '2019', '2021']) expect(figure.text).toContain(label);
    // the labels are no longer loose words between the paragraphs
    expect(paragraphs(page!.blocks).join(' ')).not.toMatch(/2019|Rain \(mm\)|Figure 3/);
    expect(paragraphs(page!.blocks)[1]).toMatch(/^Rain fell most in the second year/);
    expect(page!.reasons).toContain('figure');
    expect(page!.warnings.join(' ')).toMatch(/1 image\(s\) need alt text/);
  });

  it('renders a chart on a landscape page turned by /Rotate as the page shows it, and keeps its caption', async () => {
    // the chart's page drawn turned a quarter onto a page that /Rotate 90 turns back: upright on the screen
    const portrait = await PDFDocument.load(await drawPdf(chart));
    const turned = await PDFDocument.create();
    const [drawn] = await turned.embedPdf(portrait, [0]);
    const { width, height } = portrait.getPage(0).getSize();
    const page = turned.addPage([height, width]);
    page.drawPage(drawn!, { x: height, y: 0, rotate: degrees(90) });
    page.setRotation(degrees(90));
    const [converted] = await convert(await turned.save());
    const figure = converted!.blocks.find((block): block is Figure => block.kind === 'figure');
    expect(text(figure?.caption)).toBe('Figure 3: Yearly rainfall in the valley');
    // upright as shown: wider than tall, like the chart itself (sideways it would be taller than wide)
    expect(figure?.image?.width).toBeGreaterThan(figure!.image!.height);
    expect(paragraphs(converted!.blocks)[0]).toMatch(/^The stations recorded rain/);
  });

  it('finds no figure in a page frame, shaded rows, a list with drawn bullets and underlines, a rounded callout or rules, and leaves their text in the flow', async () => {
    const [page] = await convert(await drawPdf(decoys));
    expect(page!.blocks.filter((block) => block.kind === 'figure')).toEqual([]);
    const all = page!.blocks
      .map((block) =>
        block.kind === 'list' ? block.items.map((item) => text(item.content)).join(' ') : 'content' in block ? text(block.content as Inline[]) : '',
      )
      .join(' ');
    for (const words of ['Gauge C: blocked', 'Checklist item 5', 'See the handbook.', 'after the separator rule']) expect(all).toContain(words);
  });

  it('renders the words drawn in the figure inside its HTML figure, folded away, and the picture with a short alt from its caption', async () => {
    const bytes = await drawPdf(chart);
    const pages = await convert(bytes);
    const { html } = renderHtml({ meta: await inspectDocument(bytes.slice(), 'chart.pdf'), pages });
    const figure = /<figure>[\s\S]*?<\/figure>/.exec(html)?.[0] ?? '';
    expect(figure).toMatch(/<img src="data:image\/png;base64,[^"]+" alt="Yearly rainfall in the valley"/);
    expect(figure).toMatch(/<details class="figure-text"><summary>Text in the figure<\/summary><p>[^<]*2019[^<]*<\/p><\/details>/);
    expect(figure).toContain('<figcaption>Figure 3: Yearly rainfall in the valley</figcaption>');
    // nothing of the chart is lost to a reader of the page's text
    expect(htmlText(html)).toContain('Rain (mm)');
  });
});

/** Body lines of a column: enough text at body size for the layout to see the column. */
function column(doc: Doc, x: number, lines: number, from = 80) {
  for (let index = 0; index < lines; index++)
    write(doc, `Body line ${index + 1} of the column sets the text size here.`.slice(0, 46), x, from + index * 14, 10);
}

describe('footnotes that go on in the next column or on the next page', () => {
  it('joins the unmarked lines at the foot of the right column to the note that ends the left one', async () => {
    const [page] = await convert(
      await drawPdf((doc) => {
        column(doc, 60, 30);
        column(doc, 310, 30);
        line(doc, 60, 700, 160, 0.4);
        write(doc, '1 The first note starts in the left column and', 60, 708, 8);
        write(doc, 'its second line still does not finish it', 60, 718, 8);
        line(doc, 310, 700, 410, 0.4);
        write(doc, 'but goes on at the foot of the right column.', 310, 708, 8);
      }),
    );
    const notes = page!.blocks.filter((block) => block.kind === 'footnote');
    expect(notes.map((note) => [note.label, text(note.content)])).toEqual([
      ['1', 'The first note starts in the left column and its second line still does not finish it but goes on at the foot of the right column.'],
    ]);
    expect(paragraphs(page!.blocks).join(' ')).not.toContain('goes on at the foot');
    expect(page!.reasons).toContain('multi-column');
  });

  const overflowing = () =>
    drawPdf(
      (doc) => {
        column(doc, 72, 40);
        line(doc, 72, 740, 200, 0.4);
        write(doc, '2 This note is long and runs over the foot of the', 72, 748, 8);
        write(doc, 'page, so that its last words are set on the', 72, 758, 8);
      },
      (doc) => {
        column(doc, 72, 40);
        line(doc, 72, 740, 200, 0.4);
        write(doc, 'next page, where it ends without a marker of its own.', 72, 748, 8);
        write(doc, '3 A second note that starts on the second page.', 72, 760, 8);
      },
    );

  it('marks the unmarked lines at the foot of the next page as a continued note, and joins them to the note the page before ends with', async () => {
    const bytes = await overflowing();
    const pages = await convert(bytes);
    const second = pages[1]!.blocks.filter((block) => block.kind === 'footnote');
    expect(second.map((note) => [note.label, note.continued ?? false, text(note.content)])).toEqual([
      ['', true, 'next page, where it ends without a marker of its own.'],
      ['3', false, 'A second note that starts on the second page.'],
    ]);
    const joined = { pages: joinContinuedFootnotes(pages) };
    const notes = joined.pages.map((page) => page.blocks.filter((block) => block.kind === 'footnote').map((note) => [note.label, text(note.content)]));
    expect(notes).toEqual([
      [
        [
          '2',
          'This note is long and runs over the foot of the page, so that its last words are set on the next page, where it ends without a marker of its own.',
        ],
      ],
      [['3', 'A second note that starts on the second page.']],
    ]);
    // the pages given are left as they were
    expect(pages[1]!.blocks.some((block) => block.kind === 'footnote' && block.continued)).toBe(true);
  });

  it('reads a continued note as a paragraph when the page before ends with no note', async () => {
    const bytes = await overflowing();
    const pages = await convert(bytes);
    const joined = { pages: joinContinuedFootnotes([pages[1]!]) };
    expect(joined.pages[0]!.blocks.filter((block) => block.kind === 'footnote').map((note) => note.label)).toEqual(['3']);
    expect(paragraphs(joined.pages[0]!.blocks)).toContain('next page, where it ends without a marker of its own.');
  });

  it('gives the joined note in the HTML of the whole document, through the engine and its workers', async () => {
    const bytes = await overflowing();
    const engine = createConversionEngine({ conversion: loadConfig({}).conversion, log: silentLog, poolSize: 1 });
    try {
      const pages = await engine.convertPages(bytes.slice(), { pages: [1, 2], backend: 'local' });
      const { html } = await engine.render({ meta: await engine.inspect(bytes.slice()), pages });
      const notes = [...html.matchAll(/<div class="footnote" role="doc-footnote"[^>]*>([\s\S]*?)<\/div>/g)].map((match) =>
        htmlText(match[1]!).replace(/\s+/g, ' ').trim(),
      );
      expect(notes).toHaveLength(2);
      expect(notes[0]).toMatch(/^2 This note is long .* set on the next page, where it ends without a marker of its own\.$/);
      expect(notes[1]).toMatch(/^3 A second note/);
    } finally {
      await engine.close();
    }
  });
});
