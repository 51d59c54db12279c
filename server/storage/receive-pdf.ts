import { Transform, type Readable } from 'node:stream';
import type { Deps } from '../deps.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { readAll } from './storage.ts';

/**
 * A fetched body on its way into the object store, for import by URL and
 * from buckets alike: counted and cut at the byte limit while it streams
 * (never buffered whole), sniffed as a PDF from its first bytes (an HTML page
 * is refused after five bytes, not after its download), bounded in time,
 * then opened once for its page count.
 */

/** A failure that is the source's, final for this import: recorded on the file (and import) row, never retried. */
export class ImportFailure extends Error {
  override name = 'ImportFailure';
  readonly code: string;
  constructor(code: string, message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.code = code;
  }
}

const PDF_MAGIC = Buffer.from('%PDF-');

/** The engine's refusals are the file's fault, so final too (encrypted, damaged, too many pages). */
export function asImportFailure(error: unknown): ImportFailure | undefined {
  if (error instanceof ImportFailure) return error;
  if (isDomainError(error) && ['NOT_A_PDF', 'PDF_ENCRYPTED', 'PDF_MALFORMED', 'PDF_NO_PAGES', 'PDF_TOO_MANY_PAGES'].includes(error.code)) {
    return new ImportFailure(error.code, error.message, { cause: error });
  }
  return undefined;
}

/**
 * Streams `body` to `files/<fileId>/source`; throws ImportFailure when it is
 * larger than `maxBytes`, not a PDF, empty, or slower than `timeoutMs`. On
 * any failure nothing is left in the store.
 */
export async function storePdfStream(
  deps: Pick<Deps, 'store'>,
  input: { fileId: string; body: Readable; maxBytes: number; timeoutMs: number; describeSource: string },
): Promise<{ key: string; size: number }> {
  const key = `files/${input.fileId}/source`;
  let size = 0;
  let head = Buffer.alloc(0);
  let failure: ImportFailure | undefined;
  const fail = (error: ImportFailure) => {
    failure ??= error;
    return failure;
  };
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > input.maxBytes) return callback(fail(new ImportFailure('IMPORT_TOO_LARGE', `${input.describeSource} is larger than ${input.maxBytes} bytes`)));
      if (head.length < PDF_MAGIC.length) {
        head = Buffer.concat([head, chunk.subarray(0, PDF_MAGIC.length - head.length)]);
        if (head.length >= PDF_MAGIC.length && !head.equals(PDF_MAGIC)) {
          return callback(fail(new ImportFailure('IMPORT_NOT_A_PDF', `${input.describeSource} is not a PDF (it does not start with %PDF-)`)));
        }
      }
      callback(null, chunk);
    },
  });
  // The failure is kept above and rethrown; the store's writer may attach its own listener only after an await.
  meter.on('error', () => {});
  const timer = setTimeout(() => {
    const error = fail(new ImportFailure('IMPORT_UNREACHABLE', `${input.describeSource} did not arrive within ${input.timeoutMs} ms`));
    input.body.destroy(error);
    meter.destroy(error);
  }, input.timeoutMs);
  input.body.on('error', (error) =>
    meter.destroy(failure ?? new ImportFailure('IMPORT_UNREACHABLE', `the download broke off: ${error.message}`, { cause: error })),
  );
  try {
    await deps.store.put(key, input.body.pipe(meter), { contentType: 'application/pdf' });
  } catch (error) {
    input.body.destroy();
    await deps.store.deletePrefix(`files/${input.fileId}/`).catch(() => {});
    throw failure ?? error;
  } finally {
    clearTimeout(timer);
  }
  if (failure || size < PDF_MAGIC.length) {
    await deps.store.deletePrefix(`files/${input.fileId}/`).catch(() => {});
    throw failure ?? new ImportFailure('IMPORT_NOT_A_PDF', `${input.describeSource} is ${size === 0 ? 'empty' : 'too short to be a PDF'}`);
  }
  return { key, size };
}

/** Opens the stored PDF for its page count (what the hold is for); refuses past UPLOAD_MAX_PAGES. */
export async function countStoredPages(deps: Pick<Deps, 'store' | 'engine' | 'config'>, key: string, name: string): Promise<number> {
  const engine = await deps.engine();
  const bytes = await readAll(await deps.store.get(key));
  const meta = await engine.inspect(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength), { sourceName: name });
  const maxPages = deps.config.conversion.uploadMaxPages;
  if (meta.pageCount > maxPages) throw new DomainError('PDF_TOO_MANY_PAGES', `The PDF has ${meta.pageCount} pages; the limit is ${maxPages}`);
  return meta.pageCount;
}

/** An imported PDF stored (storePdfStream) and its pages counted; a file that cannot be counted is removed again. */
export async function storeImportedPdf(
  deps: Pick<Deps, 'store' | 'engine' | 'config'>,
  input: Parameters<typeof storePdfStream>[1] & { name: string },
): Promise<{ key: string; size: number; pages: number }> {
  const stored = await storePdfStream(deps, input);
  try {
    return { ...stored, pages: await countStoredPages(deps, stored.key, input.name) };
  } catch (error) {
    await deps.store.deletePrefix(`files/${input.fileId}/`).catch(() => {});
    throw error;
  }
}

/** A file name from the last path segment, printable and bounded; `fallback` when there is none. */
export function importedName(path: string, fallback = 'imported.pdf'): string {
  let last = path.split('/').filter(Boolean).at(-1) ?? '';
  try {
    last = decodeURIComponent(last);
  } catch {
    // a malformed escape: keep the raw text
  }
  const clean = last
    .replace(/[\u0000-\u001f\u007f/\\]+/g, '')
    .trim()
    .slice(0, 200);
  return clean || fallback;
}
