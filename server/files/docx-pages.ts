import yauzl from 'yauzl';
import { DomainError } from '../errors.ts';

/**
 * What a DOCX costs, read before anything converts it. Every entry is
 * inflated once through yauzl (which checks each entry's real size against
 * the size it declares) and counted, so a zip bomb or an XML bomb is refused
 * here, in bytes, before mammoth ever loads it.
 */

/** All entries inflated together: far above any real document's text and styles, far below what hurts a worker. */
const DOCX_MAX_UNZIPPED_BYTES = 64 * 1024 * 1024;
/** Entries in the package: a real DOCX has tens; thousands is a zip built to waste time. */
const DOCX_MAX_ENTRIES = 2_000;
/** Characters of text that make one page of a plain document (about 500 words). */
export const DOCX_CHARS_PER_PAGE = 3_000;

export type DocxMeasure = { pages: number; textChars: number; breaks: number; renderedBreaks: number; declaredPages: number };

/**
 * The pages a DOCX is charged for: the most of
 * - the page breaks it asks for (hard breaks, page-break-before, section breaks that start a page) + 1,
 * - the pages Word last rendered (`w:lastRenderedPageBreak` marks) + 1,
 * - the page count Word stored in docProps/app.xml,
 * - its text length at DOCX_CHARS_PER_PAGE characters a page,
 * and at least 1. A producer can leave out the marks and the stored count, never the text or the breaks.
 */
export async function measureDocx(bytes: Buffer): Promise<DocxMeasure> {
  const parts = await readParts(bytes, new Set(['word/document.xml', 'docProps/app.xml']));
  const document = parts.get('word/document.xml');
  if (document === undefined) throw new DomainError('UNPROCESSABLE', 'The DOCX has no word/document.xml');
  const counted = countDocument(document);
  const declared = Number(/<Pages>\s*(\d{1,7})\s*<\/Pages>/.exec(parts.get('docProps/app.xml') ?? '')?.[1] ?? 0);
  const pages = Math.max(1, counted.breaks + 1, counted.renderedBreaks + 1, declared, Math.ceil(counted.textChars / DOCX_CHARS_PER_PAGE));
  return { pages, declaredPages: declared, ...counted };
}

function countDocument(xml: string): Omit<DocxMeasure, 'pages' | 'declaredPages'> {
  let textChars = 0;
  for (const match of xml.matchAll(/<w:t(?:\s[^>]*)?>([^<]*)<\/w:t>/g)) textChars += match[1]!.length;
  const hard = count(xml, /<w:br\b[^>]*\bw:type="page"/g);
  const before = count(xml, /<w:pageBreakBefore\b(?![^>]*\bw:val="(?:0|false|off)")[^>]*\/?>/g);
  // every section but the body's last ends in a paragraph and starts a page, unless it is continuous
  const sections = Math.max(0, count(xml, /<w:sectPr\b/g) - 1);
  const continuous = count(xml, /<w:type\s+w:val="continuous"/g);
  const renderedBreaks = count(xml, /<w:lastRenderedPageBreak\b/g);
  return { textChars, breaks: hard + before + Math.max(0, sections - continuous), renderedBreaks };
}

function count(text: string, pattern: RegExp): number {
  let total = 0;
  for (const _ of text.matchAll(pattern)) total++;
  return total;
}

const malformed = (cause?: unknown) => new DomainError('UNPROCESSABLE', 'The DOCX is damaged and cannot be read', { cause });
const tooLarge = () =>
  new DomainError('FILE_TOO_LARGE', `The DOCX unpacks to more than ${DOCX_MAX_UNZIPPED_BYTES} bytes; the limit is ${DOCX_MAX_UNZIPPED_BYTES / 1024 / 1024} MB`);

/** Inflates every entry (bounded in total), keeping the text of the ones asked for. */
function readParts(bytes: Buffer, wanted: Set<string>): Promise<Map<string, string>> {
  return new Promise((resolve, reject) => {
    yauzl.fromBuffer(bytes, { lazyEntries: true, validateEntrySizes: true, strictFileNames: false }, (openError, zip) => {
      if (openError || !zip) return reject(malformed(openError));
      const parts = new Map<string, string>();
      let total = 0;
      let entries = 0;
      let failed = false;
      const fail = (error: unknown) => {
        if (failed) return;
        failed = true;
        zip.close();
        reject(error);
      };
      zip.on('error', (error) => fail(malformed(error)));
      zip.on('end', () => {
        if (!failed) resolve(parts);
      });
      zip.on('entry', (entry: yauzl.Entry) => {
        if (++entries > DOCX_MAX_ENTRIES) return fail(malformed());
        if (entry.fileName.endsWith('/')) return zip.readEntry();
        // the declared size is checked first (cheap), the real one as it inflates (yauzl stops a liar)
        if (total + entry.uncompressedSize > DOCX_MAX_UNZIPPED_BYTES) return fail(tooLarge());
        zip.openReadStream(entry, (streamError, stream) => {
          if (streamError || !stream) return fail(malformed(streamError));
          const keep = wanted.has(entry.fileName);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => {
            total += chunk.length;
            if (total > DOCX_MAX_UNZIPPED_BYTES) {
              stream.destroy();
              fail(tooLarge());
              return;
            }
            if (keep) chunks.push(chunk);
          });
          stream.on('error', (error) => fail(malformed(error)));
          stream.on('end', () => {
            if (failed) return;
            if (keep) parts.set(entry.fileName, Buffer.concat(chunks).toString('utf8'));
            zip.readEntry();
          });
        });
      });
      zip.readEntry();
    });
  });
}
