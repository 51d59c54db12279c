import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { chunkResultsKey, writeChunkResults } from '../../server/batch/batch-results.ts';
import { runBatchTick } from '../../server/batch/run-batch-tick.ts';
import { PAGE_TEXT } from '../../server/conversion/backends/vision/vision-backend.ts';
import { runChunk } from '../../server/conversion-jobs/run-chunk.ts';
import { sql } from '../../server/db/database.ts';
import type { RecordAnswer } from '../fakes/bedrock-batch.ts';
import { type BatchWorld, batchRowOf, clearParkedJobs, jobOf, ledgerOf, startBatchWorld, startHiFi } from './harness.ts';

let world: BatchWorld;
/** The chunk runs and s3rver round trips take seconds on an idle machine and far longer on a loaded shared one. */
const UNDER_LOAD_MS = 180_000;

beforeAll(async () => {
  world = await startBatchWorld();
}, UNDER_LOAD_MS);

/** Submits a parked job, lets the fake answer each record, collects it: the job is resumed and primed. */
async function collectedJob(answer: (recordId: string) => RecordAnswer) {
  await clearParkedJobs(world);
  const started = await startHiFi(world);
  expect((await runBatchTick(world.batch)).prepared).toBe('submitted');
  const row = (await batchRowOf(world, started.jobId))!;
  await world.control.complete(row.jobArn!, answer, 'PartiallyCompleted');
  world.clock.advance(300_000);
  await runBatchTick(world.batch);
  expect(await jobOf(world, started.jobId)).toMatchObject({ status: 'pending', options: { _batchPrimed: true } });
  return started;
}

/** Runs the job's chunks in order, as the chunk workers would. */
async function runChunks(jobId: string) {
  const chunks = await world.app.deps.db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    select id from chunk_jobs where job_id = ${jobId} order by chunk_index`);
  for (const chunkId of chunks) expect(await runChunk(world.app.deps, { chunkId, jobId, finalAttempt: true })).toBe('completed');
}

/** Pages the on-demand path asked the model about with the page prompt (coverage re-asks use another text). */
function onDemandPages(): number[] {
  return world.runtime.requests
    .filter((request) => request.texts.includes(PAGE_TEXT))
    .map((request) => Number(request.documents[0]!.name.replace('page-', '')))
    .sort();
}

const PAGE_HTML = '<h1>Batch heading</h1><p>A paragraph written by the batch model for this page.</p>';

describe('batch result reuse', { timeout: UNDER_LOAD_MS }, () => {
  it('uses only acceptable records; guardrail and errored records run on-demand; costs add up to the cent', async () => {
    const { jobId } = await collectedJob((id) =>
      id === 'c0-p1'
        ? { kind: 'text', text: PAGE_HTML, inputTokens: 1200, outputTokens: 300 }
        : id === 'c0-p2'
          ? { kind: 'text', text: 'Sorry.', guardrail: true, inputTokens: 1200, outputTokens: 5 }
          : { kind: 'error', code: 400, message: 'Malformed input request' },
    );
    expect(await batchRowOf(world, jobId)).toMatchObject({ accepted: 1, fallback: 2 });
    world.runtime.reset();
    await runChunks(jobId);
    expect(onDemandPages()).toEqual([2, 3]);

    const ledger = await ledgerOf(world, jobId);
    const chunkRows = ledger.filter((entry) => entry.source === 'chunk-scheduler');
    expect(chunkRows[0]!.metadata).toMatchObject({ chunkIndex: 0, pages: 1, batchServedPages: 1 });
    expect(chunkRows[1]!.metadata).toMatchObject({ chunkIndex: 1, pages: 1 });
    expect(chunkRows[1]!.metadata).not.toHaveProperty('batchServedPages');
    const job = await jobOf(world, jobId);
    const batchCost = Number(job.options._batchCostUsd);
    expect(batchCost).toBeGreaterThan(0);
    const chunkCost = chunkRows.reduce((sum, entry) => sum + entry.costUsd, 0);
    // total_cost_usd = chunk costs (batch-served pages excluded) + options._batchCostUsd, to the cent
    expect(Math.round(job.totalCostUsd * 100)).toBe(Math.round((chunkCost + batchCost) * 100));
    expect(job.totalCostUsd).toBeCloseTo(chunkCost + batchCost, 6);
    // page 1's tokens are in the batch row only: the batch-lane row equals the records' tokens at half price
    const batchRow = ledger.find((entry) => entry.source === 'batch-lane')!;
    expect(batchRow.costUsd).toBeCloseTo(batchCost, 6);

    const pages = JSON.parse(
      (await (await world.app.deps.store.get((await resultKeyOf(jobId, 0))!)).toArray()).map((part: Buffer) => part.toString()).join(''),
    ) as { pages: Array<{ page: number; batchServed?: boolean; costUsd: number }> };
    expect(pages.pages.map((page) => [page.page, page.batchServed === true])).toEqual([
      [1, true],
      [2, false],
    ]);
  });

  it('a record asked with another prompt (hash mismatch) runs on-demand', async () => {
    const { jobId, fileId } = await collectedJob(() => ({ kind: 'text', text: PAGE_HTML }));
    const key = chunkResultsKey(fileId, jobId, 0);
    const stored = JSON.parse((await (await world.app.deps.store.get(key)).toArray()).map((part: Buffer) => part.toString()).join(''));
    await writeChunkResults(world.app.deps.store, key, { ...stored, promptHash: 'a-prompt-this-build-does-not-send' });
    world.runtime.reset();
    await runChunks(jobId);
    expect(onDemandPages()).toEqual([1, 2]);
  });

  it('a record of another model runs on-demand', async () => {
    const { jobId, fileId } = await collectedJob(() => ({ kind: 'text', text: PAGE_HTML }));
    const key = chunkResultsKey(fileId, jobId, 1);
    const stored = JSON.parse((await (await world.app.deps.store.get(key)).toArray()).map((part: Buffer) => part.toString()).join(''));
    await writeChunkResults(world.app.deps.store, key, { ...stored, modelId: 'another.model-v1' });
    world.runtime.reset();
    await runChunks(jobId);
    expect(onDemandPages()).toEqual([3]);
  });
});

function resultKeyOf(jobId: string, chunkIndex: number) {
  return world.app.deps.db.maybeOneFirst(sql.type(z.object({ key: z.string().nullable() }))`
    select result_key as key from chunk_jobs where job_id = ${jobId} and chunk_index = ${chunkIndex}`);
}
