import { BENCHMARK_DEAD_LETTER_QUEUE, BENCHMARK_QUEUE, BenchmarkMessage, ensureBenchmarkQueues } from '../../server/benchmark/benchmark.jobs.ts';
import { failAfterRetries } from '../../server/benchmark/fail-after-retries.ts';
import { runPipeline } from '../../server/benchmark/run-pipeline.ts';
import type { Deps } from '../../server/deps.ts';
import { wakeWorkers } from '../../server/queue/boss.ts';

/**
 * The spot workers' queue: one pipeline run per job, BENCHMARK_CONCURRENCY at
 * a time per process (one by default: an instance converts one document with
 * all its cores). On SIGTERM (the spot interruption warning) jobs/main.ts
 * stops pg-boss: it fetches nothing more at once, waits up to
 * SHUTDOWN_GRACE_MS (under the 2-minute warning) for the running pipeline,
 * then fails it back to the queue and aborts `job.signal`, which stops the
 * run between pages and puts the pipeline back to queued.
 */
export async function registerBenchmarkJobs(deps: Deps): Promise<void> {
  await ensureBenchmarkQueues(deps.boss, deps.config);
  const work = { batchSize: 1, localConcurrency: deps.config.benchmark.concurrency, pollingIntervalSeconds: 0.5 } as const;
  // Payloads are parsed, never trusted: one that does not parse fails its job rather than pass as done.
  await deps.boss.work(BENCHMARK_QUEUE, work, async ([job]) => {
    if (!job) return;
    await runPipeline(deps, BenchmarkMessage.parse(job.data), { signal: job.signal });
    // fetch the next pipeline now rather than after the poll interval: a queued session should not wait on an idle worker
    wakeWorkers(deps.boss, [BENCHMARK_QUEUE]);
  });
  await deps.boss.work(BENCHMARK_DEAD_LETTER_QUEUE, { batchSize: 1, pollingIntervalSeconds: 2 }, async ([job]) => {
    if (!job) return;
    const message = BenchmarkMessage.safeParse(job.data);
    deps.metrics.benchmarkDeadLetters.inc();
    if (!message.success) {
      deps.log.error({ event: 'benchmark_dead_letter', jobId: job.id }, 'unreadable benchmark job reached the dead-letter queue');
      return;
    }
    deps.log.error({ event: 'benchmark_dead_letter', sessionId: message.data.sessionId, pipeline: message.data.pipeline }, 'benchmark pipeline dead-lettered');
    await failAfterRetries(deps, message.data, { deadLettered: true });
  });
}
