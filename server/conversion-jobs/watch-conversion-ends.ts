import type { Deps } from '../deps.ts';
import { createConversionEvents } from './events.ts';

/** Notices the conversion service sends on the commit that ends a job (runner, cancel_conversion_job). */
const ENDING_EVENTS = new Set(['completed', 'failed', 'cancelled']);

/**
 * Hears that a file's conversion ended, without a line changed in the
 * conversion service: it NOTIFYs on the commit that completes, fails or
 * cancels a job (the SSE listener uses the same channel). `onEnd` also runs
 * after a dropped connection, when an end may have been missed, so it must
 * look before it acts; whoever watches keeps a sweep for ends heard by no
 * process.
 */
export function createConversionEndWatch(deps: Pick<Deps, 'databaseUrl' | 'log'>) {
  const events = createConversionEvents(deps.databaseUrl, deps.log);
  const watching = new Map<string, () => void>();
  return {
    /** Resolves once the subscription is live, so a conversion started after it cannot end unheard. */
    async watch(fileId: string, onEnd: () => void): Promise<void> {
      if (watching.has(fileId)) return;
      const unsubscribe = await events.subscribe(fileId, (notice) => {
        if (!ENDING_EVENTS.has(notice.event) && notice.event !== 'resync') return;
        if (ENDING_EVENTS.has(notice.event)) {
          watching.get(fileId)?.();
          watching.delete(fileId);
        }
        onEnd();
      });
      watching.set(fileId, unsubscribe);
    },
    close(): void {
      for (const unsubscribe of watching.values()) unsubscribe();
      watching.clear();
    },
  };
}
