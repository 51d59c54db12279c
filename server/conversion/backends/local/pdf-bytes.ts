import zlib from 'node:zlib';
import { DomainError } from '../../../errors.ts';

/**
 * The most pixels pdf.js decodes for one image (width × height, checked from the image's dictionary before
 * any pixel is decoded): 50 megapixels holds an A4 page scanned at 600 dpi in colour (35 MP) with room,
 * and stays under 200 MB as RGBA. A larger image is left out of the page (pdf.js removes its paint and
 * warns; the page worker turns that warning into a placeholder figure and a page warning).
 */
export const MAX_IMAGE_PIXELS = 50_000_000;
/** Longest side of an extracted image: enough for reading on screen, not a print master. */
export const MAX_IMAGE_SIDE = 1600;
/** pdf.js's warning for an image over MAX_IMAGE_PIXELS (here, apart from pdf.js, so a page worker knows them before loading it). */
export const IMAGE_REMOVED_WARNING = 'Image exceeded maximum allowed size and was removed.';

/**
 * What can be told of a PDF from its bytes alone, without pdf.js: cheap
 * enough for the engine's own thread, so bytes that are no PDF never cross
 * to a page worker.
 */

const PDF_MAGIC = '%PDF-';

/** pdf.js looks for the header in the first 1,024 bytes, as Acrobat does; so do we. */
function looksLikePdf(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 1024)).toString('latin1');
  return head.includes(PDF_MAGIC);
}

/**
 * Throws NOT_A_PDF without the header, and PDF_MALFORMED for bytes that hold no indirect object: whatever
 * their header says they cannot be a PDF, and pdf.js would scan all of them trying to rebuild a
 * cross-reference table (190 MB of zeros after `%PDF-`: minutes and gigabytes in a page worker).
 */
export function checkPdfBytes(bytes: Uint8Array): void {
  if (bytes.byteLength === 0 || !looksLikePdf(bytes)) throw new DomainError('NOT_A_PDF', 'The file is not a PDF.');
  if (Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf('obj') < 0) {
    throw new DomainError('PDF_MALFORMED', 'The PDF is damaged and cannot be read.');
  }
}

/**
 * The most bytes one compressed stream that is not an image may inflate to. Content streams of the densest
 * real pages (maps, plots) run to tens of MB; pdf.js holds a decoded stream whole, outside the worker's heap
 * limit, so a 500 KB stream of zeros that inflates to 512 MB would take a gigabyte before any page is read.
 * Images are left to pdf.js, which reads only the bytes their width and height call for.
 */
const MAX_STREAM_BYTES = 64 * 1024 * 1024;
/** How far before `stream` its dictionary may start. */
const DICT_LOOKBACK = 4096;

/**
 * Throws PDF_MALFORMED when a Flate stream that is not an image inflates past MAX_STREAM_BYTES. Reads the
 * raw file (stream dictionaries are never compressed), so it runs before pdf.js parses anything.
 */
export function checkStreamSizes(bytes: Uint8Array, limit = MAX_STREAM_BYTES): void {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = data.indexOf('stream'); at >= 0; at = data.indexOf('stream', at + 6)) {
    if (at >= 3 && data.toString('latin1', at - 3, at) === 'end') continue;
    let start = at + 6;
    if (data[start] === 0x0d) start++;
    if (data[start] !== 0x0a) continue;
    start++;
    const dict = data.toString('latin1', Math.max(0, at - DICT_LOOKBACK), at);
    const own = dict.slice(dict.lastIndexOf('obj') + 1);
    if (!/\/FlateDecode/.test(own) || /\/Subtype\s*\/Image/.test(own)) continue;
    // a filter chain that starts with another decoder is left to pdf.js (and the worker's limits)
    if (/\/Filter\s*\[\s*\/(?!FlateDecode)/.test(own)) continue;
    const end = data.indexOf('endstream', start);
    try {
      zlib.inflateSync(data.subarray(start, end < 0 ? data.length : end), { maxOutputLength: limit, finishFlush: zlib.constants.Z_SYNC_FLUSH });
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
        throw new DomainError('PDF_MALFORMED', `The PDF holds a compressed stream that unpacks to more than ${limit / 1024 / 1024} MB.`);
      }
      // a damaged stream is pdf.js's to judge
    }
  }
}

/** A JPEG stored whole as an image XObject (DCTDecode alone), which a figure can carry as it is. */
export type StoredJpeg = { width: number; height: number; bytes: Buffer };

/** The most bytes of stored JPEGs kept for one open document (copies, so the file's bytes can go). */
const MAX_STORED_JPEG_BYTES = 32 * 1024 * 1024;

/**
 * The image XObjects whose stream is a JPEG a browser shows as pdf.js draws it: DCTDecode as the
 * only filter, 8 bits, no mask, soft mask, Decode array or decode parameters (an Adobe colour
 * transform), at most maxSide pixels on a side. Read from the raw file by their dictionaries
 * (never compressed), as checkStreamSizes reads; which paint is which is left to the caller, who
 * compares pixels, so a dictionary misread here costs a pass-through, never a wrong picture.
 */
export function storedJpegs(bytes: Uint8Array, maxSide = MAX_IMAGE_SIDE, limit = MAX_STORED_JPEG_BYTES): StoredJpeg[] {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const found: StoredJpeg[] = [];
  let kept = 0;
  for (let at = data.indexOf('/DCTDecode'); at >= 0; at = data.indexOf('/DCTDecode', at + 10)) {
    const objAt = data.lastIndexOf('obj', at);
    const streamAt = data.indexOf('stream', at);
    if (objAt < 3 || streamAt < 0 || at - objAt > DICT_LOOKBACK || streamAt - at > DICT_LOOKBACK) continue;
    if (data.toString('latin1', objAt - 3, objAt) === 'end') continue;
    const dict = data.toString('latin1', objAt + 3, streamAt);
    // the filter named in another object, or in no stream's dictionary
    if (/endobj|endstream/.test(dict) || !/\/Subtype\s*\/Image\b/.test(dict)) continue;
    if (!/\/Filter\s*(?:\/DCTDecode|\[\s*\/DCTDecode\s*\])/.test(dict) || /\/(?:SMask|Mask|ImageMask|Decode|DecodeParms)\b/.test(dict)) continue;
    if (!/\/BitsPerComponent\s+8\b/.test(dict)) continue;
    const width = Number(/\/Width\s+(\d+)\b/.exec(dict)?.[1] ?? 0);
    const height = Number(/\/Height\s+(\d+)\b/.exec(dict)?.[1] ?? 0);
    if (width < 1 || height < 1 || width > maxSide || height > maxSide) continue;
    let start = streamAt + 6;
    if (data[start] === 0x0d) start++;
    if (data[start] !== 0x0a) continue;
    start++;
    const length = /\/Length\s+(\d+)\b(?!\s+\d+\s+R)/.exec(dict);
    let end = length ? start + Number(length[1]) : data.indexOf('endstream', start);
    if (end < start || end > data.length) continue;
    // a JPEG ends at its EOI marker: whatever follows it (the line end before `endstream`) is not the image
    end = data.lastIndexOf(Buffer.from([0xff, 0xd9]), end - 2) + 2;
    if (end - start < 4 || data[start] !== 0xff || data[start + 1] !== 0xd8) continue;
    if (kept + (end - start) > limit) break;
    kept += end - start;
    found.push({ width, height, bytes: Buffer.from(data.subarray(start, end)) });
  }
  return found;
}
