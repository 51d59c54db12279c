import type { PageResult } from '../conversion/model.ts';
import { readAll, type ObjectStore } from '../storage/storage.ts';

/**
 * The stored document model of a finished conversion: the chunk results the
 * chunk workers wrote and assembly rendered from (`{ pages: PageResult[] }`
 * per chunk, in page order). Read back one chunk at a time, so describing a
 * figure of a long document never holds the whole document.
 */
export async function* readStoredPages(store: Pick<ObjectStore, 'get'>, chunkKeys: string[]): AsyncGenerator<PageResult> {
  for (const key of chunkKeys) {
    const stored = JSON.parse((await readAll(await store.get(key))).toString('utf8')) as { pages: PageResult[] };
    yield* stored.pages.sort((a, b) => a.page - b.page);
  }
}
