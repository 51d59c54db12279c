import type { TRPCClient } from '@trpc/client';
import type { AppRouter } from '../server/routers/index.ts';
import { toFolioError } from './errors.ts';

/** A benchmark session as GET /api/benchmark/{sessionId} answers it: one result per pipeline, in the order asked for. */
export type BenchmarkSession = Awaited<ReturnType<TRPCClient<AppRouter>['benchmark']['get']['query']>>;
export type BenchmarkResult = BenchmarkSession['results'][number];

/** The specification's polling interval for a running session. */
export const BENCHMARK_POLL_MS = 3_000;

/**
 * A benchmark session as it runs: the session now, then again every
 * `intervalMs` (3 seconds, as the service asks), ending after the first
 * `complete` one. A failed read throws FolioError; aborting the signal ends
 * the iterator quietly between reads.
 *
 *   for await (const session of watchBenchmark(folio, sessionId)) show(session.results);
 */
export async function* watchBenchmark(
  client: TRPCClient<AppRouter>,
  sessionId: string,
  init: { intervalMs?: number; signal?: AbortSignal } = {},
): AsyncGenerator<BenchmarkSession, void, undefined> {
  const interval = init.intervalMs ?? BENCHMARK_POLL_MS;
  for (;;) {
    if (init.signal?.aborted) return;
    let session: BenchmarkSession;
    try {
      session = await client.benchmark.get.query({ sessionId }, { signal: init.signal });
    } catch (error) {
      const folioError = toFolioError(error);
      if (init.signal?.aborted) return;
      throw folioError;
    }
    yield session;
    if (session.status === 'complete') return;
    if (!(await pause(interval, init.signal))) return;
  }
}

/** Waits `ms`; false when the signal aborted the wait. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
