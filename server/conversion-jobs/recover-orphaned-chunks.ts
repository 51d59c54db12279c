import type { ConversionDeps } from './conversion-deps.ts';
import { enqueueAssembly, enqueueChunk } from './conversion-jobs.jobs.ts';
import { requeueStaleChunks, touchStaleAssemblies } from './conversion-jobs.queries.ts';

/**
 * Orphan recovery: a processing chunk whose heartbeat is older than staleMs
 * goes back to pending under a fresh queue job with the same policy as the
 * first (its old run's guarded writes then match nothing); an assembling job
 * idle that long gets its assembly re-sent. Cancelled rows are never touched.
 */
export async function recoverOrphanedChunks(
  deps: Pick<ConversionDeps, 'db' | 'boss' | 'log'>,
  input: { staleMs: number },
): Promise<{ requeued: number; reassembled: number }> {
  return deps.db.transaction(async (tx) => {
    const chunks = await requeueStaleChunks(tx, input.staleMs);
    for (const chunk of chunks) await enqueueChunk(deps.boss, tx, { chunkId: chunk.id, jobId: chunk.jobId });
    const assembling = await touchStaleAssemblies(tx, input.staleMs);
    for (const jobId of assembling) await enqueueAssembly(deps.boss, tx, { jobId });
    if (chunks.length > 0) deps.log.warn({ chunks: chunks.map((chunk) => chunk.id) }, 're-queued chunks whose heartbeat stopped');
    return { requeued: chunks.length, reassembled: assembling.length };
  });
}
