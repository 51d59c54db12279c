import { z } from 'zod';
import { sql } from '../db/database.ts';
import type { Boss } from '../queue/boss.ts';

export const CONVERSION_CHANNEL = 'folio_conversion';
export const CHUNK_QUEUE = 'conversion.chunk';
export const ASSEMBLE_QUEUE = 'conversion.assemble';
export const RECOVER_QUEUE = 'conversion.recover';
export const DOCX_QUEUE = 'conversion.docx';

/**
 * The conversion queues. Both processes create them (idempotent): the API
 * sends chunk jobs that must land even before a worker has ever started.
 */
export async function createConversionQueues(boss: Boss): Promise<void> {
  await boss.createQueue(CHUNK_QUEUE, { retryLimit: 3, retryDelay: 1 });
  await boss.createQueue(ASSEMBLE_QUEUE, { retryLimit: 3, retryDelay: 2 });
  await boss.createQueue(DOCX_QUEUE, { retryLimit: 1 });
  await boss.createQueue(RECOVER_QUEUE, { policy: 'singleton', retryLimit: 1 });
}

export const LIVE_STATUSES = ['pending', 'waiting_batch', 'processing', 'paused_budget', 'assembling'] as const;

export const JobRow = z.object({
  id: z.uuid(),
  fileId: z.uuid(),
  ownerId: z.uuid(),
  customerId: z.uuid(),
  status: z.enum(['pending', 'waiting_batch', 'processing', 'paused_budget', 'assembling', 'completed', 'failed', 'cancelled']),
  options: z.record(z.string(), z.unknown()),
  totalPages: z.number(),
  totalChunks: z.number(),
  holdId: z.uuid().nullable(),
  resultKey: z.string().nullable(),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
  totalCostUsd: z.coerce.number(),
});
export type JobRow = z.infer<typeof JobRow>;

export const jobColumns = sql.fragment`
  j.id, j.file_id as "fileId", j.owner_id as "ownerId", j.customer_id as "customerId", j.status, j.options,
  j.total_pages as "totalPages", j.total_chunks as "totalChunks", j.hold_id as "holdId", j.result_key as "resultKey",
  j.error_code as "errorCode", j.error_message as "errorMessage", j.total_cost_usd as "totalCostUsd"`;

export const ChunkRow = z.object({
  id: z.uuid(),
  jobId: z.uuid(),
  chunkIndex: z.number(),
  pageStart: z.number(),
  pageEnd: z.number(),
  status: z.string(),
  resultKey: z.string().nullable(),
});

/** The live state of a file's latest job, what progress events carry. */
export const Snapshot = z.object({
  fileId: z.uuid(),
  fileStatus: z.string(),
  phase: z.string().nullable(),
  jobId: z.uuid().nullable(),
  jobStatus: z.string().nullable(),
  totalChunks: z.number(),
  chunksDone: z.number(),
  totalPages: z.number(),
  pagesDone: z.number(),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
});
export type Snapshot = z.infer<typeof Snapshot>;

export function snapshotQuery(fileId: string) {
  return sql.type(Snapshot)`
    select f.id as "fileId", f.status as "fileStatus", f.phase,
           j.id as "jobId", j.status as "jobStatus",
           coalesce(j.total_chunks, 0) as "totalChunks",
           coalesce((select count(*)::int from chunk_jobs c where c.job_id = j.id and c.status = 'completed'), 0) as "chunksDone",
           coalesce(j.total_pages, f.page_count, 0) as "totalPages",
           coalesce((select sum(c.pages_done)::int from chunk_jobs c where c.job_id = j.id and c.status <> 'cancelled'), 0) as "pagesDone",
           coalesce(j.error_code, f.error_code) as "errorCode", coalesce(j.error_message, f.error_message) as "errorMessage"
      from files f
      left join lateral (select * from large_conversion_jobs j where j.file_id = f.id order by j.created_at desc limit 1) j on true
     where f.id = ${fileId}`;
}

export function notifyFragment(fileId: string, jobId: string | null, event: string) {
  return sql.fragment`pg_notify(${CONVERSION_CHANNEL}, json_build_object('fileId', ${fileId}::uuid, 'jobId', ${jobId}::uuid, 'event', ${event}::text)::text)`;
}
