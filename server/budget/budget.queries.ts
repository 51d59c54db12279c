import { z } from 'zod';
import { AnyRow, sql, type Queryable } from '../db/database.ts';
import { notifyConversion, setFilePhase } from '../conversion-jobs/conversion-jobs.queries.ts';

/**
 * Every statement of the model budget and the cost monitors
 * (sql/080_model_budget.sql). Spend is always summed from the cost ledger over
 * a half-open [from, to) range the caller computes from its clock.
 */

const PAUSED_PHASE = 'Paused: model budget reached';

const usd = z.coerce.number();

export async function sumSpend(db: Queryable, from: Date, to: Date): Promise<number> {
  return db.oneFirst(sql.type(z.object({ usd }))`
    select coalesce(sum(cost_usd), 0) as usd from cost_ledger
     where created_at >= ${from.toISOString()}::timestamptz and created_at < ${to.toISOString()}::timestamptz`);
}

const BackendSpend = z.object({ backend: z.string(), usd });

/** Spend per backend, largest first; rows that name none (older rows) count as `unknown`. */
export function spendByBackend(db: Queryable, from: Date, to: Date) {
  return db.any(sql.type(BackendSpend)`
    select coalesce(backend, metadata->>'backend', 'unknown') as backend, sum(cost_usd) as usd from cost_ledger
     where created_at >= ${from.toISOString()}::timestamptz and created_at < ${to.toISOString()}::timestamptz
     group by 1 order by 2 desc, 1`);
}

const CustomerSpend = z.object({ customer: z.string(), usd });

/** The top `limit` customers by spend (through the ledger row's job); rows with no job are `unattributed`. */
export function spendByCustomer(db: Queryable, from: Date, to: Date, limit: number) {
  return db.any(sql.type(CustomerSpend)`
    select coalesce(c.email, 'unattributed') as customer, sum(l.cost_usd) as usd
      from cost_ledger l left join large_conversion_jobs j on j.id = l.job_id left join customers c on c.id = j.customer_id
     where l.created_at >= ${from.toISOString()}::timestamptz and l.created_at < ${to.toISOString()}::timestamptz
     group by 1 order by 2 desc, 1 limit ${limit}`);
}

/**
 * What the batch lane saved: each batch row (metadata batch = true) is priced
 * at its batchMultiplier of on-demand, so on-demand would have cost row / multiplier.
 */
export function batchSavings(db: Queryable, from: Date, to: Date): Promise<number> {
  return db.oneFirst(sql.type(z.object({ usd }))`
    select coalesce(sum(cost_usd / nullif((metadata->>'batchMultiplier')::numeric, 0) - cost_usd), 0) as usd from cost_ledger
     where metadata->>'batch' = 'true'
       and created_at >= ${from.toISOString()}::timestamptz and created_at < ${to.toISOString()}::timestamptz`);
}

/** Ledger spend per hour bucket of [from, from + hours h), bucket 0 first; hours with no row are absent. */
export function hourlySpend(db: Queryable, from: Date, hours: number) {
  const to = new Date(from.getTime() + hours * 3_600_000);
  return db.any(sql.type(z.object({ hour: z.number(), usd }))`
    select floor(extract(epoch from created_at - ${from.toISOString()}::timestamptz) / 3600)::int as hour, sum(cost_usd) as usd
      from cost_ledger
     where created_at >= ${from.toISOString()}::timestamptz and created_at < ${to.toISOString()}::timestamptz
     group by 1 order by 1`);
}

export function countCompletedConversions(db: Queryable, from: Date, to: Date): Promise<number> {
  return db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from large_conversion_jobs
     where status = 'completed' and finished_at >= ${from.toISOString()}::timestamptz and finished_at < ${to.toISOString()}::timestamptz`);
}

export const BudgetRow = z.object({
  dailyUsd: z.coerce.number().nullable(),
  monthlyUsd: z.coerce.number().nullable(),
  pausedAt: z.date().nullable(),
  pausedReason: z.string().nullable(),
});
export type BudgetRow = z.infer<typeof BudgetRow>;

const budgetColumns = sql.fragment`daily_usd as "dailyUsd", monthly_usd as "monthlyUsd", paused_at as "pausedAt", paused_reason as "pausedReason"`;

/** The one budget row; `lock` serialises budget checks (and settings changes) across processes. */
export function selectBudget(db: Queryable, options: { lock?: boolean } = {}): Promise<BudgetRow> {
  return db.one(sql.type(BudgetRow)`select ${budgetColumns} from model_budget ${options.lock ? sql.fragment`for update` : sql.fragment``}`);
}

export async function updateBudgetLimits(db: Queryable, limits: { dailyUsd: number | null; monthlyUsd: number | null }): Promise<void> {
  await db.query(sql.type(AnyRow)`
    update model_budget set daily_usd = ${limits.dailyUsd}, monthly_usd = ${limits.monthlyUsd}, updated_at = now()`);
}

export async function setBudgetPaused(db: Queryable, pausedAt: Date | null, reason: string | null): Promise<void> {
  await db.query(sql.type(AnyRow)`
    update model_budget set paused_at = ${pausedAt?.toISOString() ?? null}::timestamptz, paused_reason = ${reason}, updated_at = now()`);
}

export function countPausedJobs(db: Queryable): Promise<number> {
  return db.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from large_conversion_jobs where status = 'paused_budget'`);
}

/**
 * Live chunk work to paused_budget: pending and processing jobs move, and
 * their processing chunks go back to pending with the run id cleared, so a
 * running chunk's next heartbeat (after the page it is on) matches no row and
 * it stops, booking what it spent. Job rows are locked first, as chunk
 * completion and cancel lock them, so the three serialise.
 */
export async function pauseLiveJobs(tx: Queryable): Promise<ReadonlyArray<{ id: string; fileId: string }>> {
  const jobs = await tx.any(sql.type(z.object({ id: z.uuid(), fileId: z.uuid() }))`
    update large_conversion_jobs set status = 'paused_budget', updated_at = now()
     where status in ('pending', 'processing') returning id, file_id as "fileId"`);
  await parkPausedJobs(tx, jobs);
  return jobs;
}

/** The claim's gate: while the budget is paused, a job about to start a chunk is paused instead. True when it was. */
export async function pauseJobIfBudgetSpent(tx: Queryable, jobId: string): Promise<boolean> {
  const paused = await tx.maybeOne(sql.type(z.object({ fileId: z.uuid() }))`
    update large_conversion_jobs set status = 'paused_budget', updated_at = now()
     where id = ${jobId} and status in ('pending', 'processing') and exists (select 1 from model_budget where paused_at is not null)
    returning file_id as "fileId"`);
  if (!paused) return false;
  await parkPausedJobs(tx, [{ id: jobId, fileId: paused.fileId }]);
  return true;
}

/** Jobs just paused: their running chunks back to pending (run id cleared, so the runner stops), the files told. */
async function parkPausedJobs(tx: Queryable, jobs: ReadonlyArray<{ id: string; fileId: string }>): Promise<void> {
  if (jobs.length === 0) return;
  await tx.query(sql.type(AnyRow)`
    update chunk_jobs set status = 'pending', run_id = null
     where job_id = any(${sql.array(
       jobs.map((job) => job.id),
       'uuid',
     )}) and status = 'processing'`);
  for (const job of jobs) {
    await setFilePhase(tx, job.fileId, PAUSED_PHASE);
    await notifyConversion(tx, job.fileId, job.id, 'progress');
  }
}

const PausedJob = z.object({ id: z.uuid(), fileId: z.uuid(), holdId: z.uuid().nullable(), totalChunks: z.number(), chunksDone: z.number() });

/** The oldest paused job (the order they resume in), locked; another process resuming skips it. */
export function lockOldestPausedJob(tx: Queryable) {
  return tx.maybeOne(sql.type(PausedJob)`
    select j.id, j.file_id as "fileId", j.hold_id as "holdId", j.total_chunks as "totalChunks",
           (select count(*)::int from chunk_jobs c where c.job_id = j.id and c.status = 'completed') as "chunksDone"
      from large_conversion_jobs j where j.status = 'paused_budget' order by j.created_at, j.id limit 1 for update of j skip locked`);
}

/** paused_budget → pending; the job's pending chunks, in page order. */
export async function resumePausedJob(tx: Queryable, jobId: string): Promise<readonly string[]> {
  await tx.query(sql.type(AnyRow)`update large_conversion_jobs set status = 'pending', updated_at = now() where id = ${jobId} and status = 'paused_budget'`);
  return tx.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    select id from chunk_jobs where job_id = ${jobId} and status = 'pending' order by chunk_index`);
}

/** Claims an alert of this period and level; false when it was already mailed. */
export async function claimBudgetAlert(
  db: Queryable,
  alert: { period: 'daily' | 'monthly'; periodStart: string; level: 'warning' | 'exhausted'; spendUsd: number; limitUsd: number },
): Promise<boolean> {
  const claimed = await db.query(sql.type(AnyRow)`
    insert into model_budget_alerts (period, period_start, level, spend_usd, limit_usd)
    values (${alert.period}, ${alert.periodStart}::date, ${alert.level}, ${alert.spendUsd}, ${alert.limitUsd})
    on conflict do nothing returning period`);
  return claimed.rowCount > 0;
}

/** Gives a claim back when its mail did not leave, so the next check tries again. */
export async function releaseBudgetAlert(db: Queryable, alert: { period: string; periodStart: string; level: string }): Promise<void> {
  await db.query(sql.type(AnyRow)`
    delete from model_budget_alerts where period = ${alert.period} and period_start = ${alert.periodStart}::date and level = ${alert.level}`);
}

/** Sets a monitor's firing flag; true only when it changed (so an alert goes out once per condition). */
export async function setMonitorFiring(db: Queryable, name: 'cost_spike' | 'cost_trickle', firing: boolean, detail: Record<string, unknown>): Promise<boolean> {
  const changed = await db.query(sql.type(AnyRow)`
    update cost_monitor_state set firing = ${firing}, changed_at = now(), detail = ${sql.jsonb(detail as never)}
     where name = ${name} and firing <> ${firing} returning name`);
  return changed.rowCount > 0;
}
