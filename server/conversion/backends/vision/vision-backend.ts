import type { Config } from '../../../config.ts';
import type { Log } from '../../../log.ts';
import type { Block, PageResult } from '../../model.ts';
import type { RetryPolicy } from './backoff.ts';
import { createConverseClient, type ConverseAnswer } from './bedrock-converse.ts';
import { COVERAGE_THRESHOLD, textCoverage, wordsOf } from './coverage.ts';
import { cutPage } from './cut-page.ts';
import { htmlToBlocks } from './html-to-blocks.ts';
import { blocksText, classify, structuralReasons } from '../../page-content.ts';
import { hashPrompt, visionPrompt, type VisionPrompt } from './prompt.ts';

/**
 * The high-fidelity backend: each page, cut into its own one-page PDF, goes
 * to a vision model on Amazon Bedrock (Converse) which writes the page as
 * semantic HTML; we parse that into the document model. A page the model
 * will not or cannot do properly falls back to the local engine, so a page
 * always comes out.
 */

export { hashPrompt, visionPrompt, SYSTEM_PROMPT, PAGE_TEXT, COVERAGE_TEXT } from './prompt.ts';
export { htmlToBlocks } from './html-to-blocks.ts';

/**
 * Stop reasons whose text is not the page: a guardrail or content filter
 * replaced or cut it, or the answer was truncated (`max_tokens`, and the
 * newer `model_context_window_exceeded`, which truncates the same way).
 */
const REJECTED_STOP_REASONS: ReadonlySet<string> = new Set(['guardrail_intervened', 'content_filtered', 'max_tokens', 'model_context_window_exceeded']);

/**
 * Whether an answer may be used for a page, on demand or from a batch record:
 * non-empty text and a stop reason that did not cut or replace it.
 */
export function isAcceptableAnswer(answer: { text: string; stopReason: string }): boolean {
  return answer.text.trim() !== '' && !REJECTED_STOP_REASONS.has(answer.stopReason);
}

/**
 * Price per 1,000 tokens in USD, on-demand, of the default model (Claude 3.5
 * Sonnet v2 on Bedrock, us-east-1 list price: $3 per million input tokens,
 * $15 per million output tokens). Pass `pricePer1kTokens` for another model.
 */
const DEFAULT_PRICE_PER_1K_TOKENS = { input: 0.003, output: 0.015 } as const;

/** Models like to wrap HTML in Markdown fences or a whole document; we want what is inside. */
function extractHtml(text: string): string {
  const fenced = /```(?:html)?\s*\n([\s\S]*?)```/i.exec(text);
  return fenced ? fenced[1]! : text;
}

type VisionPageContext = { textLayerText: string; signal?: AbortSignal; fallback: () => Promise<PageResult> };

export type VisionBackend = {
  convertPage(pdf: Uint8Array, page: number, context: VisionPageContext): Promise<PageResult>;
};

type Candidate = { answer: ConverseAnswer; prompt: VisionPrompt; blocks: Block[]; coverage: number };

export function createVisionBackend(options: {
  bedrock: Config['conversion']['bedrock'];
  log: Log;
  /** transport retries (throttling, 5xx, timeouts); defaults to CONVERSE_RETRY */
  retry?: RetryPolicy;
  /** per-request timeout; defaults to CONVERSE_TIMEOUT_MS */
  timeoutMs?: number;
  pricePer1kTokens?: { input: number; output: number };
}): VisionBackend {
  const { bedrock, log } = options;
  const price = options.pricePer1kTokens ?? DEFAULT_PRICE_PER_1K_TOKENS;
  const client = createConverseClient({ bedrock, log, retry: options.retry, timeoutMs: options.timeoutMs });

  return {
    async convertPage(pdf, page, context) {
      const started = performance.now();
      const tokens = { input: 0, output: 0 };
      const costUsd = () => (tokens.input * price.input + tokens.output * price.output) / 1000;
      const textLayerWords = wordsOf(context.textLayerText).length;

      const fallBack = async (why: string, cause?: unknown): Promise<PageResult> => {
        context.signal?.throwIfAborted();
        log.warn({ page, why, error: cause instanceof Error ? cause.name : undefined }, 'vision page falls back to the local engine');
        const local = await context.fallback();
        return {
          ...local,
          warnings: [...local.warnings, `${why}; page converted by the local engine`],
          costUsd: local.costUsd + costUsd(),
          timings: { ms: Math.round(performance.now() - started) },
        };
      };

      let pagePdf: Uint8Array;
      try {
        pagePdf = await cutPage(pdf, page);
      } catch (error) {
        return fallBack('vision: the page could not be cut into its own PDF', error);
      }

      /** One model call; undefined when the answer is not acceptable (the reason goes to `rejections`). */
      const rejections: string[] = [];
      const ask = async (prompt: VisionPrompt): Promise<Candidate | undefined> => {
        const answer = await client.converse(pagePdf, page, prompt, context.signal);
        tokens.input += answer.inputTokens;
        tokens.output += answer.outputTokens;
        if (!isAcceptableAnswer(answer)) {
          rejections.push(answer.text.trim() === '' ? `empty text (stop reason ${answer.stopReason})` : `stop reason ${answer.stopReason}`);
          return undefined;
        }
        const blocks = htmlToBlocks(extractHtml(answer.text), page);
        if (blocks.length === 0) {
          rejections.push(`no usable content (stop reason ${answer.stopReason})`);
          return undefined;
        }
        return { answer, prompt, blocks, coverage: textCoverage(context.textLayerText, blocksText(blocks)) };
      };

      let chosen: Candidate | undefined;
      const warnings: string[] = [];
      try {
        const primary = visionPrompt(bedrock, 'page');
        // An unacceptable answer earns one more try of the same request, then the local engine.
        chosen = (await ask(primary)) ?? (await ask(primary));
        if (!chosen) return await fallBack(`vision model answer rejected twice (${rejections.join('; ')})`);
        if (chosen.coverage < COVERAGE_THRESHOLD) {
          const retry = await ask(visionPrompt(bedrock, 'coverage'));
          if (retry && retry.coverage > chosen.coverage) chosen = retry;
        }
      } catch (error) {
        if (context.signal?.aborted) throw context.signal.reason ?? error;
        if (chosen) {
          // The coverage re-ask failed in transport: the first acceptable answer stands.
          warnings.push(`vision coverage re-ask failed (${(error as Error).name})`);
        } else {
          return await fallBack(`vision model unavailable (${(error as Error).name})`, error);
        }
      }

      const reasons = structuralReasons(chosen.blocks);
      if (chosen.coverage < COVERAGE_THRESHOLD) {
        reasons.push('low-coverage');
        warnings.push(`vision output covers ${Math.round(chosen.coverage * 100)}% of the page's text layer words`);
      }
      return {
        page,
        label: String(page),
        backend: 'chunked-vision',
        classification: classify(reasons),
        reasons,
        blocks: chosen.blocks,
        warnings,
        textLayerWords,
        ocr: false,
        timings: { ms: Math.round(performance.now() - started) },
        costUsd: costUsd(),
        model: client.modelId,
        promptHash: hashPrompt(chosen.prompt),
      };
    },
  };
}
