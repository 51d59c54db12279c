import { readFileSync } from 'node:fs';
import path from 'node:path';
import PDFDocument from 'pdfkit';
import { describe, expect, it } from 'vitest';
import { convertLocalPage } from '../../server/conversion/backends/local/convert-page.ts';
import { inspectDocument } from '../../server/conversion/backends/local/document-meta.ts';
import { openPdf } from '../../server/conversion/backends/local/pdf.ts';
import { formulaToTex, isFormulaLine, looksLikeMath } from '../../server/conversion/backends/local/tex.ts';
import type { Block, Inline, PageResult } from '../../server/conversion/model.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { drawPdf } from '../helpers/local-pages.ts';

/** Footnotes, formula TeX and ruled tables from the local backend, on corpus pages and PDFs drawn here. */

async function convertBytes(bytes: Uint8Array, name: string, pages?: number[]): Promise<PageResult[]> {
  const meta = await inspectDocument(bytes, name);
  const doc = await openPdf(bytes);
  try {
    const results: PageResult[] = [];
    for (const page of pages ?? Array.from({ length: meta.pageCount }, (_, index) => index + 1)) {
      results.push(await convertLocalPage(doc, page, { docLang: meta.lang, tagged: meta.tagged, ocr: false }));
    }
    return results;
  } finally {
    await doc.loadingTask.destroy();
  }
}

const convert = (file: string, pages?: number[]) => convertBytes(new Uint8Array(readFileSync(path.join(CORPUS_DIR, file))), file, pages);

const text = (list: Inline[] | undefined): string =>
  (list ?? []).map((item) => ('children' in item ? text(item.children) : item.kind === 'footnoteRef' ? item.label : 'text' in item ? item.text : ' ')).join('');

/** Every footnote reference in a page's blocks, wherever it sits (paragraph, list item, table cell). */
function refsOf(blocks: Block[]): { id: string; label: string; before: string }[] {
  const found: { id: string; label: string; before: string }[] = [];
  const walk = (value: unknown) => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        if (item && typeof item === 'object' && (item as Inline).kind === 'footnoteRef') {
          const ref = item as Extract<Inline, { kind: 'footnoteRef' }>;
          found.push({ id: ref.id, label: ref.label, before: text(value.slice(0, index) as Inline[]) });
        } else walk(item);
      });
    } else if (value && typeof value === 'object') for (const child of Object.values(value)) walk(child);
  };
  walk(blocks);
  return found;
}

const footnotesOf = (blocks: Block[]) => blocks.filter((block): block is Extract<Block, { kind: 'footnote' }> => block.kind === 'footnote');

describe('footnotes on untagged pages', () => {
  it('turns the small "1)", "2)", "*" notes at the foot of korean-report-4pages.pdf p.1 into footnotes linked from their raised markers', async () => {
    const [page] = await convert('korean-report-4pages.pdf', [1]);
    const notes = footnotesOf(page!.blocks);
    expect(notes.map((note) => note.label)).toEqual(['1', '2', '*']);
    expect(text(notes[0]!.content)).toMatch(/^손해보험의 표준약관 규정에 따르면.*상해로 정의함$/);
    // "1) 한국표준…" inside note 2 is a list within that note, not a second note 1
    expect(text(notes[1]!.content)).toContain('1) 한국표준질병');
    const refs = refsOf(page!.blocks);
    expect(refs.map((ref) => ref.id)).toEqual([notes[0]!.id, notes[1]!.id]);
    expect(refs[0]!.before).toMatch(/상해$/);
    // the note text is no longer in any paragraph
    const paragraphs = page!.blocks.filter((block) => block.kind === 'paragraph').map((block) => text(block.kind === 'paragraph' ? block.content : []));
    expect(paragraphs.some((line) => line.includes('손해보험의 표준약관'))).toBe(false);
  });

  it('links every marker of korean-report-4pages.pdf p.2, including those in list items and after 」', async () => {
    const [page] = await convert('korean-report-4pages.pdf', [2]);
    const notes = footnotesOf(page!.blocks);
    expect(notes.map((note) => note.label)).toEqual(['3', '4', '5', '6', '7']);
    expect(new Set(refsOf(page!.blocks).map((ref) => ref.label))).toEqual(new Set(['3', '4', '5', '6', '7']));
  });

  it('keeps the imprint below the last note of korean-report-4pages.pdf p.4 out of that note', async () => {
    const [page] = await convert('korean-report-4pages.pdf', [4]);
    const [note] = footnotesOf(page!.blocks);
    expect(note!.label).toBe('10');
    expect(text(note!.content)).toMatch(/보험을 말함$/);
  });

  it('reads the raised "1" of geotopo-117-pages.pdf p.12 as a reference to the note at the foot of the page', async () => {
    const [page] = await convert('geotopo-117-pages.pdf', [12]);
    const [note] = footnotesOf(page!.blocks);
    expect(note).toMatchObject({ label: '1' });
    expect(text(note!.content)).toBe('Diese Metrik wird auch „französische Eisenbahnmetrik“ genannt.');
    expect(refsOf(page!.blocks)).toEqual([{ id: note!.id, label: '1', before: expect.stringMatching(/SNCF-Metrik$/) }]);
  });

  it('does not take exponents for references: R² on geotopo-117-pages.pdf p.114 stays text', async () => {
    const [page] = await convert('geotopo-117-pages.pdf', [114]);
    const refs = refsOf(page!.blocks);
    expect(footnotesOf(page!.blocks).map((note) => note.label)).toEqual(['2']);
    expect(refs.every((ref) => !/(^|\s)R$/.test(ref.before))).toBe(true);
  });
});

describe('footnotes on tagged pages', () => {
  it('makes the /Note of verapdf-ua1-7.1-list.pdf a footnote labelled by its Lbl, referenced from the list item link "1"', async () => {
    const [page] = await convert('verapdf-ua1-7.1-list.pdf', [1]);
    const notes = footnotesOf(page!.blocks);
    expect(notes).toHaveLength(1);
    expect(notes[0]!.label).toBe('1');
    expect(text(notes[0]!.content)).toMatch(/^Artifacts may also be used/);
    const list = page!.blocks.find((block) => block.kind === 'list');
    expect(refsOf(list ? [list] : [])).toEqual([{ id: notes[0]!.id, label: '1', before: 'Artifacts' }]);
  });

  it('keeps the paragraph around a LaTeX footnote whole, puts the note after it, and leaves the TOC numbers alone (latex-tagged-two-column.pdf p.1)', async () => {
    const [page] = await convert('latex-tagged-two-column.pdf', [1]);
    const notes = footnotesOf(page!.blocks);
    expect(notes.map((note) => note.label)).toEqual(['1']);
    const refs = refsOf(page!.blocks);
    expect(refs).toHaveLength(1);
    expect(refs[0]!.before).toMatch(/heading rows of tables\.$/);
    const index = page!.blocks.indexOf(notes[0]!);
    const before = page!.blocks[index - 1]!;
    expect(before.kind === 'paragraph' && text(before.content)).toMatch(/heading rows of tables\.1 The document just uses/);
  });

  it('reads a LaTeX float wrapped in /Note (latex-tagged-two-column.pdf p.2) as its figure, not as a footnote', async () => {
    const [page] = await convert('latex-tagged-two-column.pdf', [2]);
    expect(page!.blocks.some((block) => block.kind === 'figure')).toBe(true);
    expect(footnotesOf(page!.blocks).every((note) => !/Larger image/.test(text(note.content)))).toBe(true);
  });
});

describe('TeX from the text of a formula', () => {
  it('reads a display line whose letters are all in a math font as a formula, its equation number as its \\tag', async () => {
    const draw = (letters: string) =>
      drawPdf((doc) => {
        doc.font('Times-Roman').fontSize(11).text('The energy of a body at rest is given by the famous relation below, which we use throughout.', 72, 100, {
          width: 450,
        });
        doc.font(letters).text('E = mc', 260, 140, { lineBreak: false });
        doc.fontSize(8).text('2', 293, 137, { lineBreak: false });
        doc.font('Times-Roman').fontSize(11).text('(1.2)', 495, 140, { lineBreak: false });
        doc.text('where m is the mass and c the speed of light in vacuum, as measured in any inertial frame.', 72, 175, { width: 450 });
      });
    const [italic] = await convertBytes(await draw('Times-Italic'), 'italic.pdf');
    const formula = italic!.blocks.find((block) => block.kind === 'formula');
    expect(formula).toMatchObject({ text: 'E = mc2 (1.2)', tex: 'E=mc^{2}\\tag{1.2}', tag: '1.2', display: true });
    // the number is the formula's, not a paragraph of its own
    expect(italic!.blocks.filter((block) => block.kind === 'paragraph').map((block) => text('content' in block ? block.content : []))).not.toContain('(1.2)');
    // a formula over several lines (a fraction over its bar) takes its number too
    const fraction = await drawPdf((doc) => {
      doc.font('Times-Roman').fontSize(11).text('The ratio of the two lengths follows from the similar triangles drawn above it.', 72, 100, { width: 450 });
      doc.font('Times-Italic').text('x =', 250, 150, { lineBreak: false });
      doc.text('a', 276, 141, { lineBreak: false });
      doc.text('b', 276, 157, { lineBreak: false });
      doc.moveTo(274, 154.5).lineTo(284, 154.5).lineWidth(0.4).stroke();
      doc.font('Times-Roman').text('(3)', 500, 150, { lineBreak: false });
      doc.text('which is the value we keep for the rest of this short note about the construction.', 72, 185, { width: 450 });
    });
    const [divided] = await convertBytes(fraction, 'fraction.pdf');
    expect(divided!.blocks.find((block) => block.kind === 'formula')).toMatchObject({ tex: 'x=\\frac{a}{b}\\tag{3}', tag: '3' });
    expect(divided!.blocks.filter((block) => block.kind === 'paragraph').map((block) => text('content' in block ? block.content : []))).not.toContain('(3)');
    // set upright, "mc" may be a word: the line stays text
    const [upright] = await convertBytes(await draw('Times-Roman'), 'upright.pdf');
    expect(upright!.blocks.some((block) => block.kind === 'formula')).toBe(false);
  });

  it('maps Greek letters, operators, relations, Unicode scripts, roots and plain fractions', () => {
    expect(formulaToTex('α + β ≤ γ')).toBe('\\alpha + \\beta \\leq \\gamma');
    expect(formulaToTex('x₁ + x₂ = 1/2')).toBe('x_{1} + x_{2} = \\frac{1}{2}');
    expect(formulaToTex('√(a² + b²) ≠ ∞')).toBe('\\sqrt{a^{2} + b^{2}} \\neq \\infty');
    expect(formulaToTex('∑ xᵢ ∈ ℝ')).toBe('\\sum x_{i} \\in \\mathbb{R}');
    expect(formulaToTex('(a+b)/c → 0')).toBe('\\frac{a+b}{c} \\to 0');
    expect(formulaToTex('sin(θ) ≥ 0')).toBe('\\sin (\\theta) \\geq 0');
  });

  it('takes scripts from the layout only where they touch their base', () => {
    expect(formulaToTex([{ text: 'e' }, { text: 'iπ', script: 'sup' }, { text: ' = −1' }])).toBe('e^{i\\pi} = -1');
    // a smaller glyph after a space is not a script of what precedes it
    expect(formulaToTex([{ text: 'α' }, { text: '1', script: 'sub' }, { text: ' ≤ ' }, { text: 'α', script: 'sup' }, { text: '2', script: 'sub' }])).toBe(
      '\\alpha_{1} \\leq \\alpha_{2}',
    );
  });

  it('repairs the pdfTeX pieces of ↦, long arrows and struck relations', () => {
    expect(formulaToTex([{ text: 'x ' }, { text: '7' }, { text: '→ y' }])).toBe('x \\mapsto y');
    expect(formulaToTex('m −−−−→ ∞')).toBe('m \\longrightarrow \\infty');
    // the slash over = or ∈ extracts as "6"; a 6 of the formula is a script or stands apart from the relation
    expect(formulaToTex('A∩B 6=∅')).toBe('A\\cap B \\neq \\emptyset');
    expect(formulaToTex('x 6∈ A')).toBe('x \\notin A');
    expect(formulaToTex('a6 = 1')).toBe('a6 = 1');
  });

  it('gives no TeX for prose, for other scripts, or for text it cannot read for certain', () => {
    expect(looksLikeMath('Area of a Triangle')).toBe(false);
    expect(formulaToTex('Area of a Triangle')).toBeUndefined();
    expect(formulaToTex('The value is larger than the other = obviously')).toBeUndefined();
    expect(formulaToTex('코로나 = 1')).toBeUndefined();
    expect(formulaToTex('x_1 = 2')).toBeUndefined();
    expect(isFormulaLine('Sei X = R und d die Metrik')).toBe(false);
    expect(isFormulaLine('d(x, y) > 0 ⇒ ∃ε > 0')).toBe(true);
  });

  it('keeps the alt text of verapdf-ua1-7.7-formula.pdf ("Area of a Triangle") as text without TeX', async () => {
    const [page] = await convert('verapdf-ua1-7.7-formula.pdf', [1]);
    const formula = page!.blocks.find((block) => block.kind === 'formula');
    expect(formula).toMatchObject({ text: 'Area of a Triangle' });
    expect(formula && 'tex' in formula ? formula.tex : undefined).toBeUndefined();
  });

  it('makes the display formulas of geotopo-117-pages.pdf p.12 formula blocks with TeX and their text, and leaves its prose alone', async () => {
    const [page] = await convert('geotopo-117-pages.pdf', [12]);
    const formulas = page!.blocks.filter((block): block is Extract<Block, { kind: 'formula' }> => block.kind === 'formula');
    const separation = formulas.find((formula) => formula.text.startsWith('d(x, y) > 0'));
    expect(separation).toMatchObject({ display: true, text: 'd(x, y) > 0 ⇒ ∃ε > 0 : Bε(x) ∩ Bε(y) = ∅' });
    // read from the glyphs: the same formula, without the text's spaces
    // the balls are Fraktur B's (EUFM10), which extract as plain B's
    expect(separation!.tex).toBe('d(x,y)>0\\Rightarrow\\exists\\varepsilon>0:\\mathfrak{B}_{\\varepsilon}(x)\\cap\\mathfrak{B}_{\\varepsilon}(y)=\\emptyset');
    // every formula block carries TeX, and no formula holds a word of running text
    expect(formulas.every((formula) => typeof formula.tex === 'string' && !/\p{L}{3,}/u.test(formula.text.replace(/\b(sin|cos|log|lim)\b/g, '')))).toBe(true);
    expect(page!.blocks.some((block) => block.kind === 'paragraph' && /französische|Metrik/.test(text(block.content)))).toBe(true);
  });
});

/**
 * A ruled 3×4 table drawn with pdfkit: "Item" spans two header rows (no rule
 * under it), "Measurements" spans two columns (no rule between them), a
 * heavier rule may close the header, one rule is a thin filled rectangle.
 */
async function ruledTablePdf(options: { boldHeader: boolean; heavyRule: boolean; irregular?: boolean }): Promise<Uint8Array> {
  const doc = new PDFDocument({ size: 'A4', margin: 50 });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve) => doc.on('end', () => resolve()));
  doc.font('Helvetica').fontSize(11).text('Table 1: Fastener sizes', 60, 80);
  const xs = [60, 200, 320, 440];
  const ys = [100, 125, 150, 175, 200];
  const line = (x1: number, y1: number, x2: number, y2: number, width = 0.5) => doc.lineWidth(width).moveTo(x1, y1).lineTo(x2, y2).stroke();
  line(xs[0]!, ys[0]!, xs[3]!, ys[0]!);
  line(xs[1]!, ys[1]!, xs[3]!, ys[1]!);
  line(xs[0]!, ys[2]!, xs[3]!, ys[2]!, options.heavyRule ? 1.5 : 0.5);
  doc.rect(xs[0]!, ys[3]! - 0.25, xs[3]! - xs[0]!, 0.5).fill();
  line(xs[0]!, ys[4]!, xs[3]!, ys[4]!);
  for (const x of [xs[0]!, xs[3]!]) line(x, ys[0]!, x, ys[4]!);
  if (options.irregular) {
    // no rule between "Item" and "Width": the merged area is an L, which no table cell can be
    line(xs[1]!, ys[0]!, xs[1]!, ys[1]!);
    line(xs[1]!, ys[2]!, xs[1]!, ys[4]!);
  } else line(xs[1]!, ys[0]!, xs[1]!, ys[4]!);
  line(xs[2]!, ys[1]!, xs[2]!, ys[4]!);
  const cell = (value: string, column: number, row: number, header = false) =>
    doc
      .font(header && options.boldHeader ? 'Helvetica-Bold' : 'Helvetica')
      .fontSize(10)
      .text(value, xs[column]! + 6, ys[row]! + 8, { lineBreak: false });
  cell('Item', 0, 0, true);
  cell('Measurements', 1, 0, true);
  cell('Width', 1, 1, true);
  cell('Height', 2, 1, true);
  for (const [row, values] of [
    [2, ['Bolt', '12 mm', '40 mm']],
    [3, ['Nut', '10 mm', '8 mm']],
  ] as const)
    values.forEach((value, column) => cell(value, column, row));
  doc.font('Helvetica').fontSize(11).text('The sizes above are nominal and measured at room temperature.', 60, 230);
  doc.end();
  await done;
  return new Uint8Array(Buffer.concat(chunks));
}

describe('tables from ruling lines', () => {
  const expectFastenerTable = (blocks: Block[]) => {
    const tables = blocks.filter((block): block is Extract<Block, { kind: 'table' }> => block.kind === 'table');
    expect(tables).toHaveLength(1);
    const table = tables[0]!;
    expect(table.uncertain).toBeUndefined();
    expect(text(table.caption)).toBe('Table 1: Fastener sizes');
    const shape = table.rows.map((row) =>
      row.map((cell) => ({ text: text(cell.content), header: cell.header, scope: cell.scope, rowSpan: cell.rowSpan, colSpan: cell.colSpan })),
    );
    expect(shape).toEqual([
      [
        { text: 'Item', header: true, scope: 'col', rowSpan: 2, colSpan: undefined },
        { text: 'Measurements', header: true, scope: 'colgroup', rowSpan: undefined, colSpan: 2 },
      ],
      [
        { text: 'Width', header: true, scope: 'col', rowSpan: undefined, colSpan: undefined },
        { text: 'Height', header: true, scope: 'col', rowSpan: undefined, colSpan: undefined },
      ],
      ['Bolt', '12 mm', '40 mm'].map((value) => ({ text: value, header: false, scope: undefined, rowSpan: undefined, colSpan: undefined })),
      ['Nut', '10 mm', '8 mm'].map((value) => ({ text: value, header: false, scope: undefined, rowSpan: undefined, colSpan: undefined })),
    ]);
    // the table's text is not repeated as paragraphs, and the text after it follows it
    const index = blocks.indexOf(table);
    expect(blocks.slice(index + 1).map((block) => (block.kind === 'paragraph' ? text(block.content) : block.kind))).toEqual([
      'The sizes above are nominal and measured at room temperature.',
    ]);
    expect(blocks.slice(0, index)).toEqual([]);
  };

  it('reads a ruled table with a bold header: a cell spanning two header rows, one spanning two columns', async () => {
    const [page] = await convertBytes(await ruledTablePdf({ boldHeader: true, heavyRule: false }), 'ruled.pdf');
    expectFastenerTable(page!.blocks);
  });

  it('finds the header rows from the heavier rule under them when the header is not bold', async () => {
    const [page] = await convertBytes(await ruledTablePdf({ boldHeader: false, heavyRule: true }), 'ruled.pdf');
    expectFastenerTable(page!.blocks);
  });

  it('marks the table uncertain when the grid is irregular (a merged area that is not a rectangle)', async () => {
    const [page] = await convertBytes(await ruledTablePdf({ boldHeader: true, heavyRule: true, irregular: true }), 'ruled.pdf');
    const table = page!.blocks.find((block) => block.kind === 'table');
    expect(table).toMatchObject({ kind: 'table', uncertain: true });
    expect(page!.warnings.some((warning) => /table\(s\) inferred from layout/.test(warning))).toBe(true);
  });

  it('takes a nested header (a cell over two columns, one spanning down beside their sub-headers) as the header without bold or a heavier rule', async () => {
    const [page] = await convertBytes(await ruledTablePdf({ boldHeader: false, heavyRule: false }), 'ruled.pdf');
    const table = page!.blocks.find((block) => block.kind === 'table');
    expect(table?.kind === 'table' && table.rows.map((row) => row.every((cell) => cell.header))).toEqual([true, true, false, false]);
    expect(table?.kind === 'table' && table.rows[0]!.map((cell) => [text(cell.content), cell.rowSpan, cell.colSpan])).toEqual([
      ['Item', 2, undefined],
      ['Measurements', undefined, 2],
    ]);
  });
});
