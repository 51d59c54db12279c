import { createTRPCClient, httpBatchLink, type TRPCClient, TRPCClientError } from '@trpc/client';
import type { AppRouter } from '../server/routers/index.ts';
import { apiUrl, authHeaders, type FolioClientOptions } from './options.ts';

export { absoluteUrl } from './options.ts';

export type { AppRouter, FolioClientOptions };
export { TRPCClientError };

/**
 * A typed client for every Folio procedure; its types come from the server's
 * router, so a renamed field fails the caller's type check, not production.
 *
 *   const folio = createFolioClient({ baseUrl, token });
 *   const me = await folio.account.me.query();
 */
export function createFolioClient(options: FolioClientOptions): TRPCClient<AppRouter> {
  return createTRPCClient<AppRouter>({
    // Calls made together share one request; a long batch is split before its URL outgrows what proxies accept.
    links: [httpBatchLink({ url: apiUrl(options, '/trpc'), fetch: options.fetch, headers: () => authHeaders(options), maxURLLength: 8_000 })],
  });
}

export type FolioClient = TRPCClient<AppRouter>;

export { BENCHMARK_POLL_MS, type BenchmarkResult, type BenchmarkSession, watchBenchmark } from './benchmark.ts';
export { devTokensAvailable, mintDevToken } from './dev-token.ts';
export { errorCode, FolioError, type FolioErrorCode, type FolioErrorIssue, toFolioError } from './errors.ts';
export { type ConversionEvent, type ConversionEventType, watchConversion } from './events.ts';
export { type UploadedFile, uploadFile, type UploadOptions, type UploadProgress } from './upload.ts';
export {
  verifyWebhook,
  type VerifyWebhookError,
  type VerifyWebhookOptions,
  type VerifyWebhookResult,
  type WebhookHeaders,
  type WebhookPayload,
} from './verify-webhook.ts';
