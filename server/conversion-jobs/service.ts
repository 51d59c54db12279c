import { z } from 'zod';
import { AnyRow, sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { createHold, ON_DEMAND_HOLD_WINDOW_MS } from '../credits/credits.ts';
import { DomainError } from '../errors.ts';
import type { ObjectStore } from '../storage/storage.ts';
import { bossDb } from './boss-db.ts';
import { signDownloadToken } from './download-token.ts';
import type { EngineProvider } from './engine-provider.ts';
import { CHUNK_QUEUE, createConversionQueues, JobRow, jobColumns, notifyFragment, snapshotQuery, type Snapshot } from './jobs.queries.ts';
import { mapConversionErrors } from './sql-errors.ts';

export const ConvertOptions = z.object({
  highFidelity: z.boolean().optional(),
  parser: z.enum(['auto', 'local', 'vision', 'parser']).optional(),
  _batchLane: z.boolean().optional(),
  _compedFlyerJobId: z.uuid().optional(),
});
export type ConvertOptions = z.infer<typeof ConvertOptions>;

const FileRow = z.object({
  id: z.uuid(),
  ownerId: z.uuid(),
  customerId: z.uuid(),
  originalName: z.string(),
  contentType: z.string(),
  status: z.string(),
  pageCount: z.number().nullable(),
  storageKey: z.string().nullable(),
});
type FileRow = z.infer<typeof FileRow>;

export type ConversionServiceDeps = Pick<Deps, 'db' | 'boss' | 'config' | 'clock' | 'log'> & {
  store: ObjectStore;
  engine: EngineProvider;
  downloadSecret: string;
};

export type ChunkJobData = { chunkId: string; jobId: string };

export function chunkRanges(totalPages: number, chunkPages: number): Array<{ start: number; end: number }> {
  const size = Math.max(1, chunkPages);
  const ranges = [];
  for (let start = 1; start <= totalPages; start += size) ranges.push({ start, end: Math.min(totalPages, start + size - 1) });
  return ranges;
}

export function jobKey(fileId: string, jobId: string, name: string) {
  return `files/${fileId}/jobs/${jobId}/${name}`;
}

export function createConversionService(deps: ConversionServiceDeps) {
  const { db } = deps;
  let queues: Promise<void> | undefined;
  const ensureQueues = () => {
    queues ??= createConversionQueues(deps.boss);
    queues.catch(() => (queues = undefined));
    return queues;
  };

  async function loadFile(fileId: string): Promise<FileRow> {
    const file = await db.maybeOne(sql.type(FileRow)`
      select f.id, f.owner_id as "ownerId", u.customer_id as "customerId", f.original_name as "originalName",
             f.content_type as "contentType", f.status, f.page_count as "pageCount", f.storage_key as "storageKey"
        from files f join users u on u.id = f.owner_id where f.id = ${fileId}`);
    if (!file) throw new DomainError('NOT_FOUND', 'File not found');
    return file;
  }

  function liveJob(fileId: string) {
    return db.maybeOne(sql.type(JobRow)`
      select ${jobColumns} from large_conversion_jobs j
       where j.file_id = ${fileId} and j.status not in ('completed', 'failed', 'cancelled')`);
  }

  function downloadUrl(fileId: string) {
    const token = signDownloadToken(deps.downloadSecret, fileId, deps.clock.now());
    return `/api/download/${fileId}/zip?token=${encodeURIComponent(token)}`;
  }

  async function cancel(fileId: string, options: { resetFile?: boolean } = {}): Promise<{ cancelled: true; jobId: string }> {
    const file = await loadFile(fileId);
    const job = await liveJob(fileId);
    if (!job) {
      if (file.status === 'processing') throw new DomainError('CONVERSION_NOT_INTERRUPTIBLE', 'This conversion runs in one step and cannot be cancelled');
      throw new DomainError('NO_ACTIVE_CONVERSION', 'There is no conversion to cancel');
    }
    await mapConversionErrors(() => db.query(sql.type(AnyRow)`select id from cancel_conversion_job(${job.id}, ${options.resetFile ?? true})`));
    return { cancelled: true, jobId: job.id };
  }

  return {
    cancel,
    ensureQueues,
    store: deps.store,
    engine: deps.engine,
    downloadUrl,
    loadFile,

    /**
     * Starts a chunked conversion: the hold for the estimated pages (refused
     * before any work when the balance cannot cover it), then the job, its
     * chunk rows and their queue jobs in one transaction.
     */
    async startConversion(fileId: string, options: ConvertOptions): Promise<{ jobId: string; status: string; totalChunks: number; totalPages: number }> {
      const file = await loadFile(fileId);
      if (file.contentType !== 'application/pdf' || !file.storageKey || !file.pageCount) {
        throw new DomainError('CONFLICT', 'Only an uploaded PDF can be converted this way');
      }
      if (file.status === 'processing' || (await liveJob(fileId))) throw new DomainError('CONFLICT', 'A conversion of this file is already running');
      await ensureQueues();
      const pages = file.pageCount;
      const estimate = pages * Math.max(1, deps.config.conversion.highFidelityCreditMultiplier);
      const ranges = chunkRanges(pages, deps.config.conversion.chunkPages);
      // The batch lane is a later issue; with it off every job starts pending.
      const batch = false;
      const status = batch ? 'waiting_batch' : 'pending';
      const result = await db.transaction(async (tx) => {
        const holdId = await createHold(tx, {
          customerId: file.customerId,
          amount: estimate,
          windowMs: ON_DEMAND_HOLD_WINDOW_MS,
          reference: `conversion:${fileId}`,
        });
        const jobId = await tx
          .oneFirst(sql.type(z.object({ id: z.uuid() }))`
            insert into large_conversion_jobs (file_id, owner_id, customer_id, status, options, total_pages, total_chunks, hold_id)
            values (${fileId}, ${file.ownerId}, ${file.customerId}, ${status}, ${sql.jsonb(options)}, ${pages}, ${ranges.length}, ${holdId})
            returning id`)
          .catch((error: unknown) => {
            if ((error as { code?: string }).code === '23505' || String((error as Error).message).includes('live_file')) {
              throw new DomainError('CONFLICT', 'A conversion of this file is already running');
            }
            throw error;
          });
        const chunks = await tx.many(sql.type(z.object({ id: z.uuid(), chunkIndex: z.number() }))`
          insert into chunk_jobs (job_id, chunk_index, page_start, page_end, status)
          select ${jobId}, ordinality - 1, r.s, r.e, ${status}
            from unnest(${sql.array(
              ranges.map((r) => r.start),
              'int4',
            )}::int[], ${sql.array(
              ranges.map((r) => r.end),
              'int4',
            )}::int[]) with ordinality as r(s, e, ordinality)
          returning id, chunk_index as "chunkIndex"`);
        await tx.query(sql.type(AnyRow)`
          update files set status = 'processing', phase = ${`Queued: 0/${ranges.length} chunks`}, error_code = null, error_message = null, updated_at = now()
           where id = ${fileId}`);
        if (!batch) {
          const connection = bossDb(tx);
          for (const chunk of chunks) {
            await deps.boss.send(CHUNK_QUEUE, { chunkId: chunk.id, jobId } satisfies ChunkJobData, {
              db: connection,
              retryLimit: 3,
              retryDelay: 1,
              expireInSeconds: 60 * 60,
            });
          }
        }
        await tx.query(sql.type(AnyRow)`select ${notifyFragment(fileId, jobId, 'progress')}`);
        return { jobId, status, totalChunks: ranges.length, totalPages: pages };
      });
      return result;
    },

    /** Process now: only a job parked for the batch lane; it resumes on-demand at once. */
    async processNow(fileId: string): Promise<{ resumed: true; jobId: string }> {
      await loadFile(fileId);
      const job = await liveJob(fileId);
      if (job?.status !== 'waiting_batch') throw new DomainError('NOT_BATCH_WAITING', 'The conversion is not waiting for the batch lane');
      await db.transaction(async (tx) => {
        const moved = await tx.query(sql.type(AnyRow)`
          update large_conversion_jobs set status = 'pending', updated_at = now() where id = ${job.id} and status = 'waiting_batch' returning id`);
        if (moved.rowCount === 0) throw new DomainError('NOT_BATCH_WAITING', 'The conversion is not waiting for the batch lane');
        const chunks = await tx.any(sql.type(z.object({ id: z.uuid() }))`
          update chunk_jobs set status = 'pending' where job_id = ${job.id} and status = 'waiting_batch' returning id`);
        if (job.holdId) {
          await tx.query(sql.type(AnyRow)`
            update credit_holds set expires_at = now() + make_interval(secs => ${ON_DEMAND_HOLD_WINDOW_MS / 1000}) where id = ${job.holdId} and status = 'held'`);
        }
        await tx.query(sql.type(AnyRow)`update files set phase = ${`Queued: 0/${job.totalChunks} chunks`}, updated_at = now() where id = ${fileId}`);
        await ensureQueues();
        const connection = bossDb(tx);
        for (const chunk of chunks) {
          await deps.boss.send(CHUNK_QUEUE, { chunkId: chunk.id, jobId: job.id } satisfies ChunkJobData, {
            db: connection,
            retryLimit: 3,
            retryDelay: 1,
            expireInSeconds: 60 * 60,
          });
        }
        await tx.query(sql.type(AnyRow)`select ${notifyFragment(fileId, job.id, 'progress')}`);
      });
      return { resumed: true, jobId: job.id };
    },

    snapshot(fileId: string): Promise<Snapshot | null> {
      return db.maybeOne(snapshotQuery(fileId));
    },

    /** The caller's files; batchWaiting is derived from the live job, never stored. */
    listFiles(ownerId: string) {
      return db.any(sql.type(FileListItem)`
        select f.id, f.original_name as "name", f.content_type as "contentType", f.size_bytes::int as "sizeBytes", f.status, f.phase,
               f.page_count as "pages", f.error_code as "errorCode", f.error_message as "errorMessage", f.created_at as "createdAt",
               exists (select 1 from large_conversion_jobs j where j.file_id = f.id and j.status = 'waiting_batch') as "batchWaiting"
          from files f where f.owner_id = ${ownerId} order by f.created_at desc limit 500`);
    },

    /** Cancel first (file row untouched), then the row and every object under the file. */
    async deleteFile(fileId: string): Promise<void> {
      await loadFile(fileId);
      const job = await liveJob(fileId);
      if (job) await cancel(fileId, { resetFile: false });
      await db.query(sql.type(AnyRow)`delete from files where id = ${fileId}`);
      await deps.store.deletePrefix(`files/${fileId}/`);
    },
  };
}

export const FileListItem = z.object({
  id: z.uuid(),
  name: z.string(),
  contentType: z.string(),
  sizeBytes: z.number(),
  status: z.string(),
  phase: z.string().nullable(),
  pages: z.number().nullable(),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
  createdAt: z.date(),
  batchWaiting: z.boolean(),
});

export type ConversionService = ReturnType<typeof createConversionService>;
