import type { Deps } from '../server/deps.ts';
import { registerCreditJobs } from './credits/expire-holds.worker.ts';
import { registerEmailJobs } from './email/deferred-send.worker.ts';
import { registerDeliveryEventJobs } from './delivery-events/poll.worker.ts';
import { registerAuditDigestJobs } from './audit-digest/audit-digest.worker.ts';
import { registerConversionJobs } from './conversion/conversion.worker.ts';
import { registerRateLimitJobs } from './rate-limit/sweep-rate-limits.worker.ts';
import { registerIntakeJobs } from './intake/intake.worker.ts';
import { registerWebhookJobs } from './webhooks/webhooks.worker.ts';
import { registerBenchmarkJobs } from './benchmark/benchmark.worker.ts';
import { registerStorageJobs } from './storage/storage.worker.ts';
import { registerBudgetJobs } from './budget/budget.worker.ts';

/**
 * Every queue, worker and schedule of the worker process, by area. Each area
 * exports a `register...` function from jobs/<area>/; the order does not
 * matter. `node jobs/main.ts --queues benchmark` registers only the named
 * areas (a spot instance that runs pipelines and nothing else).
 */
const registrations = {
  credits: registerCreditJobs,
  email: registerEmailJobs,
  'delivery-events': registerDeliveryEventJobs,
  'audit-digest': registerAuditDigestJobs,
  'rate-limit': registerRateLimitJobs,
  conversion: registerConversionJobs,
  intake: async (deps: Deps) => void (await registerIntakeJobs(deps)),
  webhooks: async (deps: Deps) => void (await registerWebhookJobs(deps)),
  benchmark: registerBenchmarkJobs,
  storage: async (deps: Deps) => void (await registerStorageJobs(deps)),
  budget: registerBudgetJobs,
} satisfies Record<string, (deps: Deps) => Promise<void>>;

export type WorkerArea = keyof typeof registrations;
const WORKER_AREAS = Object.keys(registrations) as WorkerArea[];

/** The areas `--queues a,b` names (comma-separated, or the option repeated); every area when absent. Throws on an unknown name. */
export function parseQueuesOption(argv: string[]): WorkerArea[] {
  const named: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    const value = arg === '--queues' ? argv[++index] : arg.startsWith('--queues=') ? arg.slice('--queues='.length) : undefined;
    if (arg === '--queues' && value === undefined) throw new Error('--queues needs a list of areas');
    if (value !== undefined)
      named.push(
        ...value
          .split(',')
          .map((name) => name.trim())
          .filter(Boolean),
      );
  }
  if (named.length === 0) return WORKER_AREAS;
  const unknown = named.filter((name) => !(WORKER_AREAS as string[]).includes(name));
  if (unknown.length) throw new Error(`unknown --queues area ${unknown.join(', ')}; known: ${WORKER_AREAS.join(', ')}`);
  return [...new Set(named)] as WorkerArea[];
}

export async function registerWorkers(deps: Deps, areas: WorkerArea[] = WORKER_AREAS): Promise<void> {
  for (const area of areas) await registrations[area](deps);
}
