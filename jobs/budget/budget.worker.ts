import { BUDGET_CHECK_QUEUE, COST_MONITORS_QUEUE, ensureBudgetQueues, SPEND_DIGEST_QUEUE } from '../../server/budget/budget.jobs.ts';
import { checkModelBudget } from '../../server/budget/check-model-budget.ts';
import { checkCostSpike, checkCostTrickle } from '../../server/budget/cost-monitors.ts';
import { sendSpendDigest } from '../../server/budget/send-spend-digest.ts';
import type { Deps } from '../../server/deps.ts';

/**
 * The money side's schedules: the model budget every minute (a period that
 * rolled over resumes paused work within a minute; chunk completions ask for
 * a check in between), the cost monitors at five past every hour (they read
 * complete hours), the spend digest daily at 07:00 UTC for the day before.
 */
export async function registerBudgetJobs(deps: Deps, options: { schedule?: boolean } = {}) {
  await ensureBudgetQueues(deps.boss);
  await deps.boss.work(BUDGET_CHECK_QUEUE, { pollingIntervalSeconds: 1 }, async () => {
    const check = await checkModelBudget(deps);
    if (check.paused > 0 || check.resumed > 0) deps.log.info({ event: 'model_budget', ...check }, 'model budget check');
  });
  await deps.boss.work(COST_MONITORS_QUEUE, async () => {
    const spike = await checkCostSpike(deps);
    const trickle = await checkCostTrickle(deps);
    if (spike.firing || trickle.firing) deps.log.warn({ event: 'cost_monitors', spike, trickle }, 'cost monitor firing');
  });
  await deps.boss.work(SPEND_DIGEST_QUEUE, async () => {
    const { digest, outcome } = await sendSpendDigest(deps);
    if (outcome.ok) return;
    deps.log.error({ day: digest.day, error: outcome.error }, 'spend digest not sent');
    // unconfigured stays unconfigured on a retry; anything else is worth the queue's retries
    if (outcome.kind !== 'unconfigured') throw new Error(`spend digest not sent: ${outcome.error}`);
  });
  if (options.schedule === false) return;
  await deps.boss.schedule(BUDGET_CHECK_QUEUE, '* * * * *', {}, { tz: 'UTC' });
  await deps.boss.schedule(COST_MONITORS_QUEUE, '5 * * * *', {}, { tz: 'UTC' });
  await deps.boss.schedule(SPEND_DIGEST_QUEUE, '0 7 * * *', {}, { tz: 'UTC' });
}
