import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import type { AppRouter } from '../server/routers/index.ts';

export type { AppRouter };
export { TRPCClientError };

export type FolioClientOptions = {
  /** where Folio runs, e.g. http://localhost:3000 */
  baseUrl: string;
  /** a Bearer session token, or a function giving the current one */
  token?: string | (() => string | undefined | Promise<string | undefined>);
  fetch?: typeof fetch;
};

/**
 * A typed client for every Folio procedure; its types come from the server's
 * router, so a renamed field fails the caller's type check, not production.
 *
 *   const folio = createFolioClient({ baseUrl, token });
 *   const me = await folio.account.me.query();
 */
export function createFolioClient(options: FolioClientOptions) {
  const base = options.baseUrl.replace(/\/+$/, '');
  return createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: `${base}/trpc`,
        fetch: options.fetch,
        headers: async () => {
          const token = typeof options.token === 'function' ? await options.token() : options.token;
          return token ? { authorization: `Bearer ${token}` } : {};
        },
      }),
    ],
  });
}

export type FolioClient = ReturnType<typeof createFolioClient>;

/** The stable error code (e.g. CONVERSION_FINISHING) of a failed call, if it is one of ours. */
export function errorCode(error: unknown): string | undefined {
  if (error instanceof TRPCClientError) {
    const data = error.data as { code?: unknown } | undefined;
    return typeof data?.code === 'string' ? data.code : undefined;
  }
  return undefined;
}

export {
  verifyWebhook,
  type VerifyWebhookError,
  type VerifyWebhookOptions,
  type VerifyWebhookResult,
  type WebhookHeaders,
  type WebhookPayload,
} from './verify-webhook.ts';
