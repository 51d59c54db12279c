import { z } from 'zod';
import type { BatchRecord } from '../conversion/engine.ts';
import { jobObjectKey } from '../conversion-jobs/conversion-deps.ts';
import { ObjectNotFoundError, readAll, type ObjectStore } from '../storage/storage.ts';

/**
 * The collected answers of one chunk (`results/chunk-N.json`), kept with the
 * job's other objects so deleting the file removes them. Only records that
 * came back with an answer are stored; whether one is used is decided when
 * the chunk runs (model, prompt hash, acceptability).
 */
export const ChunkResults = z.object({
  modelId: z.string(),
  promptHash: z.string(),
  records: z.array(z.object({ page: z.number(), text: z.string(), stopReason: z.string(), inputTokens: z.number(), outputTokens: z.number() })),
});
export type ChunkResults = z.infer<typeof ChunkResults>;

export function chunkResultsKey(fileId: string, jobId: string, chunkIndex: number) {
  return jobObjectKey(fileId, jobId, `results/chunk-${chunkIndex}.json`);
}

export async function writeChunkResults(store: ObjectStore, key: string, results: ChunkResults): Promise<void> {
  await store.put(key, Buffer.from(JSON.stringify(results)), { contentType: 'application/json' });
}

/**
 * A primed chunk's batch records by page; empty when the file is missing or
 * unreadable: every page then runs on-demand, which is always correct.
 */
export async function readChunkResults(store: ObjectStore, key: string): Promise<Map<number, BatchRecord>> {
  let parsed: ChunkResults;
  try {
    parsed = ChunkResults.parse(JSON.parse((await readAll(await store.get(key))).toString('utf8')));
  } catch (error) {
    if (error instanceof ObjectNotFoundError || error instanceof SyntaxError || error instanceof z.ZodError) return new Map();
    throw error;
  }
  return new Map(parsed.records.map((record) => [record.page, { ...record, model: parsed.modelId, promptHash: parsed.promptHash }]));
}
