import { oncePerBoss, type Boss } from '../queue/boss.ts';

export const BUDGET_CHECK_QUEUE = 'budget.check';
export const COST_MONITORS_QUEUE = 'budget.cost-monitors';
export const SPEND_DIGEST_QUEUE = 'budget.spend-digest';

/** One check queued and one running at most: a burst of chunk completions asks for one more check, not hundreds. */
const BUDGET_CHECK_POLICY = { policy: 'stately', retryLimit: 2, retryDelay: 5 } as const;

async function createBudgetQueues(boss: Boss): Promise<void> {
  await boss.createQueue(BUDGET_CHECK_QUEUE, BUDGET_CHECK_POLICY);
  await boss.createQueue(COST_MONITORS_QUEUE, { policy: 'singleton', retryLimit: 1 });
  // The digest's mail is keyed by its day, so a retry never mails twice.
  await boss.createQueue(SPEND_DIGEST_QUEUE, { policy: 'singleton', retryLimit: 3, retryDelay: 60 });
}

export const ensureBudgetQueues = oncePerBoss(createBudgetQueues);

/** Asks the workers for a budget check soon (after a chunk booked spend); coalesces with one already waiting. */
export async function requestBudgetCheck(boss: Boss): Promise<void> {
  await ensureBudgetQueues(boss);
  await boss.send(BUDGET_CHECK_QUEUE, {});
}
