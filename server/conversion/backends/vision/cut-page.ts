import { PDFDocument } from 'pdf-lib';

/**
 * One page of a PDF as its own one-page PDF, for services that take a file
 * per page. The parsed source is cached per input buffer, so cutting every
 * page of a long document parses it once, not once per page.
 */
const parsed = new WeakMap<Uint8Array, Promise<PDFDocument>>();

export async function cutPage(pdf: Uint8Array, page: number): Promise<Uint8Array> {
  let source = parsed.get(pdf);
  if (!source) {
    source = PDFDocument.load(pdf, { updateMetadata: false });
    parsed.set(pdf, source);
  }
  const document = await source;
  if (!Number.isInteger(page) || page < 1 || page > document.getPageCount()) {
    throw new RangeError(`page ${page} is outside 1..${document.getPageCount()}`);
  }
  const single = await PDFDocument.create({ updateMetadata: false });
  const [copied] = await single.copyPages(document, [page - 1]);
  single.addPage(copied!);
  return single.save();
}
