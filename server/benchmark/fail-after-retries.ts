import { z } from 'zod';
import { sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { BenchmarkMessage } from './benchmark.jobs.ts';
import { PipelineValue } from './benchmark.queries.ts';
import { finishPipeline } from './finish-pipeline.ts';

/**
 * A pipeline that failed every attempt: shown failed in its session, with
 * the last attempt's error, and counted when it came through the dead-letter
 * queue (the "messages in the pipeline dead-letter queue" alarm). A pipeline
 * already terminal is left alone, so a dead letter delivered twice is harmless.
 */
export async function failAfterRetries(deps: Pick<Deps, 'db' | 'clock'>, message: BenchmarkMessage, options: { deadLettered: boolean }) {
  const current = await deps.db.maybeOne(sql.type(z.object({ value: PipelineValue }))`
    select value from benchmark_results where session_id = ${message.sessionId} and pipeline = ${message.pipeline}`);
  if (!current || current.value.status === 'complete' || current.value.status === 'failed') return { written: false, sessionCompleted: false };
  const value: PipelineValue = {
    ...current.value,
    status: 'failed',
    finishedAt: deps.clock.now().toISOString(),
    error: current.value.error ?? { code: 'PIPELINE_FAILED', message: 'The pipeline failed' },
    ...(options.deadLettered ? { deadLettered: true } : {}),
  };
  return finishPipeline(deps, { sessionId: message.sessionId, pipeline: message.pipeline, value });
}
