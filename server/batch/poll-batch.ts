import readline from 'node:readline';
import { DEFAULT_PRICE_PER_1K_TOKENS, isAcceptableAnswer } from '../conversion/backends/vision/vision-backend.ts';
import { ensureConversionQueues } from '../conversion-jobs/conversion-jobs.jobs.ts';
import { ObjectNotFoundError } from '../storage/storage.ts';
import type { BatchDeps } from './batch-deps.ts';
import { type ChunkResults, chunkResultsKey, writeChunkResults } from './batch-results.ts';
import { type BatchOutcome, type BatchRow, batchPrefix, bookBatchCost, closeRow, schedulePoll, selectPrepareInput } from './batch.queries.ts';
import { FINAL_REMOTE_STATES, parseOutputLine, type RemoteJob, remoteJobId } from './bedrock-batch.ts';
import { resumeBatchConversion } from './resume-batch-job.ts';

/** Batch inference costs half the on-demand price. */
const BATCH_MULTIPLIER = 0.5;
/** A collect that fails this many polls in a row gives up (the job runs on-demand). */
const MAX_COLLECT_ATTEMPTS = 5;
/** Above this share of records falling back to on-demand, the driver warns: the lane is not paying off. */
const FALLBACK_WARN_SHARE = 0.2;

/** What came back for a batch job. */
type Collected = {
  byChunk: Map<number, ChunkResults['records']>;
  /** records answered acceptably (non-empty, not cut or filtered) */
  accepted: number;
  /** answers, accepted or not: every one was billed */
  returned: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
};

/**
 * Reads a batch job's output files (`<output>/<job id>/<shard>.out`) line by
 * line, so a 200 MB shard (its page PDFs echoed back) never sits in memory.
 * Only records of this job's chunk and page ranges count. A missing output
 * file means its records are missing; any other read error throws.
 */
async function collectOutputs(
  deps: Pick<BatchDeps, 'batchStore'>,
  row: Pick<BatchRow, 'id' | 'jobArn' | 'shards'>,
  chunks: Array<{ index: number; start: number; end: number }> | undefined,
): Promise<Collected> {
  // without the job (its file was deleted) every well-formed record still counts: it was billed
  const ranges = chunks ? new Map(chunks.map((chunk) => [chunk.index, chunk])) : undefined;
  const collected: Collected = { byChunk: new Map(), accepted: 0, returned: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
  const seen = new Set<string>();
  const folder = `${batchPrefix(row.id)}/output/${remoteJobId(row.jobArn ?? '')}`;
  for (let index = 0; index < (row.shards ?? 0); index++) {
    const key = `${folder}/shard-${String(index).padStart(4, '0')}.jsonl.out`;
    let stream: NodeJS.ReadableStream;
    try {
      stream = await deps.batchStore.get(key);
    } catch (error) {
      if (error instanceof ObjectNotFoundError) continue;
      throw error;
    }
    for await (const line of readline.createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })) {
      const output = parseOutputLine(line);
      if (!output || seen.has(output.recordId)) continue;
      const match = /^c(\d+)-p(\d+)$/.exec(output.recordId);
      if (!match) continue;
      const chunkIndex = Number(match[1]);
      const page = Number(match[2]);
      const chunk = ranges?.get(chunkIndex);
      if (ranges && (!chunk || page < chunk.start || page > chunk.end)) continue;
      seen.add(output.recordId);
      if (output.kind !== 'answer') continue;
      collected.returned++;
      collected.inputTokens += output.inputTokens;
      collected.outputTokens += output.outputTokens;
      if (isAcceptableAnswer(output)) collected.accepted++;
      const records = collected.byChunk.get(chunkIndex) ?? [];
      records.push({ page, text: output.text, stopReason: output.stopReason, inputTokens: output.inputTokens, outputTokens: output.outputTokens });
      collected.byChunk.set(chunkIndex, records);
    }
  }
  const price = DEFAULT_PRICE_PER_1K_TOKENS;
  collected.costUsd = ((collected.inputTokens * price.input + collected.outputTokens * price.output) / 1000) * BATCH_MULTIPLIER;
  return collected;
}

/** The sub-outcome and reason a remote end closes the row with. */
function endOf(row: BatchRow, remote: RemoteJob): { outcome: BatchOutcome; reason: string; primed: boolean } {
  const said = remote.message ? `: ${remote.message}` : '';
  switch (remote.status) {
    case 'Completed':
    case 'PartiallyCompleted':
      // a user who chose on-demand (or cancelled) already has the job running or gone: the results are only billed
      return row.reason
        ? { outcome: 'skipped', reason: row.reason, primed: false }
        : { outcome: 'collected', reason: `remote job ${remote.status}`, primed: true };
    case 'Expired':
      return { outcome: 'expired', reason: `remote job Expired${said}`, primed: false };
    case 'Stopped':
      return { outcome: row.reason ? 'skipped' : 'failed', reason: `remote job Stopped${said}`, primed: false };
    default:
      return { outcome: 'failed', reason: `remote job ${remote.status}${said}`, primed: false };
  }
}

/**
 * submitted → closed, exactly once: the guarded transition, the one batch
 * cost ledger row (tokens of every returned record at the on-demand price
 * times 0.5; `_batchCostUsd` and the job's total take the same amount), and
 * the job's resume — primed with the results only when collected — commit
 * together. False when another driver closed the row first.
 */
async function closeSubmitted(
  deps: BatchDeps,
  row: BatchRow,
  end: { outcome: BatchOutcome; reason: string; primed: boolean; remoteStatus: string },
  collected: Pick<Collected, 'accepted' | 'costUsd' | 'returned'> | undefined,
): Promise<boolean> {
  await ensureConversionQueues(deps.boss);
  const records = row.records ?? 0;
  const accepted = collected?.accepted ?? 0;
  const fallback = Math.max(0, records - accepted);
  const costUsd = Number((collected?.costUsd ?? 0).toFixed(6));
  const won = await deps.db.transaction(async (tx) => {
    const closed = await closeRow(tx, row.id, 'submitted', {
      outcome: end.outcome,
      reason: end.reason,
      now: deps.clock.now(),
      remoteStatus: end.remoteStatus,
      accepted,
      fallback,
      costUsd,
    });
    if (!closed) return false;
    await bookBatchCost(tx, row.jobId, costUsd, {
      backend: 'chunked-vision',
      batch: true,
      batchMultiplier: BATCH_MULTIPLIER,
      batchJobArn: row.jobArn,
      batchRowId: row.id,
      records,
      returned: collected?.returned ?? 0,
      accepted,
      fallback,
      ...(end.remoteStatus === 'Completed' && end.outcome === 'collected' ? {} : { endState: end.remoteStatus }),
    });
    if (row.jobId) await resumeBatchConversion(deps.boss, tx, row.jobId, end.primed);
    return true;
  });
  if (!won) return false;
  deps.log.info({ batchRowId: row.id, jobId: row.jobId, outcome: end.outcome, accepted, fallback, costUsd }, 'batch row closed');
  if (records > 0 && fallback / records > FALLBACK_WARN_SHARE) {
    deps.log.warn(
      { batchRowId: row.id, jobId: row.jobId, records, fallback, share: fallback / records },
      'over 20% of the batch records fall back to on-demand',
    );
  }
  return true;
}

/**
 * One poll of a submitted row. A remote end closes it (results collected
 * into one file per chunk on Completed/PartiallyCompleted; whatever came back
 * billed on any end). Past the deadline (timeout + 2 hours) the driver stops
 * the job and closes the row expired. A row carrying a user's reason gets its
 * remote job stopped. A collect that fails is tried at the next poll, up to 5
 * times and never past the deadline.
 */
export async function pollBatch(deps: BatchDeps, row: BatchRow): Promise<'waiting' | 'closed' | 'lost'> {
  const { config, log, control } = deps;
  const now = deps.clock.now();
  const nextPoll = new Date(now.getTime() + config.batch.pollSeconds * 1000);
  const overdue = row.deadlineAt !== null && now > row.deadlineAt;
  const jobArn = row.jobArn ?? '';
  let remote: RemoteJob;
  try {
    remote = await control.getJob(jobArn);
  } catch (error) {
    log.warn({ err: error, batchRowId: row.id, jobArn }, 'polling the batch job failed');
    if (!overdue) {
      await schedulePoll(deps.db, row.id, { nextPoll });
      return 'waiting';
    }
    remote = { jobArn, status: 'Expired', message: 'overdue, and the job could not be read' };
  }

  if (!FINAL_REMOTE_STATES.has(remote.status)) {
    if (overdue) {
      await control.stopJob(jobArn).catch((error: unknown) => log.warn({ err: error, jobArn }, 'stopping an overdue batch job failed'));
      const won = await closeSubmitted(
        deps,
        row,
        { outcome: 'expired', reason: 'overdue: no result within the timeout plus 2 hours', primed: false, remoteStatus: remote.status },
        undefined,
      );
      return won ? 'closed' : 'lost';
    }
    if (row.reason && remote.status !== 'Stopping') {
      await control.stopJob(jobArn).catch((error: unknown) => log.warn({ err: error, jobArn }, 'stopping the batch job failed; trying again at the next poll'));
    }
    await schedulePoll(deps.db, row.id, { nextPoll, remoteStatus: remote.status });
    return 'waiting';
  }

  const end = { ...endOf(row, remote), remoteStatus: remote.status };
  const input = row.jobId ? await selectPrepareInput(deps.db, row.jobId) : null;
  let collected: Collected | undefined;
  try {
    collected = await collectOutputs(deps, row, input?.chunks);
    if (end.primed && input && row.jobId) {
      for (const [chunkIndex, records] of collected.byChunk) {
        await writeChunkResults(deps.store, chunkResultsKey(input.fileId, row.jobId, chunkIndex), {
          modelId: row.modelId ?? '',
          promptHash: row.promptHash ?? '',
          records,
        });
      }
    }
  } catch (error) {
    const attempts = await schedulePoll(deps.db, row.id, { nextPoll, remoteStatus: remote.status, collectFailed: true });
    log.warn({ err: error, batchRowId: row.id, attempts }, 'collecting the batch results failed');
    if (attempts < MAX_COLLECT_ATTEMPTS && !overdue) return 'waiting';
    collected = undefined;
    end.outcome = 'failed';
    end.reason = `collect failed ${attempts} times: ${(error as Error).name}`;
    end.primed = false;
  }
  return (await closeSubmitted(deps, row, end, collected)) ? 'closed' : 'lost';
}
