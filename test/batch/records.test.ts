import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { ensureBatchLifecycle } from '../../server/batch/batch-deps.ts';
import { parseOutputLine } from '../../server/batch/bedrock-batch.ts';
import { isBatchEligible } from '../../server/batch/eligibility.ts';
import { writeShards } from '../../server/batch/prepare-batch.ts';
import { loadConfig } from '../../server/config.ts';
import { createVisionBackend, hashPrompt, visionPrompt } from '../../server/conversion/backends/vision/vision-backend.ts';
import type { BatchRecord } from '../../server/conversion/engine.ts';
import type { PageResult } from '../../server/conversion/model.ts';
import { silentLog } from '../../server/log.ts';
import { createFsStore } from '../../server/storage/fs-store.ts';
import { readAll } from '../../server/storage/storage.ts';
import { startBedrockFake } from '../fakes/bedrock.ts';

const bedrockFake = await startBedrockFake();
afterAll(() => bedrockFake.close());
beforeEach(() => bedrockFake.reset());

const MODEL_ID = 'anthropic.claude-3-5-sonnet-20241022-v2:0';
const bedrock = loadConfig({
  BEDROCK_ENDPOINT: bedrockFake.url,
  BEDROCK_MODEL_ID: MODEL_ID,
  BEDROCK_MAX_TOKENS: '4096',
  BEDROCK_TEMPERATURE: '0',
  CLOUD_ACCESS_KEY_ID: 'AKIDFAKE',
  CLOUD_SECRET_ACCESS_KEY: 'fake-secret',
}).conversion.bedrock;
const HASH = hashPrompt(visionPrompt(bedrock, 'page'));
const TEXT_LAYER = 'Quarterly results Revenue grew in every region';
const GOOD_HTML = '<h1>Quarterly results</h1><p>Revenue grew in every region.</p>';

async function onePagePdf(): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  document.addPage([400, 600]).drawText(TEXT_LAYER, { x: 40, y: 540, size: 12, font });
  return document.save();
}

const fallback = async (): Promise<PageResult> => {
  throw new Error('the local engine is not expected here');
};

function record(overrides: Partial<BatchRecord> = {}): BatchRecord {
  return { model: MODEL_ID, promptHash: HASH, text: GOOD_HTML, stopReason: 'end_turn', inputTokens: 1000, outputTokens: 100, ...overrides };
}

describe('vision backend with a batch record', () => {
  it('uses a matching, acceptable record instead of the first call, and bills nothing for it', async () => {
    const vision = createVisionBackend({ bedrock, log: silentLog });
    const result = await vision.convertPage(await onePagePdf(), 1, { textLayerText: TEXT_LAYER, fallback, batchRecord: record() });
    expect(bedrockFake.requests).toHaveLength(0);
    expect(result).toMatchObject({ backend: 'chunked-vision', batchServed: true, costUsd: 0, promptHash: HASH, model: MODEL_ID });
    expect(result.blocks.map((block) => block.kind)).toEqual(['heading', 'paragraph']);
  });

  it.each([
    ['another model', { model: 'another.model-v1' }],
    ['another prompt hash', { promptHash: 'f'.repeat(64) }],
    ['empty text', { text: '  ' }],
    ['a guardrail stop', { stopReason: 'guardrail_intervened' }],
    ['a content filter stop', { stopReason: 'content_filtered' }],
    ['a max_tokens stop', { stopReason: 'max_tokens' }],
    ['no usable HTML', { text: '<script>x</script>' }],
  ])('runs the page on-demand for a record with %s', async (_name, overrides) => {
    bedrockFake.next({ kind: 'text', text: GOOD_HTML, inputTokens: 1000, outputTokens: 100 });
    const vision = createVisionBackend({ bedrock, log: silentLog });
    const result = await vision.convertPage(await onePagePdf(), 1, { textLayerText: TEXT_LAYER, fallback, batchRecord: record(overrides) });
    expect(bedrockFake.requests).toHaveLength(1);
    expect(result.batchServed).toBeUndefined();
    expect(result.costUsd).toBeCloseTo((1000 * 0.003 + 100 * 0.015) / 1000, 9);
  });

  it('keeps the coverage re-ask on-demand: a batch answer missing words earns one paid call', async () => {
    bedrockFake.next({ kind: 'text', text: GOOD_HTML, inputTokens: 1000, outputTokens: 100 });
    const vision = createVisionBackend({ bedrock, log: silentLog });
    const result = await vision.convertPage(await onePagePdf(), 1, { textLayerText: TEXT_LAYER, fallback, batchRecord: record({ text: '<p>Quarterly</p>' }) });
    expect(bedrockFake.requests).toHaveLength(1);
    expect(bedrockFake.requests[0]!.texts[0]).toMatch(/left out part of its text/);
    expect(result.batchServed).toBe(true);
    expect(result.costUsd).toBeCloseTo((1000 * 0.003 + 100 * 0.015) / 1000, 9);
  });
});

describe('batch output lines', () => {
  const line = (modelOutput: Record<string, unknown>) => JSON.stringify({ recordId: 'c0-p1', modelInput: {}, modelOutput });

  it('reads the answer, its usage and its stop reason in Converse terms', () => {
    expect(
      parseOutputLine(line({ content: [{ type: 'text', text: '<p>a</p>' }], stop_reason: 'end_turn', usage: { input_tokens: 10, output_tokens: 2 } })),
    ).toEqual({ recordId: 'c0-p1', kind: 'answer', text: '<p>a</p>', stopReason: 'end_turn', inputTokens: 10, outputTokens: 2 });
    expect(parseOutputLine(line({ content: [], stop_reason: 'refusal' }))).toMatchObject({ stopReason: 'content_filtered' });
    expect(
      parseOutputLine(line({ content: [{ type: 'text', text: 'x' }], stop_reason: 'end_turn', 'amazon-bedrock-guardrailAction': 'INTERVENED' })),
    ).toMatchObject({
      stopReason: 'guardrail_intervened',
    });
  });

  it('reads an error record, and skips lines that are not records', () => {
    expect(parseOutputLine(JSON.stringify({ recordId: 'c1-p3', modelInput: {}, error: { errorCode: 400, errorMessage: 'bad page' } }))).toEqual({
      recordId: 'c1-p3',
      kind: 'error',
      error: 'bad page',
    });
    expect(parseOutputLine('')).toBeUndefined();
    expect(parseOutputLine('{not json')).toBeUndefined();
    expect(parseOutputLine('{"modelOutput":{}}')).toBeUndefined();
  });
});

describe('batch eligibility', () => {
  const on = loadConfig({ BATCH_CONVERSION_ENABLED: 'true', BATCH_CONVERSION_S3_BUCKET: 'b', BATCH_CONVERSION_ROLE_ARN: 'arn:aws:iam::1:role/r' }).batch;

  it.each([
    ['hi-fi, 600 pages', { highFidelity: true }, 600, true],
    ['hi-fi, parser auto', { highFidelity: true, parser: 'auto' }, 600, true],
    ['hi-fi, 599 pages', { highFidelity: true }, 599, false],
    ['hi-fi bulk opt-in, 5 pages', { highFidelity: true, _batchLane: true }, 5, true],
    ['not hi-fi', { highFidelity: false }, 1000, false],
    ['hi-fi, parser backend (chunk routing)', { highFidelity: true, parser: 'parser' }, 1000, false],
    ['hi-fi, vision parser', { highFidelity: true, parser: 'vision' }, 1000, false],
  ])('%s → %s', (_name, options, totalPages, eligible) => {
    expect(isBatchEligible(on, { options, totalPages })).toBe(eligible);
  });

  it('is off with the switch off, or without the bucket or the role', () => {
    const job = { options: { highFidelity: true }, totalPages: 1000 };
    expect(isBatchEligible(loadConfig({}).batch, job)).toBe(false);
    expect(isBatchEligible(loadConfig({ BATCH_CONVERSION_ENABLED: 'true', BATCH_CONVERSION_S3_BUCKET: 'b' }).batch, job)).toBe(false);
    expect(isBatchEligible(loadConfig({ BATCH_CONVERSION_ENABLED: 'true', BATCH_CONVERSION_ROLE_ARN: 'arn:aws:iam::1:role/r' }).batch, job)).toBe(false);
    expect(on.timeoutHours).toBe(24);
    expect(loadConfig({ BATCH_CONVERSION_TIMEOUT_HOURS: '500' }).batch.timeoutHours).toBe(168);
  });
});

describe('shards', () => {
  it('splits records into shards no larger than the limit and refuses input past the total', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-shards-'));
    const store = createFsStore(dir);
    const lines = async function* () {
      for (let index = 0; index < 5; index++) yield Buffer.from(`${JSON.stringify({ recordId: `c0-p${index + 1}`, pad: 'x'.repeat(80) })}\n`);
    };
    const size = (await lines().next()).value!.length;
    const shards = await writeShards(store, 'b', lines(), { maxShardBytes: size * 2, maxTotalBytes: 10_000 });
    expect(shards.map((shard) => shard.records)).toEqual([2, 2, 1]);
    expect(shards.every((shard) => shard.bytes <= size * 2)).toBe(true);
    const second = (await readAll(await store.get(shards[1]!.key))).toString().trim().split('\n');
    expect(second.map((text) => (JSON.parse(text) as { recordId: string }).recordId)).toEqual(['c0-p3', 'c0-p4']);
    await expect(writeShards(store, 'c', lines(), { maxShardBytes: size * 2, maxTotalBytes: size * 3 })).rejects.toThrow(/batch input over/);
    await fs.rm(dir, { recursive: true, force: true });
  });
});

describe('batch bucket expiry', () => {
  it("sets a 14-day expiry rule on the lane's prefix, and survives a bucket that refuses it", async () => {
    const seen: Array<{ method: string; url: string; body: string }> = [];
    let status = 200;
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', body: Buffer.concat(chunks).toString() });
        res.writeHead(status, { 'content-type': 'application/xml' });
        res.end(status === 200 ? '' : '<Error><Code>NotImplemented</Code><Message>not here</Message></Error>');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const s3 = new S3Client({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      forcePathStyle: true,
      credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
      maxAttempts: 1,
    });
    expect(await ensureBatchLifecycle(s3, 'lane-bucket', silentLog)).toBe(true);
    expect(seen[0]!.method).toBe('PUT');
    expect(seen[0]!.url).toMatch(/^\/lane-bucket\/?\?lifecycle/);
    expect(seen[0]!.body).toMatch(/<Prefix>folio-batch\/<\/Prefix>/);
    expect(seen[0]!.body).toMatch(/<Expiration><Days>14<\/Days><\/Expiration>/);
    status = 501;
    expect(await ensureBatchLifecycle(s3, 'lane-bucket', silentLog)).toBe(false);
    await new Promise((resolve) => server.close(resolve));
  });
});
