import { createHash } from 'node:crypto';
import type { ParserBackend } from './backends/parser/parser-backend.ts';
import type { VisionBackend } from './backends/vision/vision-backend.ts';
import type { ConversionEngine, CreateConversionEngine, RenderExtras } from './engine.ts';
import type { PageResult } from './model.ts';
import { createPagePool, type PagePool } from './pool/page-pool.ts';
import type { DocumentFacts } from './pool/protocol.ts';
import type { AuditInput } from './audit/audit-html.ts';
import { zipFiles, zipOutputs } from './render/zip.ts';
import { checkPdfBytes } from './backends/local/pdf-bytes.ts';

/**
 * The conversion engine (contract in engine.ts): inspect a PDF, convert its
 * pages with one of three backends, render and zip the outputs. The local
 * backend runs on a pool of worker threads created on first use, and PDFs are
 * opened and inspected there too: the engine's thread loads pdf.js only for a
 * vision conversion, and the AWS SDK only when a backend calls out. Vision and
 * parser call out, the vision backend falling back to the local one per page.
 */

/** Longest document whose pages convert beside a worker holding the audit's jsdom (a few tens of MB). */
const WARM_AUDIT_MAX_PAGES = 50;

type Facts = { meta: DocumentFacts['meta']; labels: Map<number, string> };

export const createConversionEngine: CreateConversionEngine = (options) => {
  const { log } = options;
  const poolSize = Math.max(1, options.poolSize ?? options.conversion.poolSize);
  let pool: PagePool | undefined;
  let vision: VisionBackend | undefined;
  let parser: ParserBackend | undefined;
  let closed = false;

  const getPool = () => {
    if (closed) throw new Error('the conversion engine is closed');
    return (pool ??= createPagePool({ size: poolSize, externalMb: options.workerExternalMb }));
  };
  /** Document facts by content hash: the chunks of one document share them instead of re-reading the PDF. */
  const factsCache = new Map<string, Facts>();

  /** Document-level facts every page needs (language, tagging, page labels), read in a page worker. */
  const documentFacts = async (pdf: Uint8Array, key: string, sourceName = 'document.pdf'): Promise<Facts> => {
    const { meta, labels } = await getPool().inspect({ pdf, key, sourceName });
    const facts = { meta, labels: new Map(labels) };
    factsCache.delete(key);
    factsCache.set(key, facts);
    if (factsCache.size > 8) factsCache.delete(factsCache.keys().next().value!);
    return facts;
  };

  const checkPages = (pages: number[], pageCount: number) => {
    for (const page of pages) {
      if (!Number.isInteger(page) || page < 1 || page > pageCount) throw new RangeError(`page ${page} is not in the document (1-${pageCount})`);
    }
  };

  /** The audit runs in a page worker, while this thread draws the tagged PDF; after close(), here. */
  const renderOptions = (extras: RenderExtras = {}) => ({
    ...extras,
    log,
    audit: async (input: AuditInput, { long }: { long: boolean }) => {
      // jsdom and axe-core load into this thread only when a worker cannot audit
      const auditHere = async () => (await import('./audit/audit-html.ts')).auditHtml(input);
      if (closed) return auditHere();
      return getPool()
        .audit(input, { releaseIdle: long })
        .catch((error: Error) => {
          // a worker that ran out of memory on a huge slice, or a pool closed meanwhile: the audit still has to happen
          log.warn({ err: error }, 'audit in a page worker failed; auditing in the engine thread');
          return auditHere();
        });
    },
  });

  const hashOf = (pdf: Uint8Array) => createHash('sha256').update(pdf).digest('hex');

  const engine: ConversionEngine = {
    concurrency: poolSize,

    async inspect(pdf, inspectOptions) {
      checkPdfBytes(pdf);
      const sourceName = inspectOptions?.sourceName ?? 'document.pdf';
      // the conversion that usually follows an inspect needs the same facts: read the PDF once
      const facts = documentFacts(pdf, hashOf(pdf), sourceName);
      // A second worker loads the audit's jsdom and axe-core (~0.3 s) while the first reads the document:
      // a short document's audit then starts at once, a long one's finds them loaded. The worker takes pages too.
      getPool().warmAudit();
      const { meta } = await facts;
      // a long document's pages would share that worker with jsdom for minutes: it starts afresh for them
      if (meta.pageCount > WARM_AUDIT_MAX_PAGES) getPool().coolAudit();
      return { ...meta, sourceName };
    },

    async convertPages(pdf, input) {
      if (closed) throw new Error('the conversion engine is closed');
      input.signal?.throwIfAborted();
      const key = hashOf(pdf);
      const { meta, labels } = factsCache.get(key) ?? (await documentFacts(pdf, key, input.sourceName));
      checkPages(input.pages, meta.pageCount);
      const jobOptions = { docLang: meta.lang, tagged: meta.tagged };

      if (input.backend === 'local') {
        return getPool().run({ pdf, key, pages: input.pages, options: jobOptions, labels, signal: input.signal, onPage: input.onPage });
      }

      if (input.backend === 'parser') {
        const { createParserBackend } = await import('./backends/parser/parser-backend.ts');
        parser ??= createParserBackend({ parser: options.conversion.parser, log });
        const results = await parser.convertPages(pdf, input.pages, { signal: input.signal });
        for (const result of results) {
          if (labels.has(result.page)) result.label = labels.get(result.page)!;
          await input.onPage?.(result);
        }
        return results;
      }

      const [{ createVisionBackend }, { convertLocalPage }, { openPdf }] = await Promise.all([
        import('./backends/vision/vision-backend.ts'),
        import('./backends/local/convert-page.ts'),
        import('./backends/local/pdf.ts'),
      ]);
      vision ??= createVisionBackend({ bedrock: options.conversion.bedrock, log });
      const doc = await openPdf(pdf);
      try {
        const results: PageResult[] = [];
        for (const page of input.pages) {
          input.signal?.throwIfAborted();
          const pdfPage = await doc.getPage(page);
          const content = await pdfPage.getTextContent();
          const textLayerText = content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : ' ') : '')).join('');
          pdfPage.cleanup();
          const result = await vision.convertPage(pdf, page, {
            textLayerText,
            signal: input.signal,
            batchRecord: input.batchRecords?.get(page),
            // the local engine in this thread: a fallback page is rare, and the pool may be busy with other documents
            fallback: () => convertLocalPage(doc, page, { ...jobOptions, label: labels.get(page) }),
          });
          if (labels.has(page)) result.label = labels.get(page)!;
          results.push(result);
          await input.onPage?.(result);
        }
        return results;
      } finally {
        await doc.loadingTask.destroy();
      }
    },

    async render(document) {
      const { renderDocument } = await import('./render/render-document.ts');
      return renderDocument(document, renderOptions());
    },

    openRender(meta, target, extras) {
      // loaded on first use: the renderer and audit pull in pdfkit, axe-core and jsdom, which page conversion never needs;
      // and once the caller has sent its first pages to a worker (a render opens just before), as compiling it holds this thread
      const opened = new Promise((resolve) => setImmediate(resolve))
        .then(() => import('./render/stream.ts'))
        .then(({ openDocumentRender }) => openDocumentRender(meta, target, renderOptions(extras)));
      opened.catch(() => undefined);
      return {
        add: async (page) => (await opened).add(page),
        finish: async () => (await opened).finish(),
        abort: async () => (await opened).abort(),
      };
    },

    zip(outputs, baseName) {
      return zipOutputs(outputs, baseName);
    },

    zipFiles(files, baseName) {
      return zipFiles(files, baseName);
    },

    convertDocx(docx, options) {
      return getPool().docx(docx, options);
    },

    async close() {
      closed = true;
      const current = pool;
      pool = undefined;
      await current?.close();
    },
  };
  return engine;
};
