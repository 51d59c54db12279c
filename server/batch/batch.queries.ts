import { z } from 'zod';
import { extendHold } from '../credits/credits.ts';
import { AnyRow, sql, type Queryable } from '../db/database.ts';

/**
 * Every statement of the batch lane (sql/075_batch_lane.sql). Times come from
 * the caller's clock, so polls, deadlines and stuck rows can be tested
 * without waiting hours.
 */

const BatchState = z.enum(['preparing', 'submitted', 'closed']);
export const BatchOutcome = z.enum(['collected', 'skipped', 'failed', 'expired']);
export type BatchOutcome = z.infer<typeof BatchOutcome>;

export const BatchRow = z.object({
  id: z.uuid(),
  jobId: z.uuid().nullable(),
  state: BatchState,
  outcome: BatchOutcome.nullable(),
  reason: z.string().nullable(),
  jobName: z.string(),
  jobArn: z.string().nullable(),
  modelId: z.string().nullable(),
  promptHash: z.string().nullable(),
  records: z.number().nullable(),
  shards: z.number().nullable(),
  collectAttempts: z.number(),
  claimedAt: z.date(),
  deadlineAt: z.date().nullable(),
});
export type BatchRow = z.infer<typeof BatchRow>;

const rowColumns = sql.fragment`
  b.id, b.job_id as "jobId", b.state, b.outcome, b.reason, b.job_name as "jobName", b.job_arn as "jobArn",
  b.model_id as "modelId", b.prompt_hash as "promptHash", b.records, b.shards, b.collect_attempts as "collectAttempts",
  b.claimed_at as "claimedAt", b.deadline_at as "deadlineAt"`;

const ts = (date: Date) => sql.fragment`${date.toISOString()}::timestamptz`;

/** Everything the lane writes to the batch bucket lives under this prefix (the expiry rule matches it). */
export const BATCH_PREFIX_ROOT = 'folio-batch';

/** Where one batch job's objects live in the batch bucket. */
export function batchPrefix(rowId: string) {
  return `${BATCH_PREFIX_ROOT}/${rowId}`;
}

export function batchJobName(rowId: string) {
  return `folio-batch-${rowId}`;
}

/**
 * The driver's claim: the oldest parked job with no batch row gets one in
 * `preparing`, and its hold is stretched to cover the batch turnaround.
 * Null when there is nothing to claim (or another driver claimed it first).
 */
export async function claimNextJob(tx: Queryable, input: { rowId: string; now: Date; holdWindowMs: number }): Promise<{ rowId: string; jobId: string } | null> {
  const claimed = await tx.maybeOne(sql.type(z.object({ rowId: z.uuid(), jobId: z.uuid(), holdId: z.uuid().nullable() }))`
    with next as (
      select j.id, j.hold_id from large_conversion_jobs j
       where j.status = 'waiting_batch' and not exists (select 1 from conversion_batch_jobs b where b.job_id = j.id)
       order by j.created_at limit 1
       for update of j skip locked),
    claimed as (
      insert into conversion_batch_jobs (id, job_id, job_name, claimed_at)
      select ${input.rowId}, next.id, ${batchJobName(input.rowId)}, ${ts(input.now)} from next
      on conflict (job_id) do nothing
      returning id, job_id)
    select claimed.id as "rowId", claimed.job_id as "jobId", next.hold_id as "holdId" from claimed join next on next.id = claimed.job_id`);
  if (!claimed) return null;
  if (claimed.holdId) await extendHold(tx, claimed.holdId, new Date(input.now.getTime() + input.holdWindowMs));
  return { rowId: claimed.rowId, jobId: claimed.jobId };
}

export const PrepareInput = z.object({
  fileId: z.uuid(),
  sourceKey: z.string().nullable(),
  totalPages: z.number(),
  chunks: z.array(z.object({ index: z.number(), start: z.number(), end: z.number() })),
});
export type PrepareInput = z.infer<typeof PrepareInput>;

/** What preparing a job needs: its source and its chunks' page ranges. */
export function selectPrepareInput(db: Queryable, jobId: string): Promise<PrepareInput | null> {
  return db.maybeOne(sql.type(PrepareInput)`
    select j.file_id as "fileId", f.storage_key as "sourceKey", j.total_pages as "totalPages",
           coalesce((select json_agg(json_build_object('index', c.chunk_index, 'start', c.page_start, 'end', c.page_end) order by c.chunk_index)
                       from chunk_jobs c where c.job_id = j.id), '[]') as chunks
      from large_conversion_jobs j join files f on f.id = j.file_id where j.id = ${jobId}`);
}

export function selectBatchRow(db: Queryable, rowId: string): Promise<BatchRow | null> {
  return db.maybeOne(sql.type(BatchRow)`select ${rowColumns} from conversion_batch_jobs b where b.id = ${rowId}`);
}

/** preparing → submitted with what the poll needs; false when the row had left preparing. */
export async function markSubmitted(
  db: Queryable,
  rowId: string,
  input: {
    jobArn: string;
    modelId: string;
    promptHash: string;
    records: number;
    shards: number;
    inputBytes: number;
    now: Date;
    deadline: Date;
    nextPoll: Date;
  },
): Promise<boolean> {
  const moved = await db.query(sql.type(AnyRow)`
    update conversion_batch_jobs
       set state = 'submitted', job_arn = ${input.jobArn}, model_id = ${input.modelId}, prompt_hash = ${input.promptHash},
           records = ${input.records}, shards = ${input.shards}, input_bytes = ${input.inputBytes},
           submitted_at = ${ts(input.now)}, deadline_at = ${ts(input.deadline)}, next_poll_at = ${ts(input.nextPoll)}
     where id = ${rowId} and state = 'preparing'`);
  return moved.rowCount > 0;
}

/** The facts of a prepared batch, kept on the row before the create call so an adopted job can be collected. */
export async function recordPrepared(
  db: Queryable,
  rowId: string,
  input: { modelId: string; promptHash: string; records: number; shards: number; inputBytes: number },
): Promise<void> {
  await db.query(sql.type(AnyRow)`
    update conversion_batch_jobs set model_id = ${input.modelId}, prompt_hash = ${input.promptHash}, records = ${input.records},
           shards = ${input.shards}, input_bytes = ${input.inputBytes}
     where id = ${rowId} and state = 'preparing'`);
}

/** Submitted rows whose next poll is due. */
export function selectDueRows(db: Queryable, now: Date): Promise<readonly BatchRow[]> {
  return db.any(sql.type(BatchRow)`
    select ${rowColumns} from conversion_batch_jobs b where b.state = 'submitted' and b.next_poll_at <= ${ts(now)} order by b.next_poll_at`);
}

/** Preparing rows claimed before `before` (their driver died or hangs). */
export function selectStuckPreparing(db: Queryable, before: Date): Promise<readonly BatchRow[]> {
  return db.any(sql.type(BatchRow)`
    select ${rowColumns} from conversion_batch_jobs b where b.state = 'preparing' and b.claimed_at < ${ts(before)}`);
}

export async function schedulePoll(db: Queryable, rowId: string, input: { nextPoll: Date; remoteStatus?: string; collectFailed?: boolean }): Promise<number> {
  return db.oneFirst(sql.type(z.object({ attempts: z.number() }))`
    update conversion_batch_jobs
       set next_poll_at = ${ts(input.nextPoll)}, remote_status = coalesce(${input.remoteStatus ?? null}, remote_status),
           collect_attempts = collect_attempts + ${input.collectFailed ? 1 : 0}
     where id = ${rowId} returning collect_attempts as attempts`);
}

/**
 * The guarded close: only a row still in `from` moves, so of two drivers
 * closing the same row exactly one gets true (and writes the ledger row).
 * A user's reason already on the row is kept.
 */
export async function closeRow(
  tx: Queryable,
  rowId: string,
  from: 'preparing' | 'submitted',
  input: { outcome: BatchOutcome; reason: string; now: Date; remoteStatus?: string; accepted?: number; fallback?: number; costUsd?: number },
): Promise<boolean> {
  const moved = await tx.query(sql.type(AnyRow)`
    update conversion_batch_jobs
       set state = 'closed', outcome = ${input.outcome}, reason = coalesce(reason, ${input.reason}), closed_at = ${ts(input.now)},
           remote_status = coalesce(${input.remoteStatus ?? null}, remote_status), accepted = ${input.accepted ?? null},
           fallback = ${input.fallback ?? null}, cost_usd = ${input.costUsd ?? null}, next_poll_at = null
     where id = ${rowId} and state = ${from}`);
  return moved.rowCount > 0;
}

/** The batch cost ledger row (one per remote job: cost_ledger_batch_job_idx) and the job's share of it. */
export async function bookBatchCost(tx: Queryable, jobId: string | null, costUsd: number, metadata: Record<string, unknown>): Promise<void> {
  await tx.query(sql.type(AnyRow)`
    insert into cost_ledger (source, job_id, cost_usd, metadata) values ('batch-lane', ${jobId}, ${costUsd}, ${sql.jsonb(metadata as never)})`);
  if (jobId) {
    await tx.query(sql.type(AnyRow)`
      update large_conversion_jobs
         set total_cost_usd = total_cost_usd + ${costUsd},
             options = options || jsonb_build_object('_batchCostUsd', coalesce((options ->> '_batchCostUsd')::numeric, 0) + ${costUsd})
       where id = ${jobId}`);
  }
}

/** resume_batch_conversion_job: the chunks to queue (none when the job was not waiting). */
export function resumeBatchJob(tx: Queryable, jobId: string, primed: boolean, holdWindowMs: number): Promise<readonly string[]> {
  return tx.anyFirst(sql.type(z.object({ chunkId: z.uuid() }))`
    select chunk_id as "chunkId" from resume_batch_conversion_job(${jobId}, ${primed}, make_interval(secs => ${holdWindowMs / 1000}))`);
}

/**
 * Stranded jobs: parked for the batch lane while their batch row is already
 * closed (the closing driver died before resuming). Cancelled jobs are not
 * parked, so they never show up here.
 */
export function selectStrandedJobs(db: Queryable) {
  return db.any(sql.type(z.object({ jobId: z.uuid(), outcome: BatchOutcome }))`
    select j.id as "jobId", b.outcome from large_conversion_jobs j join conversion_batch_jobs b on b.job_id = j.id
     where j.status = 'waiting_batch' and b.state = 'closed'`);
}

/**
 * A user's cancel or process now against the batch row, in the caller's
 * transaction: no row yet → a closed `skipped` row with the reason (the
 * driver never claims the job); preparing or submitted → the reason set (the
 * driver stops the remote job); closed → nothing. Answers the state the row
 * was in and its remote job.
 */
export async function markBatchForUser(tx: Queryable, jobId: string, reason: string, now: Date) {
  const inserted = await tx.maybeOne(sql.type(z.object({ id: z.uuid() }))`
    insert into conversion_batch_jobs (id, job_id, job_name, state, outcome, reason, claimed_at, closed_at)
    select id, ${jobId}, 'folio-batch-' || id, 'closed', 'skipped', ${reason}, ${ts(now)}, ${ts(now)} from (select gen_random_uuid() as id) g
    on conflict (job_id) do nothing returning id`);
  if (inserted) return { state: 'none' as const, jobArn: null };
  const row = await tx.one(sql.type(z.object({ state: BatchState, jobArn: z.string().nullable() }))`
    update conversion_batch_jobs set reason = case when state = 'closed' then reason else coalesce(reason, ${reason}) end
     where job_id = ${jobId} returning state, job_arn as "jobArn"`);
  return row;
}
