import { watchTableWrites } from '../db/database.ts';
import type { SuppressionRow } from './email.queries.ts';
import type { SuppressionReason } from './types.ts';

/**
 * How long a looked-up address (suppressed or not) is trusted without asking
 * the database again. The specification lets suppressions be cached briefly;
 * a write made by this process takes effect at once (below), one made by
 * another process (the worker's poller) within this time.
 */
const SUPPRESSION_CACHE_MS = 30_000;
const MAX_ENTRIES = 50_000;

// One counter for the whole process: any write to the suppression list made
// here empties every cache here. Writes are rare (bounces, complaints, an
// admin's removal), so forgetting everything costs nothing worth tracking.
let generation = 0;

/** Tells every suppression cache of this process that the list changed. */
export function suppressionsChanged(): void {
  generation++;
}

// Statements of this process that write the table (an admin's delete, a test's
// insert, a truncate) count as a change without their callers having to say so.
watchTableWrites('email_suppressions', suppressionsChanged);

type Entry = { reason: SuppressionReason | undefined; at: number; generation: number };

/**
 * Answers from memory for addresses looked up in the last `ttlMs` and asks
 * `lookup` only for the rest. A failed lookup caches nothing and rejects (the
 * send then fails open, as before); a lookup that was under way when the list
 * changed answers its caller but is not kept.
 */
export function cachedSuppressionLookup(
  lookup: (addresses: string[]) => Promise<SuppressionRow[]>,
  options: { ttlMs?: number; now?: () => number } = {},
): (addresses: string[]) => Promise<SuppressionRow[]> {
  const ttlMs = options.ttlMs ?? SUPPRESSION_CACHE_MS;
  const now = options.now ?? performance.now.bind(performance);
  const entries = new Map<string, Entry>();
  let seen = generation;

  return async (addresses) => {
    const started = generation;
    if (seen !== started) {
      entries.clear();
      seen = started;
    }
    const at = now();
    const known: SuppressionRow[] = [];
    const missing: string[] = [];
    for (const address of addresses) {
      const entry = entries.get(address);
      if (entry && entry.generation === started && at - entry.at < ttlMs) {
        if (entry.reason) known.push({ email: address, reason: entry.reason });
      } else missing.push(address);
    }
    if (missing.length === 0) return known;
    const rows = await lookup(missing);
    if (generation === started) {
      if (entries.size + missing.length > MAX_ENTRIES) entries.clear();
      const reasons = new Map(rows.map((row) => [row.email, row.reason]));
      for (const address of missing) entries.set(address, { reason: reasons.get(address), at, generation: started });
    }
    return [...known, ...rows];
  };
}
