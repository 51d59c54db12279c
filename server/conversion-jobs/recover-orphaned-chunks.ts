import type { ConversionDeps } from './conversion-deps.ts';
import { CHUNK_RETRY_LIMIT, enqueueAssembly, enqueueChunk } from './conversion-jobs.jobs.ts';
import { requeueStaleChunks, selectExhaustedChunks, touchStaleAssemblies } from './conversion-jobs.queries.ts';
import { failConversion } from './fail-conversion.ts';

/**
 * Claims of one chunk after which an orphaned run is not tried again: a chunk whose runs keep dying with
 * their process (a page that crashes the converter) would otherwise crash every process that takes it,
 * one recovery after another, forever.
 */
const MAX_CHUNK_ATTEMPTS = 3;
/** Claims past which the stuck sweep fails a job whatever its heartbeats say: every recovery and every queue retry used. */
export const MAX_CHUNK_CLAIMS = MAX_CHUNK_ATTEMPTS + CHUNK_RETRY_LIMIT;

const CRASHED_CODE = 'CONVERSION_CRASHED';

/**
 * Orphan recovery: a processing chunk whose heartbeat is older than staleMs
 * goes back to pending under a fresh queue job with the same policy as the
 * first (its old run's guarded writes then match nothing), unless it has been
 * claimed MAX_CHUNK_ATTEMPTS times: then its job fails (chunks failed, hold
 * released, file failed, so no later start takes it up again). An assembling
 * job idle that long gets its assembly re-sent. Cancelled rows are never touched.
 */
export async function recoverOrphanedChunks(
  deps: Pick<ConversionDeps, 'db' | 'boss' | 'log'>,
  input: { staleMs: number },
): Promise<{ requeued: number; reassembled: number; failed: number }> {
  const recovered = await deps.db.transaction(async (tx) => {
    const chunks = await requeueStaleChunks(tx, input.staleMs, MAX_CHUNK_ATTEMPTS);
    for (const chunk of chunks) await enqueueChunk(deps.boss, tx, { chunkId: chunk.id, jobId: chunk.jobId });
    const assembling = await touchStaleAssemblies(tx, input.staleMs);
    for (const jobId of assembling) await enqueueAssembly(deps.boss, tx, { jobId });
    if (chunks.length > 0) deps.log.warn({ chunks: chunks.map((chunk) => chunk.id) }, 're-queued chunks whose heartbeat stopped');
    return { requeued: chunks.length, reassembled: assembling.length };
  });
  const exhausted = await selectExhaustedChunks(deps.db, input.staleMs, MAX_CHUNK_ATTEMPTS);
  for (const chunk of exhausted) {
    const pages = chunk.pageStart === chunk.pageEnd ? `Page ${chunk.pageStart}` : `Pages ${chunk.pageStart}-${chunk.pageEnd}`;
    const message = `${pages} stopped the converter ${chunk.attempt} times; the conversion was given up`;
    deps.log.error({ jobId: chunk.jobId, attempts: chunk.attempt }, message);
    await failConversion(deps, { jobId: chunk.jobId, code: CRASHED_CODE, message });
  }
  return { ...recovered, failed: exhausted.length };
}
