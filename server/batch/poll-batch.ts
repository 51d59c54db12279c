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
/**
 * After stopping an overdue job the driver waits this long for the remote to
 * report Stopped, since Bedrock writes a stopped job's partial output as it
 * stops; after it, the row closes with whatever output is there.
 */
export const OVERDUE_STOP_WAIT_MS = 60 * 60 * 1000;
/**
 * The tokens one record is billed at when its output could never be read: the
 * upper end of a PDF page's input (Anthropic gives 1,500–3,000 tokens a page,
 * the prompt included) and a page of HTML out.
 */
const ESTIMATED_RECORD_TOKENS = { input: 3000, output: 1000 } as const;

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

function batchCostUsd(inputTokens: number, outputTokens: number) {
  const price = DEFAULT_PRICE_PER_1K_TOKENS;
  return ((inputTokens * price.input + outputTokens * price.output) / 1000) * BATCH_MULTIPLIER;
}

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
  collected.costUsd = batchCostUsd(collected.inputTokens, collected.outputTokens);
  return collected;
}

/**
 * What a job whose output could never be read is billed, since Bedrock bills
 * it all the same: the records the remote reports as answered
 * (GetModelInvocationJob's successRecordCount, else processed minus errored;
 * errored records are not billed), each at ESTIMATED_RECORD_TOKENS, at the
 * batch price. None is usable, so none is accepted.
 */
function estimateFromCounts(remote: Pick<RemoteJob, 'counts'>): Pick<Collected, 'accepted' | 'returned' | 'costUsd'> & { estimated: true } {
  const counts = remote.counts ?? {};
  const answered = counts.success ?? Math.max(0, (counts.processed ?? 0) - (counts.error ?? 0));
  const returned = Number.isFinite(answered) ? Math.max(0, Math.trunc(answered)) : 0;
  return {
    accepted: 0,
    returned,
    costUsd: returned * batchCostUsd(ESTIMATED_RECORD_TOKENS.input, ESTIMATED_RECORD_TOKENS.output),
    estimated: true,
  };
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
  collected: (Pick<Collected, 'accepted' | 'costUsd' | 'returned'> & { estimated?: true }) | undefined,
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
      ...(collected?.estimated ? { estimated: true } : {}),
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
 * the job and waits up to OVERDUE_STOP_WAIT_MS for Stopped, so the partial
 * output Bedrock writes as it stops is billed; then the row closes expired.
 * A row carrying a user's reason gets its remote job stopped. A collect that
 * fails is tried at the next poll, up to 5 times and never past the deadline;
 * one that never succeeds bills the remote's own count (estimateFromCounts).
 */
export async function pollBatch(deps: BatchDeps, row: BatchRow): Promise<'waiting' | 'closed' | 'lost'> {
  const { config, log, control } = deps;
  const now = deps.clock.now();
  const nextPoll = new Date(now.getTime() + config.batch.pollSeconds * 1000);
  const overdue = row.deadlineAt !== null && now > row.deadlineAt;
  const givenUp = row.deadlineAt !== null && now.getTime() > row.deadlineAt.getTime() + OVERDUE_STOP_WAIT_MS;
  const overdueEnd = { outcome: 'expired' as const, reason: 'overdue: no result within the timeout plus 2 hours', primed: false };
  const jobArn = row.jobArn ?? '';
  let remote: RemoteJob;
  try {
    remote = await control.getJob(jobArn);
  } catch (error) {
    log.warn({ err: error, batchRowId: row.id, jobArn }, 'polling the batch job failed');
    if (!givenUp) {
      await schedulePoll(deps.db, row.id, { nextPoll });
      return 'waiting';
    }
    remote = { jobArn, status: 'Expired', message: 'overdue, and the job could not be read' };
  }

  let end: { outcome: BatchOutcome; reason: string; primed: boolean; remoteStatus: string };
  if (FINAL_REMOTE_STATES.has(remote.status)) {
    // stopped because it was overdue (not by a user): it expired, whatever came back is billed below
    const stoppedOverdue = overdue && remote.status === 'Stopped' && !row.reason;
    end = { ...(stoppedOverdue ? overdueEnd : endOf(row, remote)), remoteStatus: remote.status };
  } else if (overdue) {
    if (remote.status !== 'Stopping') {
      await control.stopJob(jobArn).catch((error: unknown) => log.warn({ err: error, jobArn }, 'stopping an overdue batch job failed'));
    }
    if (!givenUp) {
      await schedulePoll(deps.db, row.id, { nextPoll, remoteStatus: remote.status });
      return 'waiting';
    }
    // the remote never reported its end: bill the output it has written so far
    end = { ...overdueEnd, remoteStatus: remote.status };
  } else {
    if (row.reason && remote.status !== 'Stopping') {
      await control.stopJob(jobArn).catch((error: unknown) => log.warn({ err: error, jobArn }, 'stopping the batch job failed; trying again at the next poll'));
    }
    await schedulePoll(deps.db, row.id, { nextPoll, remoteStatus: remote.status });
    return 'waiting';
  }

  const input = row.jobId ? await selectPrepareInput(deps.db, row.jobId) : null;
  let collected: Parameters<typeof closeSubmitted>[3];
  try {
    const outputs = await collectOutputs(deps, row, input?.chunks);
    if (end.primed && input && row.jobId) {
      for (const [chunkIndex, records] of outputs.byChunk) {
        await writeChunkResults(deps.store, chunkResultsKey(input.fileId, row.jobId, chunkIndex), {
          modelId: row.modelId ?? '',
          promptHash: row.promptHash ?? '',
          records,
        });
      }
    }
    collected = outputs;
  } catch (error) {
    const attempts = await schedulePoll(deps.db, row.id, { nextPoll, remoteStatus: remote.status, collectFailed: true });
    log.warn({ err: error, batchRowId: row.id, attempts }, 'collecting the batch results failed');
    if (attempts < MAX_COLLECT_ATTEMPTS && !overdue) return 'waiting';
    collected = estimateFromCounts(remote);
    end.outcome = 'failed';
    end.reason = `collect failed ${attempts} times: ${(error as Error).name}`;
    end.primed = false;
  }
  return (await closeSubmitted(deps, row, end, collected)) ? 'closed' : 'lost';
}
