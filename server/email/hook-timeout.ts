/** The specification's "library hook timeouts": the suppression lookup and the send-log write get 2.5 s each. */
export const HOOK_TIMEOUT_MS = 2_500;

export type Bounded<T> = { ok: true; value: T } | { ok: false; timedOut: boolean; error?: unknown };

/**
 * Waits for `work` at most `ms`. The work itself is not cancelled (a database
 * statement keeps running); its late result or error is dropped quietly.
 */
export async function withinTimeout<T>(work: Promise<T>, ms: number): Promise<Bounded<T>> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Bounded<T>>((resolve) => {
    timer = setTimeout(() => resolve({ ok: false, timedOut: true }), ms);
  });
  const settled = work.then(
    (value): Bounded<T> => ({ ok: true, value }),
    (error: unknown): Bounded<T> => ({ ok: false, timedOut: false, error }),
  );
  try {
    return await Promise.race([settled, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
