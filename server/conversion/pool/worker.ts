import { parentPort } from 'node:worker_threads';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { createEdgeCache } from '../backends/local/running-heads.ts';
import { IMAGE_REMOVED_WARNING, MAX_IMAGE_PIXELS, storedJpegs, type StoredJpeg } from '../backends/local/pdf-bytes.ts';
import type { PageResult } from '../model.ts';
import { DomainError } from '../../errors.ts';
import type { FromWorker, LocalJobOptions, ToWorker, WorkerError } from './protocol.ts';

/**
 * A page worker: keeps the documents it was sent open (parsed once) and
 * converts the pages it is asked for, one at a time. Fonts and page data are
 * released after each page so memory stays flat over a long document.
 */

/**
 * pdf.js and the local backend load with the first document, jsdom and axe-core with the first audit
 * (or a 'warm' ahead of it): a worker started to audit a short document never compiles pdf.js, and a
 * worker that only converts pages never holds jsdom.
 */
let localModules:
  | Promise<
      [
        typeof import('../backends/local/convert-page.ts'),
        typeof import('../backends/local/document-meta.ts'),
        typeof import('../backends/local/pdf.ts'),
        typeof import('../backends/local/running-heads.ts'),
      ]
    >
  | undefined;
const local = () =>
  (localModules ??= Promise.all([
    import('../backends/local/convert-page.ts'),
    import('../backends/local/document-meta.ts'),
    import('../backends/local/pdf.ts'),
    import('../backends/local/running-heads.ts'),
  ]));
let auditModule: Promise<typeof import('../audit/audit-html.ts')> | undefined;
const audit = () => (auditModule ??= import('../audit/audit-html.ts'));

const port = parentPort;
if (!port) throw new Error('the page worker must run in a worker thread');

const documents = new Map<
  number,
  {
    doc: Promise<PDFDocumentProxy>;
    options?: LocalJobOptions;
    pagesSinceCleanup: number;
    edges?: ReturnType<typeof createEdgeCache>;
    /** the document's JPEGs, copied out of its bytes at open: pictures drawn from them carry them as they are */
    jpegs: StoredJpeg[];
  }
>();
/** Pages between pdf.js cache purges: often enough to keep memory flat, rarely enough that shared fonts are not reparsed per page. */
const CLEANUP_EVERY = 16;
let queue: Promise<void> = Promise.resolve();

function send(message: FromWorker) {
  port!.postMessage(message);
}

function describe(error: unknown): WorkerError {
  const err = error as { name?: string; message?: string; code?: string };
  return { name: err.name ?? 'Error', message: err.message ?? String(error), ...(typeof err.code === 'string' ? { code: err.code } : {}) };
}

/**
 * pdf.js's warnings (documents here are opened with them on) come as console.warn lines: they are read,
 * not printed. The one that matters is an image over MAX_IMAGE_PIXELS, left out of its page undecoded.
 */
let removedImages = 0;
const print = console.warn.bind(console);
console.warn = (...args: unknown[]) => {
  const first = args[0];
  if (typeof first === 'string' && first.startsWith('Warning: ')) {
    if (first.includes(IMAGE_REMOVED_WARNING)) removedImages++;
    return;
  }
  print(...args);
};

/** A figure standing for each image too large to decode, and the page's warning about them. */
function withRemovedImages(result: PageResult, removed: number): PageResult {
  if (removed === 0) return result;
  const megapixels = MAX_IMAGE_PIXELS / 1_000_000;
  for (let n = 0; n < removed; n++) result.blocks.push({ kind: 'figure', page: result.page, decorative: false, needsAlt: true });
  result.warnings.push(
    `page ${result.page}: ${removed} image(s) larger than ${megapixels} megapixels were not decoded; each is left as a figure without its picture`,
  );
  if (!result.reasons.includes('figure')) result.reasons.push('figure');
  result.classification = 'complex';
  return result;
}

port.on('message', (message: ToWorker) => {
  // one page at a time per worker: pdf.js and tesseract are not reentrant-friendly and memory stays predictable
  queue = queue.then(() => handle(message)).catch(() => undefined);
});

async function handle(message: ToWorker): Promise<void> {
  switch (message.type) {
    case 'open': {
      // a document opened to be inspected is read for the first time: its streams are checked then
      const doc = local().then(([, , { openPdf }]) => openPdf(message.pdf, { warnings: true, checkStreams: !message.options }));
      doc.catch(() => undefined);
      documents.set(message.docId, { doc, options: message.options, pagesSinceCleanup: 0, jpegs: storedJpegs(message.pdf) });
      return;
    }
    case 'page': {
      const entry = documents.get(message.docId);
      try {
        if (!entry?.options) throw new Error(`document ${message.docId} is not open in this worker`);
        const doc = await entry.doc;
        const [{ convertLocalPage }, , , { createEdgeCache }] = await local();
        entry.edges ??= createEdgeCache(doc);
        removedImages = 0;
        const converted = await convertLocalPage(doc, message.page, {
          ...entry.options,
          label: message.label,
          neighbours: entry.edges.neighbours,
          rememberEdges: entry.edges.remember,
          takeTextLayer: entry.edges.takeTextLayer,
          jpegs: entry.jpegs,
        });
        // pdf.js keeps every page proxy and font it has loaded until told otherwise
        if (++entry.pagesSinceCleanup >= CLEANUP_EVERY) {
          entry.pagesSinceCleanup = 0;
          await doc.cleanup().catch(() => undefined);
        }
        const result = withRemovedImages(converted, removedImages);
        send({ type: 'page', docId: message.docId, page: message.page, result });
      } catch (error) {
        send({ type: 'error', docId: message.docId, page: message.page, error: describe(error) });
      }
      return;
    }
    case 'inspect': {
      // an engine that cannot load (a dependency missing or broken) and a document never sent here are
      // our failures, not a damaged file: said as they are
      const entry = documents.get(message.docId);
      const modules = await local().catch((error: unknown) => new Error(`the conversion engine could not load: ${describe(error).message}`));
      if (!entry || modules instanceof Error) {
        const ours = modules instanceof Error ? modules : new Error(`document ${message.docId} is not open in this worker`);
        send({ type: 'inspect', id: message.id, error: describe(ours) });
        return;
      }
      try {
        const doc = await entry.doc;
        const [, { pageLabels, readMeta }, , { createEdgeCache }] = modules;
        // the text layers read here wait in the edge cache for the pages' own conversion
        entry.edges ??= createEdgeCache(doc);
        const meta = await readMeta(doc, message.sourceName, entry.edges.textLayer);
        const labels: [number, string][] = [];
        (await pageLabels(doc))?.forEach((label, index) => {
          if (label) labels.push([index + 1, label]);
        });
        // the pages that follow an inspect come with the options this read decides
        entry.options ??= { docLang: meta.lang, tagged: meta.tagged };
        send({ type: 'inspect', id: message.id, result: { meta, labels } });
      } catch (error) {
        // pdf.js's own failures past opening (a page tree that refers to itself, a broken object) are a damaged file
        const known = error instanceof DomainError ? error : new DomainError('PDF_MALFORMED', 'The PDF is damaged and cannot be read.', { cause: error });
        send({ type: 'inspect', id: message.id, error: describe(known) });
      }
      return;
    }
    case 'close': {
      const entry = documents.get(message.docId);
      documents.delete(message.docId);
      if (entry) await (await entry.doc.catch(() => null))?.loadingTask.destroy();
      return;
    }
    case 'audit': {
      try {
        const { auditHtml } = await audit();
        send({ type: 'audit', id: message.id, result: await auditHtml(message.input) });
      } catch (error) {
        send({ type: 'audit', id: message.id, error: describe(error) });
      }
      return;
    }
    case 'warm': {
      // an audit is coming: load jsdom and axe-core now, while other threads still convert and render
      await audit()
        .then(({ prepareAudit }) => prepareAudit())
        .catch(() => undefined);
      return;
    }
    case 'docx': {
      try {
        // mammoth and the HTML reader load on the first DOCX: a worker that only converts PDF pages never holds them
        const [{ default: mammoth }, { htmlToBlocks }] = await Promise.all([import('mammoth'), import('../backends/vision/html-to-blocks.ts')]);
        const { value: html } = await mammoth.convertToHtml({ buffer: Buffer.from(message.docx.buffer, message.docx.byteOffset, message.docx.byteLength) });
        send({ type: 'docx', id: message.id, result: { blocks: htmlToBlocks(html, 1), words: html.split(/\s+/).length } });
      } catch (error) {
        send({ type: 'docx', id: message.id, error: describe(error) });
      }
      return;
    }
    case 'shutdown': {
      for (const entry of documents.values()) await (await entry.doc.catch(() => null))?.loadingTask.destroy();
      documents.clear();
      if (localModules) await (await import('../backends/local/ocr.ts')).closeOcr();
      send({ type: 'closed' });
      return;
    }
  }
}
