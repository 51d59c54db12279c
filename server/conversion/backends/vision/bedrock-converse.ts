import { BedrockRuntimeClient, ConverseCommand, type ConverseCommandInput } from '@aws-sdk/client-bedrock-runtime';
import type { Config } from '../../../config.ts';
import type { Log } from '../../../log.ts';
import { backoffDelay, sleep, type RetryPolicy } from './backoff.ts';
import type { VisionPrompt } from './prompt.ts';
import { cloudCredentials } from '../../../cloud-credentials.ts';

/**
 * Amazon Bedrock's Converse API, one page per request: the page goes in as a
 * one-page PDF document block, the prompt as system text plus user text, and
 * the answer comes back as text with a stop reason and token usage. This
 * module owns that wire format and the transport retries; what to make of an
 * answer is the backend's business.
 */

export type ConverseAnswer = { text: string; stopReason: string; inputTokens: number; outputTokens: number };

/**
 * Failures worth a retry: throttling (per-minute quotas refill), the
 * service's 5xx family, a model still warming up or timing out, and the
 * network dropping or timing out. Everything else (validation, access,
 * unknown model) fails the same way again.
 */
const TRANSIENT_ERRORS = new Set([
  'ThrottlingException',
  'ServiceUnavailableException',
  'InternalServerException',
  'ModelNotReadyException',
  'ModelTimeoutException',
  'TimeoutError',
  'RequestTimeout',
  'RequestTimeoutException',
]);
const TRANSIENT_NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'ECONNABORTED',
  'ERR_HTTP2_STREAM_ERROR',
  'ERR_HTTP2_SESSION_ERROR',
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_INVALID_SESSION',
]);

/**
 * Five attempts, waits of about 1, 2, 4 and 8 s: Bedrock's on-demand quotas
 * are per minute, so a page that is throttled has usually room again within
 * ~15 s; beyond that the page is better served by the local engine than by
 * holding a chunk worker.
 */
const CONVERSE_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 1000, maxDelayMs: 8000 };

/** A page of dense text can take the model a minute or two to write out; past three, the call is stuck. */
const CONVERSE_TIMEOUT_MS = 180_000;

function isTransientBedrockError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
  const code = (error as { code?: string }).code;
  return (
    TRANSIENT_ERRORS.has(error.name) || status === 429 || (status !== undefined && status >= 500) || (code !== undefined && TRANSIENT_NETWORK_CODES.has(code))
  );
}

/** The Converse request for one page: bytes as a document block, then the user text. */
function buildConverseInput(modelId: string, pagePdf: Uint8Array, page: number, prompt: VisionPrompt): ConverseCommandInput {
  return {
    modelId,
    system: [{ text: prompt.system }],
    messages: [
      {
        role: 'user',
        content: [
          // Document names allow letters, digits, single spaces, hyphens, parentheses and brackets.
          { document: { format: 'pdf', name: `page-${page}`, source: { bytes: pagePdf } } },
          { text: prompt.text },
        ],
      },
    ],
    inferenceConfig: { maxTokens: prompt.maxTokens, temperature: prompt.temperature },
  };
}

export type ConverseClient = {
  /** Sends one page; retries transient failures; throws the last error when they run out or on abort. */
  converse(pagePdf: Uint8Array, page: number, prompt: VisionPrompt, signal?: AbortSignal): Promise<ConverseAnswer>;
  modelId: string;
};

export function createConverseClient(options: { bedrock: Config['conversion']['bedrock']; log: Log; retry?: RetryPolicy; timeoutMs?: number }): ConverseClient {
  const { bedrock, log } = options;
  const retry = options.retry ?? CONVERSE_RETRY;
  const timeoutMs = options.timeoutMs ?? CONVERSE_TIMEOUT_MS;
  const client = new BedrockRuntimeClient({
    region: bedrock.region,
    endpoint: bedrock.endpoint,
    // Retries are ours (above), so that their number and waits are known and an abort cuts them short.
    maxAttempts: 1,
    credentials: cloudCredentials(bedrock),
    // The runtime client's default handler is HTTP/2; requestTimeout is how long a stream may sit idle.
    requestHandler: { requestTimeout: timeoutMs },
  });

  return {
    modelId: bedrock.modelId,
    async converse(pagePdf, page, prompt, signal) {
      const input = buildConverseInput(bedrock.modelId, pagePdf, page, prompt);
      for (let attempt = 1; ; attempt++) {
        try {
          const response = await client.send(new ConverseCommand(input), { abortSignal: signal });
          const text = (response.output?.message?.content ?? []).map((block) => ('text' in block && typeof block.text === 'string' ? block.text : '')).join('');
          return {
            text,
            stopReason: response.stopReason ?? 'unknown',
            inputTokens: response.usage?.inputTokens ?? 0,
            outputTokens: response.usage?.outputTokens ?? 0,
          };
        } catch (error) {
          if (signal?.aborted) throw signal.reason ?? error;
          if (!isTransientBedrockError(error) || attempt >= retry.maxAttempts) throw error;
          const wait = backoffDelay(retry, attempt);
          log.warn({ page, attempt, error: (error as Error).name, waitMs: wait }, 'bedrock converse failed; retrying');
          await sleep(wait, signal);
        }
      }
    },
  };
}
