import { z } from 'zod';
import { budgetPeriods } from './budget-periods.ts';
import { countPausedJobs, selectBudget, spendByBackend, sumSpend, updateBudgetLimits } from './budget.queries.ts';
import { budgetState, checkModelBudget, effectiveLimits, type BudgetDeps } from './check-model-budget.ts';

const Period = z.object({
  spendUsd: z.number(),
  limitUsd: z.number().nullable(),
  /** spend / limit; null without a limit */
  ratio: z.number().nullable(),
});

export const BudgetView = z.object({
  state: z.enum(['ok', 'warning', 'paused']),
  dailyUsd: z.number().nullable(),
  monthlyUsd: z.number().nullable(),
  /** where each limit comes from: the admin's setting, the environment, or none */
  source: z.object({ daily: z.enum(['admin', 'env', 'none']), monthly: z.enum(['admin', 'env', 'none']) }),
  alertPercent: z.number(),
  pausedAt: z.string().nullable(),
  pausedReason: z.string().nullable(),
  pausedJobs: z.number().int(),
});
export type BudgetView = z.infer<typeof BudgetView>;

export const SpendView = z.object({
  now: z.string(),
  today: Period.extend({ from: z.string() }),
  month: Period.extend({ from: z.string() }),
  byBackend: z.array(z.object({ backend: z.string(), todayUsd: z.number(), monthUsd: z.number() })),
  budget: BudgetView,
});
export type SpendView = z.infer<typeof SpendView>;

/** Limits of at most a million dollars, to the cent or finer; null hands the limit back to the environment. */
export const BudgetSettingsInput = z.object({
  dailyUsd: z.number().positive().max(1_000_000).nullable(),
  monthlyUsd: z.number().positive().max(1_000_000).nullable(),
});
export type BudgetSettingsInput = z.infer<typeof BudgetSettingsInput>;

function ratio(spendUsd: number, limitUsd: number | null) {
  return limitUsd ? spendUsd / limitUsd : null;
}

export async function readBudget(deps: Pick<BudgetDeps, 'db' | 'config' | 'clock'>): Promise<BudgetView> {
  return (await readBudgetAndSpend(deps)).budget;
}

/** The budget's view and the day's and month's spend it was judged on, each sum read once. */
async function readBudgetAndSpend(deps: Pick<BudgetDeps, 'db' | 'config' | 'clock'>) {
  const { day, month } = budgetPeriods(deps.clock.now());
  const [row, daySpend, monthSpend, pausedJobs] = await Promise.all([
    selectBudget(deps.db),
    sumSpend(deps.db, day.start, day.end),
    sumSpend(deps.db, month.start, month.end),
    countPausedJobs(deps.db),
  ]);
  const limits = effectiveLimits(row, deps.config);
  const source = (own: number | null, env: number | undefined) => (own !== null ? 'admin' : env !== undefined ? 'env' : 'none') as 'admin' | 'env' | 'none';
  const derived = budgetState(
    {
      daily: { spendUsd: daySpend, limitUsd: limits.dailyUsd, ratio: ratio(daySpend, limits.dailyUsd) },
      monthly: { spendUsd: monthSpend, limitUsd: limits.monthlyUsd, ratio: ratio(monthSpend, limits.monthlyUsd) },
    },
    deps.config.budget.alertRatio,
  );
  const budget: BudgetView = {
    // Paused until a check resumes the work, even when a raise already put the spend under the limit.
    state: row.pausedAt ? 'paused' : derived,
    dailyUsd: limits.dailyUsd,
    monthlyUsd: limits.monthlyUsd,
    source: { daily: source(row.dailyUsd, deps.config.budget.dailyUsd), monthly: source(row.monthlyUsd, deps.config.budget.monthlyUsd) },
    alertPercent: Math.round(deps.config.budget.alertRatio * 100),
    pausedAt: row.pausedAt?.toISOString() ?? null,
    pausedReason: row.pausedReason,
    pausedJobs,
  };
  return { budget, daySpend, monthSpend };
}

/** GET /api/admin/spend: today, this month, per backend, and the budget's state. */
export async function readSpend(deps: Pick<BudgetDeps, 'db' | 'config' | 'clock'>): Promise<SpendView> {
  const now = deps.clock.now();
  const { day, month } = budgetPeriods(now);
  const [{ budget, daySpend: today, monthSpend: thisMonth }, dayBackends, monthBackends] = await Promise.all([
    readBudgetAndSpend(deps),
    spendByBackend(deps.db, day.start, day.end),
    spendByBackend(deps.db, month.start, month.end),
  ]);
  const todayByBackend = new Map(dayBackends.map((row) => [row.backend, row.usd]));
  return {
    now: now.toISOString(),
    today: { from: day.start.toISOString(), spendUsd: today, limitUsd: budget.dailyUsd, ratio: ratio(today, budget.dailyUsd) },
    month: { from: month.start.toISOString(), spendUsd: thisMonth, limitUsd: budget.monthlyUsd, ratio: ratio(thisMonth, budget.monthlyUsd) },
    byBackend: monthBackends.map((row) => ({ backend: row.backend, todayUsd: todayByBackend.get(row.backend) ?? 0, monthUsd: row.usd })),
    budget,
  };
}

/**
 * PUT /api/admin/budget: new limits, then a budget check at once, so a raise
 * resumes paused conversions (in order) before the answer, and a cut pauses.
 */
export async function updateBudget(deps: BudgetDeps, input: BudgetSettingsInput): Promise<BudgetView> {
  await updateBudgetLimits(deps.db, input);
  await checkModelBudget(deps);
  return readBudget(deps);
}
