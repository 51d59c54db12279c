import { PNG_SIGNATURE } from '../backends/local/png.ts';

/** What pdfkit's image() takes in place of a file: it calls embed() once, then draws the object under its label. */
type PdfKitImage = { label: string; width: number; height: number; obj: PDFKit.PDFKitReference | null; embed(doc: PDFKit.PDFDocument): void };

const COLOURS: Record<number, { colors: number; space: string }> = { 0: { colors: 1, space: 'DeviceGray' }, 2: { colors: 3, space: 'DeviceRGB' } };

/**
 * A figure's picture as pdfkit should embed it. An 8-bit grey or RGB PNG without palette,
 * transparency or interlacing (what the local backend writes) is its IDAT stream, which a PDF
 * reads as it is (FlateDecode with PNG predictors); pdfkit's own reader, png-js, copies that
 * stream into a JavaScript array a byte at a time before embedding it unchanged, 0.4 s of the
 * corpus's tagged PDFs. Any other picture goes to pdfkit as its bytes.
 */
export function pdfImage(bytes: Buffer, label: string): PdfKitImage | Buffer {
  if (bytes.length < 33 || !bytes.subarray(0, 8).equals(PNG_SIGNATURE)) return bytes;
  let width = 0;
  let height = 0;
  let colour: (typeof COLOURS)[number] | undefined;
  const data: Buffer[] = [];
  for (let at = 8; at + 8 <= bytes.length; ) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    const body = bytes.subarray(at + 8, at + 8 + length);
    if (body.length < length) return bytes;
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      const [depth, colourType, , , interlace] = body.subarray(8, 13);
      colour = depth === 8 && interlace === 0 ? COLOURS[colourType!] : undefined;
      if (!colour) return bytes;
    } else if (type === 'IDAT') data.push(body);
    else if (type === 'PLTE' || type === 'tRNS') return bytes;
    else if (type === 'IEND') break;
    at += 12 + length;
  }
  if (!colour || width === 0 || height === 0 || data.length === 0) return bytes;
  const { colors, space } = colour;
  const stream = Buffer.concat(data);
  const image: PdfKitImage = {
    label,
    width,
    height,
    obj: null,
    embed(doc) {
      if (this.obj) return;
      this.obj = doc.ref({
        Type: 'XObject',
        Subtype: 'Image',
        BitsPerComponent: 8,
        Width: width,
        Height: height,
        ColorSpace: space,
        Filter: 'FlateDecode',
        DecodeParms: { Predictor: 15, Colors: colors, BitsPerComponent: 8, Columns: width },
      });
      this.obj.end(stream);
    },
  };
  return image;
}
