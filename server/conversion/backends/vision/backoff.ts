/** Exponential backoff with jitter, bounded, and cut short by an abort. */
export type RetryPolicy = {
  /** attempts in all, the first included */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
};

/**
 * The wait before retry number `retry` (1 for the first retry): base × 2^(retry-1),
 * capped, then jittered into [half, full] so that pages throttled together do
 * not come back together.
 */
export function backoffDelay(policy: RetryPolicy, retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
