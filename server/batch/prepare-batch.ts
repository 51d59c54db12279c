import { Readable } from 'node:stream';
import { cutPage } from '../conversion/backends/vision/cut-page.ts';
import { hashPrompt, visionPrompt } from '../conversion/backends/vision/prompt.ts';
import { ensureConversionQueues } from '../conversion-jobs/conversion-jobs.jobs.ts';
import { readAll, type ObjectStore } from '../storage/storage.ts';
import type { BatchDeps } from './batch-deps.ts';
import {
  type BatchOutcome,
  batchJobName,
  batchPrefix,
  closeRow,
  markSubmitted,
  type PrepareInput,
  recordPrepared,
  selectPrepareInput,
} from './batch.queries.ts';
import { recordLine } from './bedrock-batch.ts';
import { BATCH_GRACE_MS } from './eligibility.ts';
import { resumeBatchConversion } from './resume-batch-job.ts';

/** Bedrock's limit on one batch job's input is 5 GB; past about 4.5 GB of records we do not try. */
const MAX_INPUT_BYTES = 4.5 * 1024 ** 3;

class InputTooLargeError extends Error {
  override name = 'InputTooLargeError';
}

export type Shard = { key: string; records: number; bytes: number };

/** A record's id: chunk index and page, which is all collecting needs to put its answer back. */
function recordId(chunkIndex: number, page: number) {
  return `c${chunkIndex}-p${page}`;
}

/** Shard file names; the output of `<name>` comes back as `<name>.out`. */
function shardName(index: number) {
  return `shard-${String(index).padStart(4, '0')}.jsonl`;
}

/**
 * Streams record lines into JSONL shards of at most `maxShardBytes` each: one
 * shard is uploaded while the next lines are made, so memory holds a page and
 * one upload part, whatever the job's size. Throws InputTooLargeError once
 * the total passes `maxTotalBytes`.
 */
export async function writeShards(
  store: ObjectStore,
  prefix: string,
  lines: AsyncIterator<Buffer>,
  limits: { maxShardBytes: number; maxTotalBytes: number },
): Promise<Shard[]> {
  const shards: Shard[] = [];
  let total = 0;
  let next = await lines.next();
  while (!next.done) {
    const shard: Shard = { key: `${prefix}/input/${shardName(shards.length)}`, records: 0, bytes: 0 };
    async function* body() {
      while (!next.done) {
        const line = next.value;
        if (line.length > limits.maxShardBytes) throw new Error(`one record is ${line.length} bytes, over the shard size`);
        if (shard.bytes + line.length > limits.maxShardBytes) return;
        total += line.length;
        if (total > limits.maxTotalBytes) throw new InputTooLargeError(`batch input over ${limits.maxTotalBytes} bytes`);
        shard.bytes += line.length;
        shard.records++;
        yield line;
        next = await lines.next();
      }
    }
    await store.put(shard.key, Readable.from(body()), { contentType: 'application/jsonl' });
    shards.push(shard);
  }
  return shards;
}

/** Every page of every chunk, in order, as a record line with its page cut into its own PDF. */
async function* recordLines(pdf: Uint8Array, chunks: PrepareInput['chunks'], prompt: ReturnType<typeof visionPrompt>) {
  for (const chunk of chunks) {
    for (let page = chunk.start; page <= chunk.end; page++) yield recordLine(recordId(chunk.index, page), await cutPage(pdf, page), prompt);
  }
}

/** preparing → closed without a remote job (nothing to bill); the job resumes on-demand. */
export async function closeUnsubmitted(deps: BatchDeps, row: { id: string; jobId: string | null }, outcome: BatchOutcome, reason: string) {
  await ensureConversionQueues(deps.boss);
  const closed = await deps.db.transaction(async (tx) => {
    if (!(await closeRow(tx, row.id, 'preparing', { outcome, reason, now: deps.clock.now() }))) return false;
    if (row.jobId) await resumeBatchConversion(deps.boss, tx, row.jobId, false);
    return true;
  });
  if (closed) deps.log.info({ batchRowId: row.id, jobId: row.jobId, outcome, reason }, 'batch row closed before submission; the job runs on-demand');
  return closed;
}

/**
 * Prepares a claimed job and submits it: every page as a record
 * (`c<chunk>-p<page>`, the page's one-page PDF inside, the prompt the
 * on-demand path would send), in shards of at most BATCH_CONVERSION_MAX_FILE_MB,
 * a manifest beside them, then one batch job for the one model. Too few or too
 * many records, input over about 4.5 GB, or any error closes the row and
 * resumes the job on-demand.
 */
export async function prepareBatch(deps: BatchDeps, row: { id: string; jobId: string }): Promise<'submitted' | 'closed'> {
  const { config, log } = deps;
  const batch = config.batch;
  const input = await selectPrepareInput(deps.db, row.jobId);
  if (!input?.sourceKey) {
    await closeUnsubmitted(deps, row, 'failed', 'prepare error: the source file is gone');
    return 'closed';
  }
  const records = input.chunks.reduce((sum, chunk) => sum + chunk.end - chunk.start + 1, 0);
  if (records < batch.minRecords) {
    await closeUnsubmitted(deps, row, 'skipped', `too few records (${records} < ${batch.minRecords})`);
    return 'closed';
  }
  if (records > batch.maxRecords) {
    await closeUnsubmitted(deps, row, 'skipped', `too many records (${records} > ${batch.maxRecords})`);
    return 'closed';
  }

  const { bedrock } = config.conversion;
  const prompt = visionPrompt(bedrock, 'page');
  const promptHash = hashPrompt(prompt);
  const prefix = batchPrefix(row.id);
  let jobArn: string;
  try {
    const started = performance.now();
    const source = await readAll(await deps.store.get(input.sourceKey));
    const pdf = new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    const shards = await writeShards(deps.batchStore, prefix, recordLines(pdf, input.chunks, prompt), {
      maxShardBytes: batch.maxFileMb * 1024 * 1024,
      maxTotalBytes: deps.maxInputBytes ?? MAX_INPUT_BYTES,
    });
    const inputBytes = shards.reduce((sum, shard) => sum + shard.bytes, 0);
    const manifest = { batchRowId: row.id, jobId: row.jobId, modelId: bedrock.modelId, promptHash, records, shards };
    await deps.batchStore.put(`${prefix}/manifest.json`, Buffer.from(JSON.stringify(manifest)), { contentType: 'application/json' });
    // on the row before the create call, so a driver adopting this job later knows what it asked
    await recordPrepared(deps.db, row.id, { modelId: bedrock.modelId, promptHash, records, shards: shards.length, inputBytes });
    jobArn = await deps.control.createJob({
      jobName: batchJobName(row.id),
      modelId: bedrock.modelId,
      roleArn: batch.roleArn ?? '',
      inputS3Uri: `s3://${deps.bucket}/${prefix}/input/`,
      outputS3Uri: `s3://${deps.bucket}/${prefix}/output/`,
      timeoutHours: batch.timeoutHours,
      clientRequestToken: row.id,
    });
    const now = deps.clock.now();
    const submitted = await markSubmitted(deps.db, row.id, {
      jobArn,
      modelId: bedrock.modelId,
      promptHash,
      records,
      shards: shards.length,
      inputBytes,
      now,
      deadline: new Date(now.getTime() + batch.timeoutHours * 3_600_000 + BATCH_GRACE_MS),
      nextPoll: new Date(now.getTime() + batch.pollSeconds * 1000),
    });
    if (!submitted) {
      // The stuck-row sweep closed the row while this driver was slow: nobody will poll the job, so stop it.
      await deps.control.stopJob(jobArn).catch((error: unknown) => log.warn({ err: error, jobArn }, 'stopping an orphaned batch job failed'));
      return 'closed';
    }
    log.info(
      { batchRowId: row.id, jobId: row.jobId, jobArn, records, shards: shards.length, inputBytes, ms: Math.round(performance.now() - started) },
      'batch job submitted',
    );
    return 'submitted';
  } catch (error) {
    if (error instanceof InputTooLargeError) {
      await closeUnsubmitted(deps, row, 'skipped', 'input over about 4.5 GB');
    } else {
      log.warn({ err: error, batchRowId: row.id, jobId: row.jobId }, 'preparing the batch job failed');
      await closeUnsubmitted(deps, row, 'failed', `prepare error: ${(error as Error).name}: ${(error as Error).message}`.slice(0, 500));
    }
    await deps.batchStore.deletePrefix(`${prefix}/`).catch(() => undefined);
    return 'closed';
  }
}
