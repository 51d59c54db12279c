import { ON_DEMAND_HOLD_WINDOW_MS } from '../credits/credits.ts';
import { enqueueChunk, ensureConversionQueues } from '../conversion-jobs/conversion-jobs.jobs.ts';
import { notifyConversion, restartHoldWindow, setFilePhase } from '../conversion-jobs/conversion-jobs.queries.ts';
import type { Deps } from '../deps.ts';
import type { OutOfBandMail } from '../out-of-band/out-of-band-sender.ts';
import { budgetPeriods, formatUsd, isoDate } from './budget-periods.ts';
import {
  claimBudgetAlert,
  lockOldestPausedJob,
  pauseLiveJobs,
  releaseBudgetAlert,
  resumePausedJob,
  selectBudget,
  setBudgetPaused,
  sumSpend,
  type BudgetRow,
} from './budget.queries.ts';

export type BudgetDeps = Pick<Deps, 'db' | 'boss' | 'clock' | 'config' | 'log' | 'outOfBand'>;

export type PeriodState = { spendUsd: number; limitUsd: number | null; ratio: number | null };
export type BudgetCheck = {
  state: 'ok' | 'warning' | 'paused';
  daily: PeriodState;
  monthly: PeriodState;
  paused: number;
  resumed: number;
};

/** Limits in force: the admin's, else the environment's; null means no limit. */
export function effectiveLimits(row: Pick<BudgetRow, 'dailyUsd' | 'monthlyUsd'>, config: BudgetDeps['config']) {
  return { dailyUsd: row.dailyUsd ?? config.budget.dailyUsd ?? null, monthlyUsd: row.monthlyUsd ?? config.budget.monthlyUsd ?? null };
}

function periodState(spendUsd: number, limitUsd: number | null): PeriodState {
  return { spendUsd, limitUsd, ratio: limitUsd ? spendUsd / limitUsd : null };
}

type Alert = { period: 'daily' | 'monthly'; periodStart: string; level: 'warning' | 'exhausted'; spendUsd: number; limitUsd: number };

/**
 * The model budget's one decision, run every minute, after chunks complete,
 * and when an admin changes the limits. Spend of the current UTC day and
 * month comes from the cost ledger. At the alert share (80%) of a limit one
 * warning per period is mailed; at 100% chunk work pauses (live jobs to
 * `paused_budget`; running chunks stop after their page) and the kill-switch
 * mail goes out once per period. When no limit is reached any more — the
 * period rolled over or a limit was raised — paused jobs resume, oldest
 * first, their pending chunks queued in page order. State changes commit
 * with their queue jobs; mail leaves afterwards, out of band.
 */
export async function checkModelBudget(deps: BudgetDeps): Promise<BudgetCheck> {
  const now = deps.clock.now();
  const { day, month } = budgetPeriods(now);
  const [daySpend, monthSpend] = await Promise.all([sumSpend(deps.db, day.start, day.end), sumSpend(deps.db, month.start, month.end)]);
  await ensureConversionQueues(deps.boss);

  const decided = await deps.db.transaction(async (tx) => {
    const row = await selectBudget(tx, { lock: true });
    const limits = effectiveLimits(row, deps.config);
    const daily = periodState(daySpend, limits.dailyUsd);
    const monthly = periodState(monthSpend, limits.monthlyUsd);
    if (exhausted({ daily, monthly })) {
      if (!row.pausedAt) {
        const reason = (daily.ratio ?? 0) >= 1 ? 'daily' : 'monthly';
        await setBudgetPaused(tx, now, reason);
      }
      // Also every run while paused: a job that slipped past a claim racing the pause is caught here.
      const paused = await pauseLiveJobs(tx);
      return { daily, monthly, paused: paused.length, pausedAt: row.pausedAt ?? now };
    }
    if (row.pausedAt) await setBudgetPaused(tx, null, null);
    return { daily, monthly, paused: 0, pausedAt: row.pausedAt };
  });
  const resumed = exhausted(decided) ? 0 : await resumePausedJobs(deps);

  const alerts: Alert[] = [];
  for (const [period, state, start] of [
    ['daily', decided.daily, day.start],
    ['monthly', decided.monthly, month.start],
  ] as const) {
    if (state.ratio === null || state.limitUsd === null || state.ratio < deps.config.budget.alertRatio) continue;
    const base = { period, periodStart: isoDate(start), spendUsd: state.spendUsd, limitUsd: state.limitUsd };
    if (state.ratio >= 1) {
      // The kill-switch mail says all the warning would; the warning is marked sent so it never follows.
      await claimBudgetAlert(deps.db, { ...base, level: 'warning' });
      alerts.push({ ...base, level: 'exhausted' });
    } else alerts.push({ ...base, level: 'warning' });
  }
  for (const alert of alerts) {
    if (!(await claimBudgetAlert(deps.db, alert))) continue;
    const outcome = await deps.outOfBand.send(budgetMail(alert, decided.paused, decided.pausedAt));
    if (!outcome.ok) {
      deps.log.error({ alert, error: outcome.error }, 'model budget alert not sent');
      if (outcome.kind !== 'unconfigured') await releaseBudgetAlert(deps.db, alert);
    }
  }
  if (decided.pausedAt && !exhausted(decided)) {
    // A raise re-arms the kill-switch: spending through the new limit in the same period pauses and mails again.
    for (const [period, start] of [
      ['daily', day.start],
      ['monthly', month.start],
    ] as const) {
      await releaseBudgetAlert(deps.db, { period, periodStart: isoDate(start), level: 'exhausted' });
    }
  }
  if (resumed > 0 && decided.pausedAt) {
    deps.log.info({ resumed }, 'model budget: paused conversions resumed');
    const outcome = await deps.outOfBand.send({
      source: 'model_budget',
      subject: `Model budget: ${resumed} paused conversion(s) resumed`,
      text: `Model spend is under its limits again (today ${formatUsd(decided.daily.spendUsd)}, this month ${formatUsd(decided.monthly.spendUsd)}); ${resumed} conversion(s) paused since ${decided.pausedAt.toISOString()} were queued again.`,
      key: `model-budget-resumed:${decided.pausedAt.toISOString()}`,
    });
    if (!outcome.ok) deps.log.warn({ error: outcome.error }, 'model budget resume mail not sent');
  }
  return {
    state: budgetState(decided, deps.config.budget.alertRatio),
    daily: decided.daily,
    monthly: decided.monthly,
    paused: decided.paused,
    resumed,
  };
}

/** paused at 100% of any limit, warning at the alert share of any, else ok. */
export function budgetState(periods: { daily: PeriodState; monthly: PeriodState }, alertRatio: number): BudgetCheck['state'] {
  const ratios = [periods.daily.ratio, periods.monthly.ratio].filter((ratio): ratio is number => ratio !== null);
  if (ratios.some((ratio) => ratio >= 1)) return 'paused';
  return ratios.some((ratio) => ratio >= alertRatio) ? 'warning' : 'ok';
}

function exhausted(periods: { daily: PeriodState; monthly: PeriodState }) {
  return [periods.daily, periods.monthly].some((period) => period.ratio !== null && period.ratio >= 1);
}

/**
 * paused_budget jobs back to pending, oldest first, one transaction each:
 * their chunks' queue jobs get increasing creation times, which is the order
 * pg-boss hands them out. Each transaction takes the budget row first and
 * stops when a concurrent check paused again. Also finishes a resume an
 * earlier check was stopped in the middle of.
 */
async function resumePausedJobs(deps: BudgetDeps): Promise<number> {
  let resumed = 0;
  for (;;) {
    const done = await deps.db.transaction(async (tx) => {
      if ((await selectBudget(tx, { lock: true })).pausedAt) return true;
      const job = await lockOldestPausedJob(tx);
      if (!job) return true;
      const chunks = await resumePausedJob(tx, job.id);
      if (job.holdId) await restartHoldWindow(tx, job.holdId, ON_DEMAND_HOLD_WINDOW_MS);
      await setFilePhase(tx, job.fileId, `Converting: ${job.chunksDone}/${job.totalChunks} chunks`);
      for (const chunkId of chunks) await enqueueChunk(deps.boss, tx, { chunkId, jobId: job.id });
      await notifyConversion(tx, job.fileId, job.id, 'progress');
      return false;
    });
    if (done) return resumed;
    resumed++;
  }
}

function budgetMail(alert: Alert, paused: number, pausedAt: Date | null): OutOfBandMail {
  const share = Math.floor((alert.spendUsd / alert.limitUsd) * 100);
  const what = `${alert.period} model budget (${alert.period === 'daily' ? alert.periodStart : alert.periodStart.slice(0, 7)})`;
  if (alert.level === 'warning') {
    return {
      source: 'model_budget',
      subject: `Model budget at ${share}%: ${formatUsd(alert.spendUsd)} of ${formatUsd(alert.limitUsd)}`,
      text: `The ${what} is at ${share}%: ${formatUsd(alert.spendUsd)} of ${formatUsd(alert.limitUsd)}. At 100% new chunk work pauses.`,
      key: `model-budget:${alert.period}:${alert.periodStart}:warning`,
    };
  }
  return {
    source: 'model_budget_kill_switch',
    subject: `Model budget reached: conversions paused (${formatUsd(alert.spendUsd)} of ${formatUsd(alert.limitUsd)})`,
    text:
      `The ${what} is spent: ${formatUsd(alert.spendUsd)} of ${formatUsd(alert.limitUsd)}. ` +
      `Chunk work is paused (${paused} conversion(s) moved to paused_budget; running chunks stop after their current page). ` +
      'They resume in order when the period resets or the limit is raised (PUT /api/admin/budget).',
    // per pause: a second pause in the same period (after a raise) is a new mail, not a provider replay
    key: `model-budget:${alert.period}:${alert.periodStart}:exhausted:${pausedAt?.toISOString() ?? ''}`,
  };
}
