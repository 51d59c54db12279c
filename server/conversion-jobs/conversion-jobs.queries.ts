import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { z } from 'zod';
import { AnyRow, sql, type Queryable } from '../db/database.ts';
import { DomainError } from '../errors.ts';
import { mapConversionErrors } from './sql-errors.ts';

/**
 * Every statement of the conversion service (sql/020_conversion_jobs.sql).
 * Functions take the pool or an open transaction; the domain functions decide
 * which statements commit together.
 */

export const CONVERSION_CHANNEL = 'folio_conversion';

/** The partial unique index that keeps one live job per file (sql/020_conversion_jobs.sql). */
const LIVE_JOB_PER_FILE = 'large_conversion_jobs_live_file_idx';

/** Statuses a job can still move from; at most one such job per file (large_conversion_jobs_live_file_idx). */
const TERMINAL_STATUSES = sql.fragment`('completed', 'failed', 'cancelled')`;

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

const jobColumns = sql.fragment`
  j.id, j.file_id as "fileId", j.owner_id as "ownerId", j.customer_id as "customerId", j.status, j.options,
  j.total_pages as "totalPages", j.total_chunks as "totalChunks", j.hold_id as "holdId", j.result_key as "resultKey",
  j.error_code as "errorCode", j.error_message as "errorMessage", j.total_cost_usd as "totalCostUsd"`;

export const FileRow = z.object({
  id: z.uuid(),
  ownerId: z.uuid(),
  customerId: z.uuid(),
  originalName: z.string(),
  contentType: z.string(),
  status: z.string(),
  pageCount: z.number().nullable(),
  storageKey: z.string().nullable(),
});
export type FileRow = z.infer<typeof FileRow>;

/** The file with its owner's customer; NOT_FOUND when there is none (routes check ownership before). */
export async function requireFile(db: Queryable, fileId: string): Promise<FileRow> {
  const file = await db.maybeOne(sql.type(FileRow)`
    select f.id, f.owner_id as "ownerId", u.customer_id as "customerId", f.original_name as "originalName",
           f.content_type as "contentType", f.status, f.page_count as "pageCount", f.storage_key as "storageKey"
      from files f join users u on u.id = f.owner_id where f.id = ${fileId}`);
  if (!file) throw new DomainError('NOT_FOUND', 'File not found');
  return file;
}

/** The file's one job that is not yet terminal, if any. */
export function selectLiveJob(db: Queryable, fileId: string): Promise<JobRow | null> {
  return db.maybeOne(sql.type(JobRow)`
    select ${jobColumns} from large_conversion_jobs j where j.file_id = ${fileId} and j.status not in ${TERMINAL_STATUSES}`);
}

/** cancel_conversion_job: job and every non-completed chunk cancelled, hold released, file reset, in one transaction. */
export async function cancelConversionJob(db: Queryable, jobId: string, resetFile: boolean): Promise<void> {
  await mapConversionErrors(() => db.query(sql.type(AnyRow)`select id from cancel_conversion_job(${jobId}, ${resetFile})`));
}

export async function insertJob(
  tx: Queryable,
  job: {
    fileId: string;
    ownerId: string;
    customerId: string;
    status: string;
    options: Record<string, unknown>;
    totalPages: number;
    totalChunks: number;
    /** null only for a comped reflow, which is free */
    holdId: string | null;
  },
): Promise<string> {
  return tx
    .oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into large_conversion_jobs (file_id, owner_id, customer_id, status, options, total_pages, total_chunks, hold_id)
      values (${job.fileId}, ${job.ownerId}, ${job.customerId}, ${job.status}, ${sql.jsonb(job.options as never)}, ${job.totalPages}, ${job.totalChunks}, ${job.holdId})
      returning id`)
    .catch((error: unknown) => {
      // Two starts that both passed the live-job check: the index keeps one, the other is told so.
      if (error instanceof UniqueIntegrityConstraintViolationError && error.constraint === LIVE_JOB_PER_FILE) {
        throw new DomainError('CONFLICT', 'A conversion of this file is already running', { cause: error });
      }
      throw error;
    });
}

/** One row per page range, numbered from 0 in order. */
export function insertChunks(tx: Queryable, jobId: string, ranges: Array<{ start: number; end: number }>, status: string) {
  return tx.many(sql.type(z.object({ id: z.uuid(), chunkIndex: z.number() }))`
    insert into chunk_jobs (job_id, chunk_index, page_start, page_end, status)
    select ${jobId}, ordinality - 1, r.s, r.e, ${status}
      from unnest(${sql.array(
        ranges.map((range) => range.start),
        'int4',
      )}::int[], ${sql.array(
        ranges.map((range) => range.end),
        'int4',
      )}::int[]) with ordinality as r(s, e, ordinality)
    returning id, chunk_index as "chunkIndex"`);
}

export async function markFileQueued(tx: Queryable, fileId: string, totalChunks: number): Promise<void> {
  await tx.query(sql.type(AnyRow)`
    update files set status = 'processing', phase = ${queuedPhase(totalChunks)}, error_code = null, error_message = null, updated_at = now()
     where id = ${fileId}`);
}

function queuedPhase(totalChunks: number) {
  return `Queued: 0/${totalChunks} chunks`;
}

/** A resumed job's hold gets the on-demand window again, counted from now. */
export async function restartHoldWindow(tx: Queryable, holdId: string, windowMs: number): Promise<void> {
  await tx.query(sql.type(AnyRow)`
    update credit_holds set expires_at = now() + make_interval(secs => ${windowMs / 1000}) where id = ${holdId} and status = 'held'`);
}

export async function setFilePhase(tx: Queryable, fileId: string, phase: string): Promise<void> {
  await tx.query(sql.type(AnyRow)`update files set phase = ${phase}, updated_at = now() where id = ${fileId}`);
}

/** Tells every process's stream listener that this file moved (delivered on commit). */
export async function notifyConversion(tx: Queryable, fileId: string, jobId: string | null, event: string): Promise<void> {
  await tx.query(sql.type(AnyRow)`select ${notifyFragment(fileId, jobId, event)}`);
}

export function notifyFragment(fileId: string, jobId: string | null, event: string) {
  return sql.fragment`pg_notify(${CONVERSION_CHANNEL}, json_build_object('fileId', ${fileId}::uuid, 'jobId', ${jobId}::uuid, 'event', ${event}::text)::text)`;
}

/** An event for the webhook dispatcher, written in the transaction that made it true. */
export async function insertOutboxEvent(tx: Queryable, type: 'conversion.completed' | 'conversion.failed', fileId: string, payload: Record<string, unknown>) {
  await tx.query(sql.type(AnyRow)`
    insert into outbox_events (type, aggregate_id, payload) values (${type}, ${fileId}, ${sql.jsonb(payload as never)})`);
}

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

export function selectSnapshot(db: Queryable, fileId: string): Promise<Snapshot | null> {
  return db.maybeOne(sql.type(Snapshot)`
    select f.id as "fileId", f.status as "fileStatus", f.phase,
           j.id as "jobId", j.status as "jobStatus",
           coalesce(j.total_chunks, 0) as "totalChunks",
           coalesce((select count(*)::int from chunk_jobs c where c.job_id = j.id and c.status = 'completed'), 0) as "chunksDone",
           coalesce(j.total_pages, f.page_count, 0) as "totalPages",
           coalesce((select sum(c.pages_done)::int from chunk_jobs c where c.job_id = j.id and c.status <> 'cancelled'), 0) as "pagesDone",
           coalesce(j.error_code, f.error_code) as "errorCode", coalesce(j.error_message, f.error_message) as "errorMessage"
      from files f
      left join lateral (select * from large_conversion_jobs j where j.file_id = f.id order by j.created_at desc limit 1) j on true
     where f.id = ${fileId}`);
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
export type FileListItem = z.infer<typeof FileListItem>;

/** The owner's newest 500 files; batchWaiting is derived from the live job, never stored. */
export function selectOwnerFiles(db: Queryable, ownerId: string) {
  return db.any(sql.type(FileListItem)`
    select f.id, f.original_name as "name", f.content_type as "contentType", f.size_bytes::int as "sizeBytes", f.status, f.phase,
           f.page_count as "pages", f.error_code as "errorCode", f.error_message as "errorMessage", f.created_at as "createdAt",
           exists (select 1 from large_conversion_jobs j where j.file_id = f.id and j.status = 'waiting_batch') as "batchWaiting"
      from files f where f.owner_id = ${ownerId} order by f.created_at desc limit 500`);
}

/** Deletes the row and tells the file's open streams, which then find no file, say so and close. */
export async function deleteFileRow(db: Queryable, fileId: string): Promise<void> {
  await db.query(sql.type(AnyRow)`
    with gone as (delete from files where id = ${fileId} returning id)
    select ${notifyFragment(fileId, null, 'deleted')} from gone`);
}

/** Locks the job row: chunk completion and cancel_conversion_job both take it first, so they serialise. */
export function lockJobStatus(tx: Queryable, jobId: string): Promise<string | null> {
  return tx.maybeOneFirst(sql.type(z.object({ status: z.string() }))`select status from large_conversion_jobs where id = ${jobId} for update`);
}

export const ClaimedChunk = z.object({
  id: z.uuid(),
  jobId: z.uuid(),
  fileId: z.uuid(),
  chunkIndex: z.number(),
  pageStart: z.number(),
  pageEnd: z.number(),
  totalChunks: z.number(),
  sourceKey: z.string(),
  sourceName: z.string(),
  options: z.record(z.string(), z.unknown()),
});
export type ClaimedChunk = z.infer<typeof ClaimedChunk>;

/** pending → processing under a fresh run id; null when the chunk is not pending (done, cancelled, or another run's). */
export function claimChunk(tx: Queryable, chunkId: string, runId: string): Promise<ClaimedChunk | null> {
  return tx.maybeOne(sql.type(ClaimedChunk)`
    update chunk_jobs c
       set status = 'processing', run_id = ${runId}, attempt = c.attempt + 1, heartbeat_at = now(), pages_done = 0,
           started_at = coalesce(c.started_at, now())
      from large_conversion_jobs j join files f on f.id = j.file_id
     where c.id = ${chunkId} and c.job_id = j.id and c.status = 'pending'
    returning c.id, c.job_id as "jobId", j.file_id as "fileId", c.chunk_index as "chunkIndex", c.page_start as "pageStart",
              c.page_end as "pageEnd", j.total_chunks as "totalChunks", f.storage_key as "sourceKey", f.original_name as "sourceName", j.options`);
}

export async function markJobProcessing(tx: Queryable, jobId: string): Promise<void> {
  await tx.query(sql.type(AnyRow)`update large_conversion_jobs set status = 'processing', updated_at = now() where id = ${jobId}`);
}

/**
 * One statement per beat: the UPDATE guarded by the run id, and the progress
 * notice only when it matched. False when the run no longer owns the chunk.
 */
export async function beatChunk(db: Queryable, chunk: { id: string; jobId: string; fileId: string }, runId: string, pagesDone: number, notify: boolean) {
  const result = await db.query(sql.type(AnyRow)`
    with beat as (
      update chunk_jobs set heartbeat_at = now(), pages_done = ${pagesDone}
       where id = ${chunk.id} and run_id = ${runId} and status = 'processing' returning id)
    select ${notify ? notifyFragment(chunk.fileId, chunk.jobId, 'progress') : sql.fragment`null`} from beat`);
  return result.rowCount > 0;
}

/** processing → pending for the queue's retry, only for this run (a cancel or re-queue may have taken it). */
export async function releaseChunk(tx: Queryable, chunkId: string, runId: string): Promise<void> {
  await tx.query(
    sql.type(AnyRow)`update chunk_jobs set status = 'pending', run_id = null where id = ${chunkId} and run_id = ${runId} and status = 'processing'`,
  );
}

/** processing → completed, only for this run; false when a cancel or a re-queue took the chunk away. */
export async function completeChunk(tx: Queryable, chunkId: string, runId: string, result: { resultKey: string; costUsd: number; pages: number }) {
  const done = await tx.query(sql.type(AnyRow)`
    update chunk_jobs set status = 'completed', result_key = ${result.resultKey}, cost_usd = ${result.costUsd}, pages_done = ${result.pages},
                          completed_at = now(), heartbeat_at = now()
     where id = ${chunkId} and run_id = ${runId} and status = 'processing'`);
  return done.rowCount > 0;
}

/** A chunk row on the cost ledger (specification: source chunk-scheduler), with the backend the chunk ran on. */
export async function insertChunkCost(
  tx: Queryable,
  jobId: string,
  chunkId: string,
  costUsd: number,
  metadata: Record<string, unknown>,
  backend: string,
): Promise<void> {
  await tx.query(sql.type(AnyRow)`
    insert into cost_ledger (source, job_id, chunk_id, cost_usd, metadata, backend)
    values ('chunk-scheduler', ${jobId}, ${chunkId}, ${costUsd}, ${sql.jsonb(metadata as never)}, ${backend})`);
}

export async function addJobCost(tx: Queryable, jobId: string, costUsd: number): Promise<void> {
  await tx.query(sql.type(AnyRow)`update large_conversion_jobs set total_cost_usd = total_cost_usd + ${costUsd} where id = ${jobId}`);
}

export function countChunks(tx: Queryable, jobId: string) {
  return tx.one(sql.type(z.object({ done: z.number(), total: z.number() }))`
    select count(*) filter (where status = 'completed')::int as done, count(*)::int as total from chunk_jobs where job_id = ${jobId}`);
}

/** A completed chunk's cost on the job; the last one moves the job to assembling. */
export async function advanceJob(tx: Queryable, jobId: string, costUsd: number, last: boolean): Promise<void> {
  await tx.query(sql.type(AnyRow)`
    update large_conversion_jobs set total_cost_usd = total_cost_usd + ${costUsd}, updated_at = now(),
           status = case when ${last} then 'assembling' else status end
     where id = ${jobId}`);
}

/** live → failed; the failed job, or null when it was no longer live (a second call does nothing). */
export function markJobFailed(tx: Queryable, jobId: string, code: string, message: string): Promise<JobRow | null> {
  return tx.maybeOne(sql.type(JobRow)`
    update large_conversion_jobs j set status = 'failed', error_code = ${code}, error_message = ${message}, updated_at = now(), finished_at = now()
     where j.id = ${jobId} and j.status in ('pending', 'processing', 'paused_budget', 'assembling', 'waiting_batch')
    returning ${jobColumns}`);
}

export async function failOpenChunks(tx: Queryable, jobId: string): Promise<void> {
  await tx.query(sql.type(AnyRow)`
    update chunk_jobs set status = 'failed', run_id = null where job_id = ${jobId} and status in ('pending', 'processing', 'waiting_batch')`);
}

export async function markFileFailed(tx: Queryable, fileId: string, code: string, message: string): Promise<void> {
  await tx.query(sql.type(AnyRow)`
    update files set status = 'failed', phase = null, error_code = ${code}, error_message = ${message}, updated_at = now() where id = ${fileId}`);
}

export function selectAssemblyJob(db: Queryable, jobId: string) {
  return db.maybeOne(sql.type(JobRow.extend({ originalName: z.string(), sourceKey: z.string() }))`
    select ${jobColumns}, f.original_name as "originalName", f.storage_key as "sourceKey"
      from large_conversion_jobs j join files f on f.id = j.file_id where j.id = ${jobId}`);
}

/** Result objects of the job's completed chunks, in page order. */
export function selectChunkResultKeys(db: Queryable, jobId: string): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ resultKey: z.string() }))`
    select result_key as "resultKey" from chunk_jobs where job_id = ${jobId} and status = 'completed' order by chunk_index`);
}

/** assembling → completed with its zip and charge; false when the job had left assembling. */
export async function markJobCompleted(tx: Queryable, jobId: string, resultKey: string, credits: number): Promise<boolean> {
  const moved = await tx.query(sql.type(AnyRow)`
    update large_conversion_jobs set status = 'completed', result_key = ${resultKey}, credits_charged = ${credits}, updated_at = now(), finished_at = now()
     where id = ${jobId} and status = 'assembling'`);
  return moved.rowCount > 0;
}

export async function markFileCompleted(tx: Queryable, fileId: string): Promise<void> {
  await tx.query(sql.type(AnyRow)`
    update files set status = 'completed', phase = null, error_code = null, error_message = null, updated_at = now() where id = ${fileId}`);
}

/** A processing chunk (c) of a live job (j) whose heartbeat is older than staleMs: its process is gone. */
const orphanedChunk = (staleMs: number) =>
  sql.fragment`c.status = 'processing' and j.status in ('pending', 'processing') and c.heartbeat_at < now() - make_interval(secs => ${staleMs / 1000})`;

/**
 * processing chunks of live jobs whose heartbeat is older than staleMs go back to pending, their run id
 * cleared, while they have been claimed fewer than maxAttempts times.
 */
export function requeueStaleChunks(tx: Queryable, staleMs: number, maxAttempts: number) {
  return tx.any(sql.type(z.object({ id: z.uuid(), jobId: z.uuid() }))`
    update chunk_jobs c set status = 'pending', run_id = null
      from large_conversion_jobs j
     where c.job_id = j.id and ${orphanedChunk(staleMs)} and c.attempt < ${maxAttempts}
    returning c.id, c.job_id as "jobId"`);
}

/** Orphaned chunks (as requeueStaleChunks) already claimed maxAttempts times: each crashed the process that ran it. */
export function selectExhaustedChunks(tx: Queryable, staleMs: number, maxAttempts: number) {
  return tx.any(sql.type(z.object({ jobId: z.uuid(), pageStart: z.number(), pageEnd: z.number(), attempt: z.number() }))`
    select distinct on (c.job_id) c.job_id as "jobId", c.page_start as "pageStart", c.page_end as "pageEnd", c.attempt
      from chunk_jobs c join large_conversion_jobs j on j.id = c.job_id
     where ${orphanedChunk(staleMs)} and c.attempt >= ${maxAttempts}
     order by c.job_id, c.chunk_index`);
}

/** Assembling jobs idle past staleMs, touched so the next sweep waits again. */
export function touchStaleAssemblies(tx: Queryable, staleMs: number): Promise<readonly string[]> {
  return tx.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    update large_conversion_jobs set updated_at = now()
     where status = 'assembling' and updated_at < now() - make_interval(secs => ${staleMs / 1000}) returning id`);
}

/**
 * Live (never cancelled) jobs with no update and no chunk heartbeat within boundMs, and live jobs with a
 * chunk claimed more than maxClaims times: re-queued over and over, it beats and so never looks idle.
 */
export function selectStuckJobs(db: Queryable, boundMs: number, maxClaims: number): Promise<readonly string[]> {
  return db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    select j.id from large_conversion_jobs j
     where j.status in ('pending', 'processing', 'assembling')
       and ((j.updated_at < now() - make_interval(secs => ${boundMs / 1000})
             and not exists (select 1 from chunk_jobs c where c.job_id = j.id and c.heartbeat_at >= now() - make_interval(secs => ${boundMs / 1000})))
         or exists (select 1 from chunk_jobs c where c.job_id = j.id and c.status <> 'completed' and c.attempt > ${maxClaims}))`);
}

/** Inline (DOCX) files have no job; one left processing past the bound failed with its worker. */
export async function failStuckInlineFiles(db: Queryable, boundMs: number, code: string, message: string): Promise<void> {
  // a DOCX's hold (taken at upload) goes back with it
  await db.query(sql.type(AnyRow)`
    with stuck as (
      update files f set status = 'failed', error_code = ${code}, error_message = ${message}, updated_at = now()
       where f.status = 'processing' and f.updated_at < now() - make_interval(secs => ${boundMs / 1000})
         and not exists (select 1 from large_conversion_jobs j where j.file_id = f.id and j.status not in ${TERMINAL_STATUSES})
      returning f.hold_id)
    select release_credit_hold(h.id, 'failed') from credit_holds h join stuck on stuck.hold_id = h.id where h.status = 'held'`);
}

/**
 * Locks a flyer job for its comped reflow: the second of two requests waits
 * here and then finds the comp set. ALREADY_RESOLVED when it was comped.
 */
export async function lockUnresolvedFlyer(tx: Queryable, flyerJobId: string): Promise<void> {
  const row = await tx.maybeOne(sql.type(z.object({ comped: z.boolean() }))`
    select comp_conversion_id is not null as comped from flyer_jobs where id = ${flyerJobId} for update`);
  if (!row) throw new DomainError('NOT_FOUND', 'Preserve Formatting job not found');
  if (row.comped) throw new DomainError('ALREADY_RESOLVED', 'This Preserve Formatting job was already turned into a reflowed conversion');
}

export async function setFlyerComp(tx: Queryable, flyerJobId: string, jobId: string): Promise<void> {
  await tx.query(sql.type(AnyRow)`update flyer_jobs set comp_conversion_id = ${jobId}, updated_at = now() where id = ${flyerJobId}`);
}

/**
 * Cancels a DOCX conversion (a `processing` file with no job row, its hold on the file): the hold is
 * released and the file leaves the hold, which is what the DOCX run's heartbeat looks for, so the
 * run stops. The file goes back to `uploaded` unless resetFile is false (a delete follows). False
 * when the file was not converting on a hold (it completed or failed first).
 */
export async function cancelInlineConversion(tx: Queryable, fileId: string, resetFile: boolean): Promise<boolean> {
  const holdId = await tx.maybeOneFirst(sql.type(z.object({ holdId: z.uuid() }))`
    select hold_id as "holdId" from files where id = ${fileId} and status = 'processing' and hold_id is not null for update`);
  if (!holdId) return false;
  await tx.query(sql.type(AnyRow)`
    update files set hold_id = null, phase = null, updated_at = now(),
           status = case when ${resetFile} then 'uploaded' else status end,
           error_code = case when ${resetFile} then null else error_code end,
           error_message = case when ${resetFile} then null else error_message end
     where id = ${fileId}`);
  await tx.query(sql.type(AnyRow)`
    select release_credit_hold(id, 'cancelled') from credit_holds where id = ${holdId} and status = 'held'`);
  await notifyConversion(tx, fileId, null, 'cancelled');
  return true;
}
