import { z } from 'zod';
import type { Config } from '../config.ts';
import { bossDb, type BossConnection } from '../conversion-jobs/boss-db.ts';
import { derivedUuid } from '../email/email.jobs.ts';
import type { Boss } from '../queue/boss.ts';
import { oncePerBoss } from '../queue/boss.ts';

/** The queue every pipeline run goes through; `--queues benchmark` gives a worker process only this area. */
export const BENCHMARK_QUEUE = 'benchmark';
/** Pipelines that failed every attempt land here; its consumer shows them as failed in their session. */
export const BENCHMARK_DEAD_LETTER_QUEUE = 'benchmark.dead-letter';

export const BENCHMARK_BACKENDS = ['local', 'chunked-vision', 'parser'] as const;

/**
 * The specification's queue message (`file`, `backend`, `uxOptimizer`) with
 * the key its result is written under. Parsed, never trusted: the session
 * row decides which file and pipeline the run may touch.
 */
export const BenchmarkMessage = z.object({
  sessionId: z.uuid(),
  pipeline: z.number().int().min(0).max(5),
  file: z.uuid(),
  backend: z.enum(BENCHMARK_BACKENDS),
  uxOptimizer: z.boolean(),
});
export type BenchmarkMessage = z.infer<typeof BenchmarkMessage>;

/**
 * The queue's policy. `expireInSeconds` is the visibility timeout (15 minutes
 * by default): a job whose worker was killed stays active that long, then
 * pg-boss retries it. Retries wait 10 s so a transient engine or store fault
 * passes; after `retryLimit` retries the job is dead-lettered.
 */
function queuePolicy(config: Config) {
  return {
    retryLimit: config.benchmark.retryLimit,
    retryDelay: 10,
    expireInSeconds: config.benchmark.visibilityTimeoutSeconds,
    deadLetter: BENCHMARK_DEAD_LETTER_QUEUE,
  };
}

/**
 * Creates both queues once per pg-boss instance (the API sends before any
 * worker ran) and brings the visibility timeout and retry limit of an
 * existing queue to this process's configuration.
 */
export const ensureBenchmarkQueues = oncePerBoss(async (boss: Boss, config: Config) => {
  const { deadLetter, ...policy } = queuePolicy(config);
  // the dead-letter queue must exist before a queue can name it; dead letters are kept 14 days
  await boss.createQueue(BENCHMARK_DEAD_LETTER_QUEUE, { retentionSeconds: 14 * 24 * 60 * 60 });
  await boss.createQueue(BENCHMARK_QUEUE, { ...policy, deadLetter });
  await boss.updateQueue(BENCHMARK_QUEUE, policy);
});

/** Queues one pipeline inside the caller's transaction; the job id is derived from session and pipeline, so a repeat cannot queue it twice. */
export async function enqueuePipeline(boss: Boss, config: Config, connection: BossConnection, message: BenchmarkMessage): Promise<void> {
  await boss.send(BENCHMARK_QUEUE, BenchmarkMessage.parse(message), {
    ...queuePolicy(config),
    id: derivedUuid(`benchmark:${message.sessionId}:${message.pipeline}`),
    db: bossDb(connection),
  });
}
