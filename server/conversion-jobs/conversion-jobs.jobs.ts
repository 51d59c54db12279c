import { z } from 'zod';
import { oncePerBoss, type Boss } from '../queue/boss.ts';
import { bossDb, type BossConnection } from './boss-db.ts';

export const CHUNK_QUEUE = 'conversion.chunk';
export const ASSEMBLE_QUEUE = 'conversion.assemble';
export const RECOVER_QUEUE = 'conversion.recover';
export const DOCX_QUEUE = 'conversion.docx';

/** One chunk of one job; both ids are checked against the rows, never trusted. */
export const ChunkJobData = z.object({ chunkId: z.uuid(), jobId: z.uuid() });
export type ChunkJobData = z.infer<typeof ChunkJobData>;

export const AssembleJobData = z.object({ jobId: z.uuid() });
export type AssembleJobData = z.infer<typeof AssembleJobData>;

export const DocxJobData = z.object({ fileId: z.uuid() });
export type DocxJobData = z.infer<typeof DocxJobData>;

/**
 * A chunk job's policy, the same for every path that queues one (start,
 * process-now, orphan recovery). Three retries a second apart cover a
 * transient engine or store failure; an hour covers the slowest chunk
 * (CHUNK_PAGES vision pages with backoff) — past it pg-boss takes the job
 * back, where its 15-minute default would cut a long chunk short.
 */
export const CHUNK_RETRY_LIMIT = 3;
const CHUNK_JOB_POLICY = { retryLimit: CHUNK_RETRY_LIMIT, retryDelay: 1, expireInSeconds: 60 * 60 } as const;

/** Assembly renders and audits the whole document; its retries wait a little longer. */
const ASSEMBLE_JOB_POLICY = { retryLimit: 3, retryDelay: 2 } as const;

/** The inline DOCX path runs once more after a crash, then the stuck sweep has it. */
const DOCX_JOB_POLICY = { retryLimit: 1 } as const;

/**
 * The recovery run is a singleton: while one is active no other starts. A run whose process died stays
 * active until pg-boss expires it (15 minutes by default, then a retry), and with it every recovery
 * waited. Recovery takes seconds; 30 s of expiry plus the supervisor's 60 s check lets the retry run
 * within 2 minutes of the crash.
 */
const RECOVER_JOB_POLICY = { retryLimit: 1, expireInSeconds: 30 } as const;

/**
 * The conversion queues. Both processes create them (idempotent): the API
 * sends chunk jobs that must land even before a worker has ever started.
 */
async function createConversionQueues(boss: Boss): Promise<void> {
  await boss.createQueue(CHUNK_QUEUE, CHUNK_JOB_POLICY);
  await boss.createQueue(ASSEMBLE_QUEUE, ASSEMBLE_JOB_POLICY);
  await boss.createQueue(DOCX_QUEUE, DOCX_JOB_POLICY);
  await boss.createQueue(RECOVER_QUEUE, { policy: 'singleton', ...RECOVER_JOB_POLICY });
  // a queue made before keeps the policy it was made with: this one's expiry must reach old databases too
  await boss.updateQueue(RECOVER_QUEUE, RECOVER_JOB_POLICY);
}

/** createConversionQueues once per pg-boss instance (a failed attempt is tried again next call). */
export const ensureConversionQueues = oncePerBoss(createConversionQueues);

/** Queues one chunk inside the caller's transaction, so the row and its queue job commit together. */
export async function enqueueChunk(boss: Boss, connection: BossConnection, chunk: ChunkJobData): Promise<void> {
  await boss.send(CHUNK_QUEUE, ChunkJobData.parse(chunk), { ...CHUNK_JOB_POLICY, db: bossDb(connection) });
}

/**
 * Queues a job's assembly inside the caller's transaction. The last chunk's
 * send is keyed by the job so two completions cannot queue it twice; orphan
 * recovery re-sends it unkeyed, since the first one is what went missing.
 */
export async function enqueueAssembly(boss: Boss, connection: BossConnection, job: AssembleJobData, options: { singleton?: boolean } = {}): Promise<void> {
  await boss.send(ASSEMBLE_QUEUE, AssembleJobData.parse(job), {
    ...ASSEMBLE_JOB_POLICY,
    db: bossDb(connection),
    ...(options.singleton ? { singletonKey: job.jobId } : {}),
  });
}

/** Queues the inline DOCX conversion of an uploaded file inside the caller's transaction. */
export async function enqueueDocxConversion(boss: Boss, connection: BossConnection, job: DocxJobData): Promise<void> {
  await boss.send(DOCX_QUEUE, DocxJobData.parse(job), { ...DOCX_JOB_POLICY, db: bossDb(connection) });
}
