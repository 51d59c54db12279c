import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll } from 'vitest';
import { z } from 'zod';
import { type BatchDeps, createBatchDeps } from '../../server/batch/batch-deps.ts';
import { AnyRow, sql } from '../../server/db/database.ts';
import { type BedrockFake, startBedrockFake } from '../fakes/bedrock.ts';
import { type BedrockBatchFake, startBedrockBatchFake } from '../fakes/bedrock-batch.ts';
import { createTestClock, startTestApp, type TestApp } from '../helpers/app.ts';
import { api, makePaid, uploadPdf } from '../service/harness.ts';

const BUCKET = 'folio-batch-test';
export const ROLE_ARN = 'arn:aws:iam::123456789012:role/folio-batch';

export type BatchWorld = {
  app: TestApp;
  clock: ReturnType<typeof createTestClock>;
  s3: S3Client;
  control: BedrockBatchFake;
  runtime: BedrockFake;
  batch: BatchDeps;
  token: string;
  email: string;
};

/**
 * The app with the batch lane on: a local S3 (s3rver) holding the batch
 * bucket, the Bedrock control-plane fake running batch jobs against it, the
 * Bedrock runtime fake for on-demand pages, and a clock the test moves.
 */
export async function startBatchWorld(env: Record<string, string> = {}): Promise<BatchWorld> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-batch-s3-'));
  const s3rver = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir });
  const address = (await s3rver.run()) as AddressInfo;
  const endpoint = `http://127.0.0.1:${address.port}`;
  const s3 = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
  const control = await startBedrockBatchFake({ s3 });
  const runtime = await startBedrockFake();
  const clock = createTestClock();
  const app = await startTestApp({
    clock,
    env: {
      BATCH_CONVERSION_ENABLED: 'true',
      BATCH_CONVERSION_S3_BUCKET: BUCKET,
      BATCH_CONVERSION_ROLE_ARN: ROLE_ARN,
      BATCH_CONVERSION_MIN_PAGES: '3',
      BATCH_CONVERSION_MIN_RECORDS: '2',
      CHUNK_PAGES: '2',
      CONVERSION_POOL_SIZE: '1',
      S3_ENDPOINT: endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      CLOUD_ACCESS_KEY_ID: 'S3RVER',
      CLOUD_SECRET_ACCESS_KEY: 'S3RVER',
      BEDROCK_CONTROL_ENDPOINT: control.url,
      BEDROCK_ENDPOINT: runtime.url,
      ...env,
    },
  });
  afterAll(async () => {
    await control.close();
    await runtime.close();
    await s3rver.close();
    await fs.rm(dir, { recursive: true, force: true });
  });
  const email = 'batch-owner@example.com';
  const token = await app.token(email);
  await api(app, token, 'GET', '/api/me');
  await makePaid(app, email, 10_000);
  return { app, clock, s3, control, runtime, batch: createBatchDeps(app.deps), token, email };
}

/** Uploads the 3-page corpus PDF and starts a high-fidelity conversion; the file and job ids. */
export async function startHiFi(world: BatchWorld, options: Record<string, unknown> = { highFidelity: true }) {
  const fileId = await uploadPdf(world.app, world.token);
  const response = await api(world.app, world.token, 'POST', `/api/convert/${fileId}`, options);
  const body = (await response.json()) as { jobId: string; status: string };
  if (response.status !== 200) throw new Error(`convert answered ${response.status}: ${JSON.stringify(body)}`);
  return { fileId, jobId: body.jobId, status: body.status };
}

export const BatchRowView = z.object({
  id: z.uuid(),
  jobId: z.uuid().nullable(),
  state: z.string(),
  outcome: z.string().nullable(),
  reason: z.string().nullable(),
  jobArn: z.string().nullable(),
  records: z.number().nullable(),
  accepted: z.number().nullable(),
  fallback: z.number().nullable(),
  costUsd: z.coerce.number().nullable(),
});

export function batchRowOf(world: BatchWorld, jobId: string) {
  return world.app.deps.db.maybeOne(sql.type(BatchRowView)`
    select id, job_id as "jobId", state, outcome, reason, job_arn as "jobArn", records, accepted, fallback, cost_usd as "costUsd"
      from conversion_batch_jobs where job_id = ${jobId}`);
}

export function jobOf(world: BatchWorld, jobId: string) {
  return world.app.deps.db.one(sql.type(
    z.object({
      status: z.string(),
      options: z.record(z.string(), z.unknown()),
      totalCostUsd: z.coerce.number(),
      chunks: z.array(z.string()),
      holdExpires: z.date().nullable(),
    }),
  )`
    select j.status, j.options, j.total_cost_usd as "totalCostUsd",
           array(select c.status from chunk_jobs c where c.job_id = j.id order by c.chunk_index) as chunks,
           (select h.expires_at from credit_holds h where h.id = j.hold_id) as "holdExpires"
      from large_conversion_jobs j where j.id = ${jobId}`);
}

export function ledgerOf(world: BatchWorld, jobId: string) {
  return world.app.deps.db.any(sql.type(z.object({ source: z.string(), costUsd: z.coerce.number(), metadata: z.record(z.string(), z.unknown()) }))`
    select source, cost_usd as "costUsd", metadata from cost_ledger where job_id = ${jobId} order by id`);
}

/** Parks no other job: earlier tests' parked jobs are cancelled so the driver claims the one under test. */
export async function clearParkedJobs(world: BatchWorld) {
  await world.app.deps.db.query(sql.type(AnyRow)`
    select cancel_conversion_job(id, true) from large_conversion_jobs where status = 'waiting_batch'`);
}

export async function listKeys(world: BatchWorld, prefix: string): Promise<string[]> {
  const listed = await world.s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (listed.Contents ?? []).map((item) => item.Key!).sort();
}

export async function readObject(world: BatchWorld, key: string): Promise<string> {
  const object = await world.s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return object.Body!.transformToString();
}
