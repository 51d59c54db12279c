import type { Config } from '../../../config.ts';
import { DomainError } from '../../../errors.ts';
import type { Log } from '../../../log.ts';
import type { PageResult } from '../../model.ts';
import type { RetryPolicy } from '../vision/backoff.ts';
import { cutPage } from '../vision/cut-page.ts';
import { htmlToBlocks } from '../vision/html-to-blocks.ts';
import { classify, structuralReasons } from '../../page-content.ts';
import { createParserClient } from './parser-api.ts';
/**
 * The document-parser backend: each page goes to the external parser as its
 * own one-page PDF (one job per page, so results map to pages without
 * guessing where the service's output breaks pages), and the HTML it returns
 * is parsed into the document model with the same allow-list as the vision
 * backend. Unlike the vision backend there is no local fallback here: a bad
 * key fails the whole run at once (ERR_PARSER_API_KEY_INVALID, permanent), an
 * outage fails it after bounded retries (ERR_PARSER_SUBMIT_FAILED, retryable),
 * and the caller decides what to do with the chunk.
 */

/** Pages in flight at once: the service does the work, we only wait, and its rate limits are per key. */
const PARSER_CONCURRENCY = 4;

/**
 * Estimated price of one page in USD (Mathpix-style PDF pricing is per page,
 * in the region of half a cent); pass `pricePerPageUsd` to match the contract.
 */
const DEFAULT_PARSER_PRICE_PER_PAGE_USD = 0.005;

export type ParserBackend = {
  convertPages(pdf: Uint8Array, pages: number[], context: { signal?: AbortSignal }): Promise<PageResult[]>;
};

export function createParserBackend(options: {
  parser: Config['conversion']['parser'];
  log: Log;
  retry?: RetryPolicy;
  pollIntervalMs?: number;
  deadlineMs?: number;
  concurrency?: number;
  pricePerPageUsd?: number;
}): ParserBackend {
  const { log } = options;
  const client = createParserClient({
    url: options.parser.url,
    apiKey: options.parser.apiKey,
    log,
    retry: options.retry,
    pollIntervalMs: options.pollIntervalMs,
    deadlineMs: options.deadlineMs,
  });
  const concurrency = Math.max(1, options.concurrency ?? PARSER_CONCURRENCY);
  const pricePerPage = options.pricePerPageUsd ?? DEFAULT_PARSER_PRICE_PER_PAGE_USD;

  async function convertPage(pdf: Uint8Array, page: number, signal: AbortSignal): Promise<PageResult> {
    const started = performance.now();
    let pagePdf: Uint8Array;
    try {
      pagePdf = await cutPage(pdf, page);
    } catch (error) {
      throw new DomainError('ERR_PARSER_SUBMIT_FAILED', 'The page could not be prepared for the document processing service (ERR_PARSER_SUBMIT_FAILED).', {
        retryable: false,
        context: { page },
        cause: error,
      });
    }
    const html = await client.convertToHtml(pagePdf, `page-${page}.pdf`, signal);
    const blocks = htmlToBlocks(html, page);
    const reasons = structuralReasons(blocks);
    return {
      page,
      label: String(page),
      backend: 'parser',
      classification: classify(reasons),
      reasons,
      blocks,
      warnings: blocks.length === 0 ? ['the document processing service found no content on this page'] : [],
      // The parser does not read the text layer; the engine fills this in when it needs it.
      textLayerWords: 0,
      ocr: false,
      timings: { ms: Math.round(performance.now() - started) },
      costUsd: pricePerPage,
    };
  }

  return {
    async convertPages(pdf, pages, context) {
      // The first failure stops the pages not yet started and cancels those in flight.
      const stop = new AbortController();
      const signal = context.signal ? AbortSignal.any([context.signal, stop.signal]) : stop.signal;
      const results: PageResult[] = new Array(pages.length);
      let next = 0;
      let failure: unknown;
      const worker = async () => {
        while (next < pages.length && !signal.aborted) {
          const index = next++;
          try {
            results[index] = await convertPage(pdf, pages[index]!, signal);
          } catch (error) {
            if (failure === undefined) failure = error;
            stop.abort(error);
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, pages.length) }, worker));
      if (context.signal?.aborted) throw context.signal.reason;
      if (failure !== undefined) throw failure;
      return results;
    },
  };
}
