import { createHash } from 'node:crypto';
import type { PDFDocumentProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { createParserBackend, type ParserBackend } from './backends/parser/index.ts';
import { createVisionBackend, type VisionBackend } from './backends/vision/index.ts';
import { convertLocalPage, openPdf, pageLabels, readMeta } from './backends/local/index.ts';
import type { ConversionEngine, CreateConversionEngine } from './engine.ts';
import { joinContinuedFootnotes } from './footnotes.ts';
import type { PageResult } from './model.ts';
import { createPagePool, type PagePool } from './pool/index.ts';
import { zipOutputs } from './render/zip.ts';

/**
 * The conversion engine (contract in engine.ts): inspect a PDF, convert its
 * pages with one of three backends, render and zip the outputs. The local
 * backend runs on a pool of worker threads created on first use; vision and
 * parser call out, the vision backend falling back to the local one per page.
 */

export type { ConversionEngine, ConversionOutputs, EngineOptions, ConvertPagesInput, ConversionReport } from './engine.ts';


export const createConversionEngine: CreateConversionEngine = (options) => {
  const { log } = options;
  const poolSize = Math.max(1, options.poolSize ?? options.conversion.poolSize);
  let pool: PagePool | undefined;
  let vision: VisionBackend | undefined;
  let parser: ParserBackend | undefined;
  let closed = false;

  const getPool = () => (pool ??= createPagePool({ size: poolSize }));
  /** Document facts by content hash: the chunks of one document share them instead of re-reading the PDF. */
  const factsCache = new Map<string, Awaited<ReturnType<typeof documentFacts>>>();

  /** Document-level facts every page needs: language, tagging, page labels. */
  const documentFacts = async (doc: PDFDocumentProxy, sourceName = 'document.pdf') => {
    const meta = await readMeta(doc, sourceName);
    const labels = await pageLabels(doc);
    const labelMap = new Map<number, string>();
    labels?.forEach((label, index) => {
      if (label) labelMap.set(index + 1, label);
    });
    return { meta, labels: labelMap };
  };

  const rememberFacts = (key: string, facts: Awaited<ReturnType<typeof documentFacts>>) => {
    factsCache.delete(key);
    factsCache.set(key, facts);
    if (factsCache.size > 8) factsCache.delete(factsCache.keys().next().value!);
  };

  const checkPages = (pages: number[], pageCount: number) => {
    for (const page of pages) {
      if (!Number.isInteger(page) || page < 1 || page > pageCount) throw new RangeError(`page ${page} is not in the document (1-${pageCount})`);
    }
  };

  const engine: ConversionEngine = {
    async inspect(pdf, inspectOptions) {
      const sourceName = inspectOptions?.sourceName ?? 'document.pdf';
      const doc = await openPdf(pdf);
      try {
        const facts = await documentFacts(doc, sourceName);
        // the conversion that usually follows an inspect needs the same facts: read the PDF once
        rememberFacts(createHash('sha256').update(pdf).digest('hex'), facts);
        return { ...facts.meta, sourceName };
      } finally {
        await doc.loadingTask.destroy();
      }
    },

    async convertPages(pdf, input) {
      if (closed) throw new Error('the conversion engine is closed');
      input.signal?.throwIfAborted();
      const key = createHash('sha256').update(pdf).digest('hex');
      if (input.backend === 'local' && factsCache.has(key)) {
        const { meta, labels } = factsCache.get(key)!;
        checkPages(input.pages, meta.pageCount);
        return getPool().run({ pdf, key, pages: input.pages, options: { docLang: meta.lang, tagged: meta.tagged }, labels, signal: input.signal, onPage: input.onPage });
      }
      const doc = await openPdf(pdf);
      try {
        const facts = await documentFacts(doc, input.sourceName);
        rememberFacts(key, facts);
        const { meta, labels } = facts;
        checkPages(input.pages, meta.pageCount);
        const jobOptions = { docLang: meta.lang, tagged: meta.tagged };

        if (input.backend === 'local') {
          await doc.loadingTask.destroy();
          return await getPool().run({ pdf, key, pages: input.pages, options: jobOptions, labels, signal: input.signal, onPage: input.onPage });
        }

        if (input.backend === 'parser') {
          parser ??= createParserBackend({ parser: options.conversion.parser, log });
          const results = await parser.convertPages(pdf, input.pages, { signal: input.signal });
          for (const result of results) {
            if (labels.has(result.page)) result.label = labels.get(result.page)!;
            await input.onPage?.(result);
          }
          return results;
        }

        vision ??= createVisionBackend({ bedrock: options.conversion.bedrock, log });
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
            // the local engine in this thread: a fallback page is rare, and the pool may be busy with other documents
            fallback: () => convertLocalPage(doc, page, { ...jobOptions, label: labels.get(page) }),
          });
          if (labels.has(page)) result.label = labels.get(page)!;
          results.push(result);
          await input.onPage?.(result);
        }
        return results;
      } finally {
        if (input.backend !== 'local') await doc.loadingTask.destroy();
      }
    },

    async render(document) {
      // loaded on first use: the renderer and audit pull in pdfkit, axe-core and jsdom, which page conversion never needs
      const { renderDocument } = await import('./render/index.ts');
      // pages were converted one by one: a footnote running over a page's foot is joined up first
      document = joinContinuedFootnotes(document);
      // after close() there is no pool to start again: the audit then runs here
      if (closed) return renderDocument(document, { log });
      const workers = getPool();
      return renderDocument(document, {
        log,
        audit: (input) =>
          workers.audit(input).catch(async (error: Error) => {
            // a worker that ran out of memory on a huge slice, or a closed pool: the audit still has to happen
            log.warn({ err: error }, 'audit in a page worker failed; auditing in the engine thread');
            const { auditHtml } = await import('./audit/index.ts');
            return auditHtml(input);
          }),
      });
    },

    zip(outputs, baseName) {
      return zipOutputs(outputs, baseName);
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
