import { PDFDocument, StandardFonts } from 'pdf-lib';

/** A small real PDF of `pages` pages with a line of text on each (distinct per `label`, so ETags differ). */
export async function makePdf(label: string, pages = 1): Promise<Buffer> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (let page = 1; page <= pages; page++) {
    document.addPage([300, 200]).drawText(`${label}, page ${page}`, { x: 20, y: 150, size: 14, font });
  }
  return Buffer.from(await document.save());
}
