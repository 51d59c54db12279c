import { z } from 'zod';
import { bossDb, type BossConnection } from '../conversion-jobs/boss-db.ts';
import { oncePerBoss, type Boss } from '../queue/boss.ts';

/**
 * The queues of input from storage. Each piece of work is keyed by its row
 * (file, import, connection) and guarded by that row's state, so a job
 * received twice does nothing twice that matters.
 */

/** Fetch one URL into a file row created by the request (POST /api/files/import). */
export const IMPORT_URL_QUEUE = 'storage.import-url';
/** Fetch one bucket object into a file and start its conversion. */
export const IMPORT_OBJECT_QUEUE = 'storage.import-object';
/** Write a finished conversion's outputs back to the connection's output prefix. */
export const WRITE_OUTPUT_QUEUE = 'storage.write-output';
/** Every minute: due watches list their prefix, paused watches check the balance, ended conversions get their write-back. */
export const WATCH_TICK_QUEUE = 'storage.watch-tick';
/** One email per pause: the owner's watch stopped for want of credits. */
export const PAUSE_NOTICE_QUEUE = 'storage.pause-notice';

export const ImportUrlJob = z.object({ fileId: z.uuid(), url: z.string().min(1).max(2048), convert: z.boolean() });
export type ImportUrlJob = z.infer<typeof ImportUrlJob>;
export const ImportJob = z.object({ importId: z.uuid() });
export const ConnectionJob = z.object({ connectionId: z.uuid() });

// A fetch is bounded by IMPORT_TIMEOUT_SECONDS (default 2 min) plus opening the PDF; ten minutes covers both with room.
const FETCH_POLICY = { retryLimit: 2, retryDelay: 30, retryBackoff: true, expireInSeconds: 10 * 60 } as const;
// Writing three objects back; a bucket that is down for a while is tried again for about half an hour.
const OUTPUT_POLICY = { retryLimit: 5, retryDelay: 30, retryBackoff: true, expireInSeconds: 10 * 60 } as const;
const NOTICE_POLICY = { retryLimit: 5, retryDelay: 60, retryBackoff: true } as const;

async function createStorageQueues(boss: Boss): Promise<void> {
  await boss.createQueue(IMPORT_URL_QUEUE, FETCH_POLICY);
  // exclusive: one queued-or-active job per import, however often a listing or a resume asks for it.
  await boss.createQueue(IMPORT_OBJECT_QUEUE, { ...FETCH_POLICY, policy: 'exclusive' });
  await boss.createQueue(WRITE_OUTPUT_QUEUE, { ...OUTPUT_POLICY, policy: 'exclusive' });
  await boss.createQueue(PAUSE_NOTICE_QUEUE, { ...NOTICE_POLICY, policy: 'exclusive' });
  await boss.createQueue(WATCH_TICK_QUEUE, { policy: 'singleton', retryLimit: 0 });
}

/** createStorageQueues once per pg-boss instance; the API sends to them before any worker has run. */
export const ensureStorageQueues = oncePerBoss(createStorageQueues);

/** Queued in the transaction that creates the file row, so a file never waits on a job that was not sent. */
export async function enqueueUrlImport(boss: Boss, connection: BossConnection, job: ImportUrlJob): Promise<void> {
  await boss.send(IMPORT_URL_QUEUE, ImportUrlJob.parse(job), { ...FETCH_POLICY, db: bossDb(connection) });
}

export async function enqueueObjectImport(boss: Boss, importId: string, connection?: BossConnection): Promise<void> {
  await boss.send(IMPORT_OBJECT_QUEUE, { importId }, { ...FETCH_POLICY, singletonKey: importId, ...(connection ? { db: bossDb(connection) } : {}) });
}

export async function enqueueOutputWrite(boss: Boss, importId: string): Promise<void> {
  await boss.send(WRITE_OUTPUT_QUEUE, { importId }, { ...OUTPUT_POLICY, singletonKey: importId });
}

export async function enqueuePauseNotice(boss: Boss, connectionId: string): Promise<void> {
  await boss.send(PAUSE_NOTICE_QUEUE, { connectionId }, { ...NOTICE_POLICY, singletonKey: connectionId });
}
