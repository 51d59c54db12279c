import { PDFDocument, StandardFonts } from 'pdf-lib';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { describe, expect, it } from 'vitest';
import { inspectDocument } from '../../server/conversion/backends/local/document-meta.ts';
import { atDrawnSizes, isUsableTitle, largestText } from '../../server/conversion/backends/local/title.ts';
import { renderHtml } from '../../server/conversion/render/html.ts';
import { renderTaggedPdf } from '../../server/conversion/render/pdf.ts';
import { convertLocally, inlineText } from '../helpers/local-pages.ts';

/** The document title: metadata when it names the document, else the first page's largest text, never the file name first. */

async function report(title?: string): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  if (title !== undefined) pdf.setTitle(title);
  const page = pdf.addPage([612, 792]);
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  page.drawText('3', { x: 560, y: 760, size: 9, font });
  page.drawText('Water Quality of the', { x: 72, y: 700, size: 24, font: bold });
  page.drawText('Lower Rhine Basin', { x: 72, y: 672, size: 24, font: bold });
  page.drawText('Annual report of the monitoring network', { x: 72, y: 640, size: 14, font });
  for (let line = 0; line < 12; line++) {
    page.drawText('Measurements were taken at every station once a month through the year.', { x: 72, y: 600 - line * 14, size: 11, font });
  }
  return pdf.save();
}

/** An A4 page in Times: the lines given (text, x, baseline, size), then twenty body lines from `top` down. */
async function timesPage(lines: [string, number, number, number][], body: { text: string; x: number; top: number; size: number }): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const page = pdf.addPage([595, 842]);
  const font = await pdf.embedFont(StandardFonts.TimesRoman);
  for (const [text, x, y, size] of lines) page.drawText(text, { x, y, size, font });
  for (let line = 0; line < 20; line++) page.drawText(body.text, { x: body.x, y: body.top - line * body.size * 1.3, size: body.size, font });
  return pdf.save();
}

describe('document title', () => {
  it('takes the first page largest text when the metadata title is a word processor file name', async () => {
    const meta = await inspectDocument(await report('Microsoft Word - wq_2025_final.docx'), 'wq_2025_final.pdf');
    expect(meta.title).toBe('Water Quality of the Lower Rhine Basin');
  });

  it('keeps a metadata title that names the document', async () => {
    const meta = await inspectDocument(await report('Rhine water quality 2025'), 'report.pdf');
    expect(meta.title).toBe('Rhine water quality 2025');
  });

  it('falls back to the file name only when the page has no text larger than its body', async () => {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const page = pdf.addPage([612, 792]);
    page.drawText('Plain text only, every line the same size.', { x: 72, y: 700, size: 11, font });
    expect((await inspectDocument(await pdf.save(), 'notes-2025.pdf')).title).toBe('notes-2025');
  });

  it('judges text pdf.js reports smaller than the body by the room its letters take, and only that text', () => {
    const item = (text: string, y: number, size: number, width: number, font = 'body') => ({ text, x: 72, y, width, size, font, eol: false, artifact: false });
    const body = Array.from({ length: 8 }, (_, index) => item('Body text of the paper set at ten points in its column.', 600 - index * 12, 10, 250));
    // a font whose matrix misleads pdf.js: a 7 pt size for letters as wide as 16 pt ones
    const misleading = item('Reading the Columns of Printed Pages', 720, 7, 288, 'title');
    expect(largestText([misleading, ...body])).toBe('Reading the Columns of Printed Pages');
    // its second line, reported right, is the same size: one title of two lines
    expect(largestText([misleading, item('for Screen Readers', 700, 16, 140, 'title'), ...body])).toBe(
      'Reading the Columns of Printed Pages for Screen Readers',
    );
    // a wide face at the body's size is no title for being wide
    expect(largestText([item('Reading the Columns of Printed Pages', 720, 10, 288, 'title'), ...body])).toBeUndefined();
  });

  it('lays a title pdf.js reports far smaller than it is out at the size its font takes elsewhere on the page, and nothing else', () => {
    const item = (text: string, y: number, size: number, width: number, font = 'body') => ({ text, x: 72, y, width, size, font, eol: false, artifact: false });
    const body = Array.from({ length: 8 }, (_, index) => item('Body text of the paper set at ten points in its column.', 600 - index * 12, 10, 250));
    // the title's first line reported at 7 pt takes the room its second line, right at 16 pt, takes per letter at 16
    const misleading = item('Reading the Columns of Printed Pages', 720, 7, 288, 'title');
    const second = item('for Screen Readers', 700, 16, 151, 'title');
    // a face seen at one size only, however wide, has nothing to be compared with; a font's two sizes that take
    // about the room their sizes say stay as they are
    const wide = item('Table headings in a wide bold face', 660, 8, 200, 'wide');
    const [small, large] = [item('Authors of the paper and more', 640, 9, 110, 'names'), item('Affiliations set a little larger', 620, 12, 170, 'names')];
    // a Hangul character takes the room of two Latin ones: a Korean heading beside the same font's figures is no misreport
    const [hangul, figures] = [item('코로나 관련 보험 현황 문제점', 580, 12, 138, 'mixed'), item('2020.1.1 12345', 560, 9, 60, 'mixed')];
    const [title, secondLine, ...rest] = atDrawnSizes([misleading, second, wide, small, large, hangul, figures, ...body]).map((entry) => entry.size);
    expect(title).toBeCloseTo(16, 0);
    expect([secondLine, ...rest]).toEqual([16, 8, 9, 12, 12, 9, ...body.map(() => 10)]);
  });

  it('refuses junk metadata titles and text that reads as nothing', () => {
    for (const junk of [
      'untitled',
      'PowerPoint Presentation',
      '2024.acl-long.840.pdf',
      'Microsoft Word - a.doc',
      'report',
      'KZmftZfd Lncdk OqdsqZhmhmf',
      'sag-39-3-4-0902-21:sag-0',
      'wq_report',
    ]) {
      expect(isUsableTitle(junk, 'report.pdf'), junk).toBe(false);
    }
    expect(isUsableTitle('Structural analysis of cosmid clone pcAFT-2', 'x.pdf')).toBe(true);
    expect(isUsableTitle('COVID-19 dashboard', 'x.pdf')).toBe(true);
    expect(largestText([{ text: 'A', x: 0, y: 700, width: 30, size: 40, font: 'f', eol: false, artifact: false }])).toBeUndefined();
  });

  it("takes an article's title over its journal's larger name in the masthead, which the citation line at the page's head repeats", async () => {
    const bytes = await timesPage(
      [
        ['Solar Energy Materials & Solar Cells 137 (2015) 1-5', 230, 790, 7],
        ['Contents lists available at ScienceDirect', 230, 760, 8],
        ['Solar Energy Materials & Solar Cells', 180, 735, 14],
        ['Performance of a GaInP/GaAs solar cell', 42, 660, 13],
        ['with an AlGaAs tunnel junction', 42, 643, 13],
      ],
      { text: 'The cells were grown on a p-type substrate by molecular beam epitaxy.', x: 42, top: 600, size: 8 },
    );
    expect((await inspectDocument(bytes, 'solmat.pdf')).title).toBe('Performance of a GaInP/GaAs solar cell with an AlGaAs tunnel junction');
    const [converted] = (await convertLocally(bytes, { ocr: false })).pages;
    const headings = converted!.blocks.filter((block) => block.kind === 'heading').map((block) => inlineText(block.content));
    expect(headings).toEqual(['Performance of a GaInP/GaAs solar cell with an AlGaAs tunnel junction']);
  });

  it("keeps a book's section heading that its running head repeats in capitals, numbered", async () => {
    const bytes = await timesPage(
      [
        ['7', 70, 790, 10],
        ['1.2. METRIC SPACES', 250, 790, 10],
        ['1.2 Metric Spaces', 70, 740, 14],
      ],
      { text: 'A metric space is a set together with a distance between its points.', x: 70, top: 700, size: 10 },
    );
    expect((await inspectDocument(bytes, 'book-page.pdf')).title).toBe('1.2 Metric Spaces');
  });

  it('puts the title in <title>, the h1 and the tagged PDF /Title with DisplayDocTitle', async () => {
    const meta = await inspectDocument(await report('untitled'), 'scan0001.pdf');
    const page = {
      page: 1,
      label: '1',
      backend: 'local' as const,
      classification: 'standard' as const,
      reasons: [],
      blocks: [{ kind: 'paragraph' as const, page: 1, content: [{ kind: 'text' as const, text: 'Body.' }] }],
      warnings: [],
      textLayerWords: 1,
      ocr: false,
      timings: { ms: 1 },
      costUsd: 0,
    };
    const { html } = renderHtml({ meta, pages: [page] });
    expect(html).toContain('<title>Water Quality of the Lower Rhine Basin</title>');
    expect(html).toContain('<h1 id="doc-title">Water Quality of the Lower Rhine Basin</h1>');
    const pdf = await renderTaggedPdf({ meta, pages: [page] });
    const doc = await getDocument({ data: new Uint8Array(pdf), verbosity: 0 }).promise;
    try {
      const { info } = (await doc.getMetadata()) as { info: { Title?: string } };
      expect(info.Title).toBe('Water Quality of the Lower Rhine Basin');
      expect(pdf.toString('latin1')).toMatch(/\/DisplayDocTitle true/);
    } finally {
      await doc.loadingTask.destroy();
    }
  });
});
