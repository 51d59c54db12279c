import zlib from 'node:zlib';
import { DomainError } from '../../../errors.ts';

/**
 * The most pixels pdf.js decodes for one image (width × height, checked from the image's dictionary before
 * any pixel is decoded): 50 megapixels holds an A4 page scanned at 600 dpi in colour (35 MP) with room,
 * and stays under 200 MB as RGBA. A larger image is left out of the page (pdf.js removes its paint and
 * warns; the page worker turns that warning into a placeholder figure and a page warning).
 */
export const MAX_IMAGE_PIXELS = 50_000_000;
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
