import { createRequire } from 'node:module';
import path from 'node:path';
import { AnnotationMode, getDocument, type PDFDocumentProxy, type PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { DomainError } from '../../../errors.ts';
import { checkPdfBytes, checkStreamSizes, MAX_IMAGE_PIXELS } from './pdf-bytes.ts';

/**
 * Opening a PDF with pdf.js on Node, and turning its failures into the
 * engine's error codes. The legacy build is the one pdf.js supports on Node.
 */

/**
 * pdf.js's data folders (character maps for CJK fonts, the 14 standard fonts,
 * ICC profiles, JBIG2/JPX decoders), read from the installed package: without
 * them CJK text extracts as nothing and scans in JBIG2 render blank.
 */
const PDFJS_DIR = path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
const dataDir = (name: string) => path.join(PDFJS_DIR, name) + path.sep;

/** The biggest canvas pdf.js may allocate for one image it resizes (bytes, RGBA). */
const CANVAS_MAX_AREA_BYTES = 256 * 1024 * 1024;

/**
 * `warnings`: let pdf.js report its warnings (console.warn, 'Warning: …'), for a caller that reads them.
 * `checkStreams`: refuse compressed streams that inflate past MAX_STREAM_BYTES (checkStreamSizes) first;
 * once per document is enough (its first read), since it inflates them all.
 */
export async function openPdf(bytes: Uint8Array, options: { warnings?: boolean; checkStreams?: boolean } = {}): Promise<PDFDocumentProxy> {
  checkPdfBytes(bytes);
  if (options.checkStreams) checkStreamSizes(bytes);
  // pdf.js transfers (detaches) the buffer it is given: hand it a copy so the caller's bytes stay usable.
  const task = getDocument({
    data: new Uint8Array(bytes),
    useSystemFonts: false,
    disableFontFace: true,
    verbosity: options.warnings ? 1 : 0,
    maxImageSize: MAX_IMAGE_PIXELS,
    canvasMaxAreaInBytes: CANVAS_MAX_AREA_BYTES,
    stopAtErrors: false,
    // keeps each font's name and bold flag on the loaded font (ruled tables read bold header rows); costs the
    // fonts' bytes staying in memory while the document is open
    fontExtraProperties: true,
    cMapUrl: dataDir('cmaps'),
    cMapPacked: true,
    standardFontDataUrl: dataDir('standard_fonts'),
    iccUrl: dataDir('iccs'),
    wasmUrl: dataDir('wasm'),
  });
  let doc: PDFDocumentProxy;
  try {
    doc = await task.promise;
  } catch (error) {
    await task.destroy().catch(() => undefined);
    const name = error instanceof Error ? error.name : '';
    if (name === 'PasswordException') throw new DomainError('PDF_ENCRYPTED', 'The PDF is encrypted with a password.', { cause: error });
    throw new DomainError('PDF_MALFORMED', 'The PDF is damaged and cannot be read.', { cause: error });
  }
  if (doc.numPages < 1 || (doc.numPages === 1 && hasEmptyPageTree(bytes))) {
    await doc.loadingTask.destroy();
    throw new DomainError('PDF_NO_PAGES', 'The PDF has no pages.');
  }
  return doc;
}

/** Text without the NULs and other control characters some producers leave in strings (alt text, titles). */
export function cleanString(value: unknown): string {
  if (typeof value !== 'string') return '';
  return value.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f\ufeff]/g, '').trim();
}

/**
 * pdf.js reports one page for a document whose page tree is empty (/Count 0)
 * and lets it render blank. Such a file has no page to convert: when the raw
 * bytes show an empty /Pages and no /Page object (and no object streams that
 * could hide one), the document has no pages.
 */
function hasEmptyPageTree(bytes: Uint8Array): boolean {
  if (bytes.byteLength > 1_000_000) return false;
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  if (/\/ObjStm\b/.test(raw) || /\/Type\s*\/Page(?![a-zA-Z])/.test(raw)) return false;
  return /\/Count\s+0(?![0-9])/.test(raw);
}

type OperatorList = Awaited<ReturnType<PDFPageProxy['getOperatorList']>>;
type PageInternals = {
  _intentStates?: unknown;
  _transport?: { getRenderingIntent?: (intent: string, annotationMode: number) => { cacheKey?: unknown } };
};

/**
 * Lets the page's renders (figure regions, OCR) draw from the operator list it already read, instead of
 * pdf.js evaluating the page a second time for drawing: getOperatorList and render keep their lists
 * apart (the same operators, the drawing one merged by an optimiser), and the second evaluation parses
 * the content again and decodes its images again (a figure page: about half of its first render).
 * This reaches into pdf.js's page proxy (its intent states, as render reads them); where they are not
 * as expected, nothing is shared and the render evaluates the page as usual.
 */
export function shareOperatorList(page: PDFPageProxy, list: OperatorList): void {
  const internals = page as unknown as PageInternals;
  const states = internals._intentStates;
  const key = internals._transport?.getRenderingIntent?.('display', AnnotationMode.ENABLE)?.cacheKey;
  // the list as getOperatorList resolves it, whole (its last chunk in), with the fields render reads
  const whole = list as OperatorList & { lastChunk?: boolean; separateAnnots?: unknown };
  if (!(states instanceof Map) || typeof key !== 'string' || states.has(key) || whole.lastChunk !== true) return;
  // `true`: drawn on a transparent layer then laid on the background, which is right whether or not the page blends
  const ready = Promise.withResolvers<boolean>();
  ready.resolve(true);
  states.set(
    key,
    Object.assign(Object.create(null), {
      displayReadyCapability: ready,
      operatorList: { fnArray: whole.fnArray, argsArray: whole.argsArray, lastChunk: true, separateAnnots: whole.separateAnnots ?? null },
      renderTasks: new Set(),
    }),
  );
}
