import { PDFDocument as PdfLibDocument, StandardFonts } from 'pdf-lib';
import PDFDocument from 'pdfkit';
import { encodeRgbPng } from '../../server/conversion/backends/local/png.ts';
import { convertLocalPage } from '../../server/conversion/backends/local/convert-page.ts';
import { inspectDocument } from '../../server/conversion/backends/local/document-meta.ts';
import { openPdf } from '../../server/conversion/backends/local/pdf.ts';
import type { DocumentMeta, Inline, PageResult } from '../../server/conversion/model.ts';

export type Doc = InstanceType<typeof PDFDocument>;

/** An A4 PDF drawn with pdfkit, one function a page, at exact positions (top-left origin, y down). */
export async function drawPdf(...pages: ((doc: Doc) => void)[]): Promise<Uint8Array> {
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

/** Two Letter pages, a picture on each between two lines of text: the first captioned ("Figure 1: Rain gauges on the station roof."), the second not. */
export async function drawPicturesPdf(): Promise<Uint8Array> {
  const pdf = await PdfLibDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const pixels = new Uint8Array(64 * 64 * 4).map((_, index) => (index % 4 === 3 ? 255 : (index * 37) % 251));
  const picture = await pdf.embedPng(encodeRgbPng(pixels, 64, 64));
  for (const [index, caption] of ['Figure 1: Rain gauges on the station roof.', undefined].entries()) {
    const page = pdf.addPage([612, 792]);
    page.drawText(`Section ${index + 1}: the monitoring stations and what they measure every month.`, { x: 72, y: 720, size: 11, font });
    page.drawImage(picture, { x: 72, y: 480, width: 200, height: 200 });
    if (caption) page.drawText(caption, { x: 72, y: 462, size: 10, font });
    page.drawText('Readings are sent to the central office at the end of each day.', { x: 72, y: 420, size: 11, font });
  }
  return pdf.save();
}

/** Every page of a PDF (or those asked for) through the local backend, as a page worker reads them (the document's facts first). */
export async function convertLocally(
  bytes: Uint8Array,
  options: { name?: string; ocr?: boolean; pages?: number[] } = {},
): Promise<{ meta: DocumentMeta; pages: PageResult[] }> {
  const meta = await inspectDocument(bytes.slice(), options.name ?? 'drawn.pdf');
  const doc = await openPdf(bytes.slice());
  try {
    const pages: PageResult[] = [];
    for (const page of options.pages ?? Array.from({ length: meta.pageCount }, (_, index) => index + 1)) {
      pages.push(await convertLocalPage(doc, page, { docLang: meta.lang, tagged: meta.tagged, ...(options.ocr === false ? { ocr: false } : {}) }));
    }
    return { meta, pages };
  } finally {
    await doc.loadingTask.destroy();
  }
}

/** The text of inlines as a reader hears it: a footnote reference by its label, anything else without text as a space. */
export const inlineText = (list: Inline[] | undefined): string =>
  (list ?? [])
    .map((item) =>
      'children' in item
        ? inlineText(item.children)
        : 'text' in item
          ? item.text
          : item.kind === 'footnoteRef'
            ? item.label
            : item.kind === 'pageBreak'
              ? ''
              : ' ',
    )
    .join('');

/** The lines a converted page left out as furniture, as its warnings list them. */
export const furnitureOf = (page: { warnings: string[] }) => page.warnings.filter((warning) => warning.includes('page furniture'));
