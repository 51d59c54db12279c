import { z } from 'zod';
import { AnyRow, sql, type Queryable } from '../db/database.ts';
import { BENCHMARK_BACKENDS } from './benchmark.jobs.ts';

/**
 * Every statement of the benchmark service (sql/085_benchmark.sql). The
 * results table is the specification's key-value store: the key is
 * (session, pipeline), the value the JSON below.
 */

const PipelineStatus = z.enum(['queued', 'running', 'complete', 'failed']);

/** Where a finished pipeline's outputs are in the object store (never shown: the API hands out signed links). */
const OutputKeys = z.object({ html: z.string(), pdf: z.string(), report: z.string() });

/** One pipeline's value in the key-value table. Measurements are present once it completed. */
export const PipelineValue = z.object({
  status: PipelineStatus,
  backend: z.enum(BENCHMARK_BACKENDS),
  uxOptimizer: z.boolean(),
  attempts: z.number().int().min(0),
  startedAt: z.string().optional(),
  /** host:pid of the worker that took the latest attempt (operators follow a run across the fleet) */
  worker: z.string().optional(),
  finishedAt: z.string().optional(),
  timeMs: z.number().optional(),
  pages: z.number().int().optional(),
  pageClasses: z.object({ standard: z.number().int(), complex: z.number().int() }).optional(),
  wcagStatus: z.enum(['passed', 'failed']).optional(),
  violations: z.object({ count: z.number().int(), rules: z.number().int() }).optional(),
  /** share of the text layer's words found in the output; null for a document without a text layer (a scan) */
  wordRecall: z.number().min(0).max(1).nullable().optional(),
  costUsd: z.number().optional(),
  credits: z.number().int().optional(),
  outputs: OutputKeys.optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  deadLettered: z.boolean().optional(),
});
export type PipelineValue = z.infer<typeof PipelineValue>;

const SessionRow = z.object({
  id: z.uuid(),
  ownerId: z.uuid(),
  customerId: z.uuid(),
  fileId: z.uuid(),
  pipelineCount: z.number(),
  pages: z.number(),
  status: z.enum(['running', 'complete']),
  holdId: z.uuid().nullable(),
  createdAt: z.string(),
  completedAt: z.string().nullable(),
});
export type SessionRow = z.infer<typeof SessionRow>;

const sessionColumns = sql.fragment`
  s.id, s.owner_id as "ownerId", s.customer_id as "customerId", s.file_id as "fileId", s.pipeline_count as "pipelineCount",
  s.pages, s.status, s.hold_id as "holdId", to_json(s.created_at)#>>'{}' as "createdAt", to_json(s.completed_at)#>>'{}' as "completedAt"`;

export function insertSession(
  tx: Queryable,
  session: { ownerId: string; customerId: string; fileId: string; pipelineCount: number; pages: number; holdId: string | null },
): Promise<string> {
  return tx.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into benchmark_sessions (owner_id, customer_id, file_id, pipeline_count, pages, hold_id)
    values (${session.ownerId}, ${session.customerId}, ${session.fileId}, ${session.pipelineCount}, ${session.pages}, ${session.holdId})
    returning id`);
}

export async function insertResult(tx: Queryable, sessionId: string, pipeline: number, value: PipelineValue): Promise<void> {
  await tx.query(sql.type(AnyRow)`
    insert into benchmark_results (session_id, pipeline, value) values (${sessionId}, ${pipeline}, ${sql.jsonb(value)})`);
}

export function selectSession(db: Queryable, sessionId: string): Promise<SessionRow | null> {
  return db.maybeOne(sql.type(SessionRow)`select ${sessionColumns} from benchmark_sessions s where s.id = ${sessionId}`);
}

/** The session row under a row lock: every terminal write takes it first (the exactly-once completion). */
export function lockSession(tx: Queryable, sessionId: string): Promise<SessionRow | null> {
  return tx.maybeOne(sql.type(SessionRow)`select ${sessionColumns} from benchmark_sessions s where s.id = ${sessionId} for update`);
}

export async function selectResults(db: Queryable, sessionId: string): Promise<Array<{ pipeline: number; value: PipelineValue }>> {
  const rows = await db.any(sql.type(z.object({ pipeline: z.number(), value: PipelineValue }))`
    select pipeline, value from benchmark_results where session_id = ${sessionId} order by pipeline`);
  return [...rows];
}

const FileForRun = z.object({ storageKey: z.string().nullable(), originalName: z.string(), pageCount: z.number().nullable() });

/** The session's own file (never the message's word for it). */
export function selectSessionFile(db: Queryable, sessionId: string) {
  return db.maybeOne(sql.type(FileForRun.extend({ fileId: z.uuid() }))`
    select f.id as "fileId", f.storage_key as "storageKey", f.original_name as "originalName", f.page_count as "pageCount"
      from benchmark_sessions s join files f on f.id = s.file_id where s.id = ${sessionId}`);
}

/**
 * Marks the pipeline running for another attempt, unless its value is already
 * terminal (a duplicate delivery). A `running` value is taken over: its
 * worker died, or gave the job back, and the queue handed it on.
 */
export function claimPipeline(db: Queryable, sessionId: string, pipeline: number, claim: { startedAt: Date; worker: string }): Promise<PipelineValue | null> {
  return db
    .maybeOne(sql.type(z.object({ value: PipelineValue }))`
    update benchmark_results
       set value = value || jsonb_build_object('status', 'running', 'attempts', (value->>'attempts')::int + 1,
                                               'startedAt', ${claim.startedAt.toISOString()}::text, 'worker', ${claim.worker}::text),
           updated_at = now()
     where session_id = ${sessionId} and pipeline = ${pipeline} and value->>'status' in ('queued', 'running')
     returning value`)
    .then((row) => row?.value ?? null);
}

/** Back to queued (the queue retries it), keeping what the last attempt said went wrong. */
export async function requeuePipeline(db: Queryable, sessionId: string, pipeline: number, error: { code: string; message: string } | undefined): Promise<void> {
  await db.query(sql.type(AnyRow)`
    update benchmark_results
       set value = value || jsonb_build_object('status', 'queued') || ${error ? sql.fragment`jsonb_build_object('error', ${sql.jsonb(error)}::jsonb)` : sql.fragment`'{}'::jsonb`},
           updated_at = now()
     where session_id = ${sessionId} and pipeline = ${pipeline} and value->>'status' = 'running'`);
}

/** Writes a terminal value unless one is there already; false when it was. */
export async function finishResult(tx: Queryable, sessionId: string, pipeline: number, value: PipelineValue): Promise<boolean> {
  const result = await tx.query(sql.type(AnyRow)`
    update benchmark_results set value = ${sql.jsonb(value)}, updated_at = now()
     where session_id = ${sessionId} and pipeline = ${pipeline} and value->>'status' not in ('complete', 'failed')`);
  return result.rowCount === 1;
}

export function countTerminal(tx: Queryable, sessionId: string) {
  return tx.one(sql.type(z.object({ terminal: z.number(), completed: z.number() }))`
    select count(*) filter (where value->>'status' in ('complete', 'failed'))::int as terminal,
           count(*) filter (where value->>'status' = 'complete')::int as completed
      from benchmark_results where session_id = ${sessionId}`);
}

/** running -> complete; false when another writer already did it. */
export async function markSessionComplete(tx: Queryable, sessionId: string): Promise<boolean> {
  const result = await tx.query(sql.type(AnyRow)`
    update benchmark_sessions set status = 'complete', completed_at = now() where id = ${sessionId} and status = 'running'`);
  return result.rowCount === 1;
}

/**
 * Pipelines not yet finished, over all sessions: queued ones wait for a
 * worker, running ones hold one. The autoscaling rule follows this count, so
 * an instance is not taken away from a pipeline it is running.
 */
export function selectQueueDepth(db: Queryable) {
  return db.one(sql.type(z.object({ queued: z.number(), running: z.number() }))`
    select count(*) filter (where value->>'status' = 'queued')::int as queued,
           count(*) filter (where value->>'status' = 'running')::int as running
      from benchmark_results r join benchmark_sessions s on s.id = r.session_id
     where s.status = 'running'`);
}

/** Pipelines dead-lettered within the window: the "messages in the pipeline dead-letter queue" alarm. */
export function countRecentDeadLetters(db: Queryable, windowSeconds: number): Promise<number> {
  return db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from benchmark_results
     where value->>'deadLettered' = 'true' and updated_at > now() - make_interval(secs => ${windowSeconds})`);
}
