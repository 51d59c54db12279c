/**
 * Group commit for the library's two database hooks. Every send needs one
 * suppression lookup and one log write; at 32 concurrent sends that is most of
 * the library's cost, so calls that arrive while a batch is in flight wait and
 * go together in the next one. An idle library sends a batch of one at once
 * (after the current tick, to gather calls made together), so a lone send
 * pays nothing for this.
 */
export type Batcher<In, Out> = (item: In) => Promise<Out>;

/** `run` answers every item in order: a batch-wide failure rejects them all, a per-item one only that caller. */
export function createBatcher<In, Out>(
  run: (items: In[]) => Promise<Array<PromiseSettledResult<Out>>>,
  options: { maxBatch: number; maxInFlight: number },
): Batcher<In, Out> {
  type Waiting = { item: In; resolve: (value: Out) => void; reject: (error: unknown) => void };
  let waiting: Waiting[] = [];
  let inFlight = 0;
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    while (waiting.length > 0 && inFlight < options.maxInFlight) {
      const batch = waiting.slice(0, options.maxBatch);
      waiting = waiting.slice(batch.length);
      inFlight++;
      run(batch.map((entry) => entry.item))
        .then(
          (results) =>
            batch.forEach((entry, index) => {
              const result = results[index];
              if (result?.status === 'fulfilled') entry.resolve(result.value);
              else entry.reject(result ? result.reason : new Error('batch answered fewer items than it was given'));
            }),
          (error: unknown) => batch.forEach((entry) => entry.reject(error)),
        )
        .finally(() => {
          inFlight--;
          flush();
        });
    }
  };

  return (item) =>
    new Promise<Out>((resolve, reject) => {
      waiting.push({ item, resolve, reject });
      if (!scheduled && inFlight < options.maxInFlight) {
        scheduled = true;
        setImmediate(flush);
      }
    });
}
