import PDFDocument from 'pdfkit';
import { describe, expect, it } from 'vitest';
import { convertLocalPage, inspectDocument, openPdf } from '../../server/conversion/backends/local/index.ts';
import type { Block, Inline, PageResult } from '../../server/conversion/model.ts';

/**
 * What an untagged page draws, read by the local backend: booktabs-style
 * tables (horizontal rules only). Every PDF is drawn here with pdfkit at
 * exact positions (top-left origin, y down).
 */

type Doc = InstanceType<typeof PDFDocument>;
type Table = Extract<Block, { kind: 'table' }>;

async function drawPdf(...pages: ((doc: Doc) => void)[]): Promise<Uint8Array> {
  const doc = new PDFDocument({ size: 'A4', margin: 0, autoFirstPage: false });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve) => doc.on('end', () => resolve()));
  for (const draw of pages) {
    doc.addPage({ size: 'A4', margin: 0 });
    draw(doc);
  }
  doc.end();
  await done;
  return new Uint8Array(Buffer.concat(chunks));
}

async function convert(bytes: Uint8Array): Promise<PageResult[]> {
  const meta = await inspectDocument(bytes.slice(), 'drawn.pdf');
  const doc = await openPdf(bytes.slice());
  try {
    const results: PageResult[] = [];
    for (let page = 1; page <= meta.pageCount; page++) results.push(await convertLocalPage(doc, page, { docLang: meta.lang, tagged: meta.tagged, ocr: false }));
    return results;
  } finally {
    await doc.loadingTask.destroy();
  }
}

const text = (list: Inline[] | undefined): string => (list ?? []).map((item) => ('children' in item ? text(item.children) : 'text' in item ? item.text : item.kind === 'footnoteRef' ? item.label : ' ')).join('');
const paragraphs = (blocks: Block[]) => blocks.flatMap((block) => (block.kind === 'paragraph' ? [text(block.content)] : []));
const line = (doc: Doc, x1: number, y: number, x2: number, width: number) => doc.lineWidth(width).moveTo(x1, y).lineTo(x2, y).stroke();
const write = (doc: Doc, value: string, x: number, y: number, size = 10, font = 'Helvetica') => doc.font(font).fontSize(size).text(value, x, y, { lineBreak: false });

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
  [['Bolt', '12 mm', '40 mm'], ['Nut', '10 mm', '8 mm'], ['Washer', '16 mm', '2 mm']].forEach((row, index) => row.forEach((value, column) => write(doc, value, [72, 200, 300][column]!, 207 + index * 16)));
  line(doc, 66, 256, 400, 0.8);
  write(doc, 'The sizes above are nominal and measured at room temperature.', 72, 280, 11);
}

const shape = (table: Table) => table.rows.map((row) => row.map((cell) => [text(cell.content), cell.header ? (cell.scope ?? 'th') : 'td', cell.rowSpan ?? 1, cell.colSpan ?? 1]));

describe('booktabs-style tables (horizontal rules only)', () => {
  it('reads the table between its top and bottom rules: header rows above the mid rule, a spanning header from its cmidrule, "Item" over both header rows', async () => {
    const [page] = await convert(await drawPdf((doc) => booktabs(doc, { cmidrule: true })));
    const tables = page!.blocks.filter((block): block is Table => block.kind === 'table');
    expect(tables).toHaveLength(1);
    const table = tables[0]!;
    expect(table.uncertain).toBeUndefined();
    expect(text(table.caption)).toBe('Table 2: Fastener sizes');
    expect(shape(table)).toEqual([
      [['Item', 'col', 2, 1], ['Measurements', 'colgroup', 1, 2]],
      [['Width', 'col', 1, 1], ['Height', 'col', 1, 1]],
      [['Bolt', 'td', 1, 1], ['12 mm', 'td', 1, 1], ['40 mm', 'td', 1, 1]],
      [['Nut', 'td', 1, 1], ['10 mm', 'td', 1, 1], ['8 mm', 'td', 1, 1]],
      [['Washer', 'td', 1, 1], ['16 mm', 'td', 1, 1], ['2 mm', 'td', 1, 1]],
    ]);
    // the table's text is not repeated around it, and the prose keeps its place
    const kinds = page!.blocks.map((block) => (block.kind === 'paragraph' ? text(block.content) : block.kind));
    expect(kinds).toEqual([PROSE.join(' '), 'table', 'The sizes above are nominal and measured at room temperature.']);
  });

  it("without a cmidrule, takes a header's span from the columns its own text covers", async () => {
    const [page] = await convert(await drawPdf((doc) => booktabs(doc, { cmidrule: false, header: 'Measurements in millimetres' })));
    const table = page!.blocks.find((block): block is Table => block.kind === 'table')!;
    expect(shape(table).slice(0, 2)).toEqual([
      [['Item', 'col', 2, 1], ['Measurements in millimetres', 'colgroup', 1, 2]],
      [['Width', 'col', 1, 1], ['Height', 'col', 1, 1]],
    ]);
  });

  it('does not take prose set between two rules of the same width (a pull quote, a page\'s head and foot rules) for a table', async () => {
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
});
