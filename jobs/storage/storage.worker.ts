import { createConversionEndWatch } from '../../server/conversion-jobs/watch-conversion-ends.ts';
import type { Deps } from '../../server/deps.ts';
import { wakeWorkers } from '../../server/queue/boss.ts';
import { importObject } from '../../server/storage/import-objects.ts';
import type { ImportDeps } from '../../server/storage/import-runtime.ts';
import { fetchUrlImport } from '../../server/storage/import-url.ts';
import {
  ConnectionJob,
  enqueueOutputWrite,
  ImportJob,
  ImportUrlJob,
  IMPORT_OBJECT_QUEUE,
  IMPORT_URL_QUEUE,
  PAUSE_NOTICE_QUEUE,
  WATCH_TICK_QUEUE,
  WRITE_OUTPUT_QUEUE,
} from '../../server/storage/storage.jobs.ts';
import { runWatchTick, sendPauseNotice } from '../../server/storage/watch-prefixes.ts';
import { writeImportOutput } from '../../server/storage/write-import-output.ts';

/**
 * Fetches at once per process: each streams one body (never held whole) and
 * then opens the PDF once for its page count, which does hold it; four bound
 * that to four files of UPLOAD_MAX_BYTES.
 */
const FETCH_CONCURRENCY = 4;

/**
 * Input from storage: URL fetches, bucket object imports, output write-back,
 * the pause notices, and the one-minute watch tick (a pg-boss schedule, so
 * one process runs it). Payloads are parsed as untrusted.
 */
export async function registerStorageJobs(deps: Deps, options: { schedule?: boolean } = {}): Promise<{ deps: ImportDeps; close: () => void }> {
  const ends = createConversionEndWatch(deps);
  const importDeps: ImportDeps = {
    ...deps,
    watchConversion: (importId, fileId) =>
      ends.watch(fileId, () =>
        enqueueOutputWrite(deps.boss, importId).then(
          () => wakeWorkers(deps.boss, [WRITE_OUTPUT_QUEUE]),
          (error: unknown) => deps.log.warn({ err: error, importId }, 'storage: could not queue the write-back; the tick will'),
        ),
      ),
  };
  await deps.importer.queuesReady();
  const fetchWork = { batchSize: 1, localConcurrency: FETCH_CONCURRENCY, pollingIntervalSeconds: 0.5 } as const;
  await deps.boss.work(IMPORT_URL_QUEUE, fetchWork, async ([job]) => {
    if (job) await fetchUrlImport(importDeps, ImportUrlJob.parse(job.data));
  });
  await deps.boss.work(IMPORT_OBJECT_QUEUE, fetchWork, async ([job]) => {
    if (job) await importObject(importDeps, ImportJob.parse(job.data).importId);
  });
  await deps.boss.work(WRITE_OUTPUT_QUEUE, { batchSize: 1, localConcurrency: 2, pollingIntervalSeconds: 0.5 }, async ([job]) => {
    if (job) await writeImportOutput(importDeps, ImportJob.parse(job.data).importId);
  });
  await deps.boss.work(PAUSE_NOTICE_QUEUE, { batchSize: 1 }, async ([job]) => {
    if (job) await sendPauseNotice(importDeps, ConnectionJob.parse(job.data).connectionId, job.id);
  });
  await deps.boss.work(WATCH_TICK_QUEUE, { batchSize: 1 }, async () => {
    await runWatchTick(importDeps);
  });
  if (options.schedule !== false) await deps.boss.schedule(WATCH_TICK_QUEUE, '* * * * *');
  return {
    deps: importDeps,
    close: ends.close,
  };
}
