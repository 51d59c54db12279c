/**
 * Polls `read` until `ok` accepts its value, for at most `timeoutMs`: the one
 * bounded wait of the tests, so no test sleeps in place of "the job is
 * probably done". The timeout names what was awaited and the last value seen.
 */
export async function until<T>(read: () => Promise<T> | T, ok: (value: T) => boolean, timeoutMs = 30_000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${String(JSON.stringify(value)).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Resolves with the first truthy value `check` gives, within `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 5_000, what = 'condition'): Promise<NonNullable<T>> {
  return (await until(check, Boolean, timeoutMs, what)) as NonNullable<T>;
}
