import { z } from 'zod';
import { BudgetSettingsInput, BudgetView, readBudget, readSpend, SpendView, updateBudget } from '../budget/read-spend.ts';
import { adminProcedure, router } from '../trpc/trpc.ts';

export const budgetRouter = router({
  spend: adminProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/admin/spend',
        tags: ['admin'],
        summary: 'Model spend: today, this month, per backend, and the budget state',
        description: 'Sums of the cost ledger over the current UTC day and month. budget.state is ok, warning (at MODEL_BUDGET_ALERT_PERCENT) or paused.',
      },
    })
    .input(z.void())
    .output(SpendView)
    .query(({ ctx }) => readSpend(ctx.deps)),
  settings: adminProcedure
    .meta({ openapi: { method: 'GET', path: '/api/admin/budget', tags: ['admin'], summary: 'Model budget settings and state' } })
    .input(z.void())
    .output(BudgetView)
    .query(({ ctx }) => readBudget(ctx.deps)),
  update: adminProcedure
    .meta({
      openapi: {
        method: 'PUT',
        path: '/api/admin/budget',
        tags: ['admin'],
        summary: 'Set the model budget',
        description:
          'dailyUsd and monthlyUsd in USD; null returns a limit to MODEL_BUDGET_DAILY_USD / MODEL_BUDGET_MONTHLY_USD. The budget is checked at once: a raise resumes paused conversions, oldest first; a cut at or under the spend pauses chunk work.',
      },
    })
    .input(BudgetSettingsInput)
    .output(BudgetView)
    .mutation(({ ctx, input }) => updateBudget(ctx.deps, input)),
});
