import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { registerStorageJobs } from '../../jobs/storage/storage.worker.ts';
import { sql } from '../../server/db/database.ts';
import { decryptConnectionSecret } from '../../server/storage/connection-secrets.ts';
import { importObject } from '../../server/storage/import-objects.ts';
import { listWatchedPrefix, runWatchTick, sendPauseNotice } from '../../server/storage/watch-prefixes.ts';
import { writeImportOutput } from '../../server/storage/write-import-output.ts';
import { startResendFake, type ResendFake } from '../fakes/resend.ts';
import { startStsFake, type StsFake } from '../fakes/sts.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { until } from '../helpers/wait.ts';
import { api, makePaid } from '../service/harness.ts';
import { makePdf } from './pdfs.ts';

const BUCKET = 'customer-bucket';
const KEYS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const RESEND_KEY = 're_storage';

let app: TestApp;
let s3: S3rver;
let s3Dir: string;
let endpoint: string;
let admin: S3Client;
let sts: StsFake;
let resend: ResendFake;

async function put(key: string, body: Buffer | string) {
  await admin.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
}

async function read(key: string): Promise<string> {
  const answer = await admin.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return answer.Body!.transformToString();
}

async function keysUnder(prefix: string): Promise<string[]> {
  const answer = await admin.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
  return (answer.Contents ?? []).map((item) => item.Key!).sort();
}

async function call<T = Record<string, unknown>>(token: string, method: string, route: string, body?: unknown) {
  const response = await api(app, token, method, route, body);
  return { status: response.status, body: (await response.json()) as T };
}

type Connection = { id: string; outputPrefix: string; watchState: string; externalId: string | null };

async function connect(token: string, fields: Record<string, unknown>): Promise<Connection> {
  const created = await call<Connection>(token, 'POST', '/api/storage/connections', { bucket: BUCKET, region: 'us-east-1', endpoint, ...KEYS, ...fields });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body;
}

const ImportState = z.object({ id: z.uuid(), objectKey: z.string(), status: z.string(), fileId: z.uuid().nullable(), errorCode: z.string().nullable() });
function imports(connectionId: string) {
  return app.deps.db.any(sql.type(ImportState)`
    select id, object_key as "objectKey", status, file_id as "fileId", error_code as "errorCode" from storage_imports where connection_id = ${connectionId} order by object_key`);
}

function jobsOf(connectionId: string) {
  return app.deps.db.any(sql.type(z.object({ status: z.string(), options: z.record(z.string(), z.unknown()) }))`
    select j.status, j.options from large_conversion_jobs j join storage_imports i on i.file_id = j.file_id where i.connection_id = ${connectionId}`);
}

/** Waits for every import of the connection to reach one of `statuses` (bounded). */
function settled(connectionId: string, count: number, statuses: string[], timeoutMs = 120_000) {
  return until(
    () => imports(connectionId),
    (rows) => rows.length === count && rows.every((row) => statuses.includes(row.status)),
    timeoutMs,
    `${count} imports in ${statuses.join('/')}`,
  );
}

/** Drives the tick (as the schedule would) until the imports' results are written back. */
async function writtenBack(connectionId: string, count: number) {
  return until(
    async () => {
      await runWatchTick(app.deps);
      return imports(connectionId);
    },
    (rows) => rows.length === count && rows.every((row) => row.status === 'completed' || row.status === 'failed'),
    180_000,
    'outputs written back',
  );
}

beforeAll(async () => {
  s3Dir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-customer-s3-'));
  s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Dir });
  const address = (await s3.run()) as AddressInfo;
  endpoint = `http://127.0.0.1:${address.port}`;
  admin = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: KEYS });
  await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
  sts = await startStsFake();
  resend = await startResendFake({ apiKey: RESEND_KEY });
  app = await startTestApp({
    workers: true,
    env: {
      STORAGE_TEST_ALLOW_LOOPBACK: 'true',
      STORAGE_STS_ENDPOINT: sts.url,
      CLOUD_ACCESS_KEY_ID: 'folio-service',
      CLOUD_SECRET_ACCESS_KEY: 'folio-service-secret',
      PROVIDER_A_API_KEY: RESEND_KEY,
      PROVIDER_A_BASE_URL: resend.url,
      EMAIL_SENDER_DOMAIN: 'folio.test',
      CONVERSION_POOL_SIZE: '1',
      CHUNK_CONCURRENCY: '2',
      CHUNK_HEARTBEAT_INTERVAL_MS: '200',
    },
  });
  await registerConversionJobs(app.deps, { schedule: false });
  const storageWorkers = await registerStorageJobs(app.deps, { schedule: false });
  return async () => {
    storageWorkers.close();
    admin.destroy();
    await sts.close();
    await resend.close();
    await s3.close();
    await fs.rm(s3Dir, { recursive: true, force: true });
  };
}, 60_000);

describe('S3 connections', () => {
  it('stores access keys encrypted, bound to the connection, and never shows the secret', async () => {
    const token = await app.token('keys@example.com');
    const connection = await connect(token, { prefix: 'inbox/', secretAccessKey: 'TOP-SECRET-KEY-1234' });
    expect(JSON.stringify(connection)).not.toContain('TOP-SECRET');
    expect(connection).toMatchObject({ auth: 'keys', accessKeyId: 'S3RVER', outputPrefix: 'inbox/folio-output/', watchState: 'active' });
    const stored = await app.deps.db.oneFirst(sql.type(z.object({ enc: z.string() }))`
      select secret_access_key_enc as enc from storage_connections where id = ${connection.id}`);
    expect(stored).not.toContain('TOP-SECRET');
    expect(decryptConnectionSecret(app.deps.importer.secretKey, connection.id, stored)).toBe('TOP-SECRET-KEY-1234');
    // Copied onto another connection, the ciphertext does not open.
    expect(() => decryptConnectionSecret(app.deps.importer.secretKey, '00000000-0000-4000-8000-000000000000', stored)).toThrow();
    const listed = await call<{ connections: unknown[] }>(token, 'GET', '/api/storage/connections');
    expect(JSON.stringify(listed.body)).not.toContain('TOP-SECRET');
    const other = await app.token('someone-else@example.com');
    expect((await call(other, 'POST', `/api/storage/connections/${connection.id}/test`)).status).toBe(404);
  });

  it('tests a connection: one page of keys, or the exact AWS error', async () => {
    await put('probe/a.pdf', await makePdf('probe'));
    const token = await app.token('probe@example.com');
    const good = await connect(token, { prefix: 'probe/' });
    expect((await call(token, 'POST', `/api/storage/connections/${good.id}/test`)).body).toEqual({ ok: true, keys: ['probe/a.pdf'], error: null });

    const wrongKey = await connect(token, { prefix: 'probe/', accessKeyId: 'AKIANOTAKEY', secretAccessKey: 'whatever' });
    const refused = await call<{ ok: boolean; error: { code: string; httpStatus: number; message: string } }>(
      token,
      'POST',
      `/api/storage/connections/${wrongKey.id}/test`,
    );
    expect(refused.body.ok).toBe(false);
    expect(refused.body.error).toMatchObject({ code: 'InvalidAccessKeyId', httpStatus: 403 });
    expect(refused.body.error.message).toBe('InvalidAccessKeyId (HTTP 403): The AWS Access Key Id you provided does not exist in our records.');

    const noBucket = await call(token, 'POST', '/api/storage/connections', { bucket: 'no-such-bucket', region: 'us-east-1', endpoint, ...KEYS });
    const missing = await call<{ ok: boolean; error: { code: string } }>(
      token,
      'POST',
      `/api/storage/connections/${(noBucket.body as { id: string }).id}/test`,
    );
    expect(missing.body).toMatchObject({ ok: false, error: { code: 'NoSuchBucket', httpStatus: 404 } });
  });

  it.each([
    ['https://10.0.0.8', /not a public address/],
    ['https://169.254.169.254', /not a public address/],
    ['http://s3.example.com', /https/],
    ['https://s3.example.com/path', /origin/],
  ])('refuses the endpoint %s with 422', async (bad, reason) => {
    const token = await app.token('endpoint@example.com');
    const response = await call(token, 'POST', '/api/storage/connections', { bucket: BUCKET, region: 'us-east-1', endpoint: bad, ...KEYS });
    expect(response.status).toBe(422);
    expect(response.body).toMatchObject({ code: 'IMPORT_URL_REJECTED' });
    expect(String(response.body.message)).toMatch(reason);
  });

  it('assumes an IAM role with the owner’s external id', async () => {
    const token = await app.token('role@example.com');
    const roleArn = 'arn:aws:iam::123456789012:role/folio-reader';
    const connection = await call<Connection>(token, 'POST', '/api/storage/connections', {
      bucket: BUCKET,
      region: 'us-east-1',
      endpoint,
      prefix: 'probe/',
      roleArn,
    });
    expect(connection.status).toBe(200);
    expect(connection.body.externalId).toMatch(/^folio-[0-9a-f-]{36}$/);
    sts.roles.set(roleArn, { externalId: connection.body.externalId!, credentials: KEYS });
    const tested = await call(token, 'POST', `/api/storage/connections/${connection.body.id}/test`);
    expect(tested.body).toEqual({ ok: true, keys: ['probe/a.pdf'], error: null });
    expect(sts.requests.at(-1)).toMatchObject({
      Action: 'AssumeRole',
      RoleArn: roleArn,
      ExternalId: connection.body.externalId,
      RoleSessionName: `folio-${connection.body.id}`,
      DurationSeconds: '900',
    });

    // The session is kept until shortly before it lapses: a second call assumes nothing.
    const assumed = sts.requests.length;
    expect((await call(token, 'POST', `/api/storage/connections/${connection.body.id}/test`)).body).toMatchObject({ ok: true });
    expect(sts.requests.length).toBe(assumed);

    sts.roles.set(roleArn, { externalId: 'someone-elses-id', credentials: KEYS });
    const other = await call<Connection>(token, 'POST', '/api/storage/connections', {
      bucket: BUCKET,
      region: 'us-east-1',
      endpoint,
      prefix: 'probe/',
      roleArn,
    });
    const denied = await call<{ ok: boolean; error: { code: string; message: string } }>(token, 'POST', `/api/storage/connections/${other.body.id}/test`);
    expect(denied.body).toMatchObject({ ok: false, error: { code: 'AccessDenied', httpStatus: 403 } });
    expect(denied.body.error.message).toContain('is not authorized to perform: sts:AssumeRole');
  });

  it('imports one key, converts it with the default options, and writes HTML, tagged PDF and report back', async () => {
    await put('single/one.pdf', await makePdf('Single import'));
    const token = await app.token('single@example.com');
    const connection = await connect(token, { prefix: 'single/', defaultOptions: { parser: 'local' } });
    await makePaid(app, 'single@example.com', 20);
    const result = await call(token, 'POST', `/api/storage/connections/${connection.id}/import`, { key: 'single/one.pdf' });
    expect(result.body).toEqual({ found: 1, queued: 1, duplicates: 0, skipped: 0, nextStartAfter: null });
    const [done] = await writtenBack(connection.id, 1);
    expect(done).toMatchObject({ status: 'completed', errorCode: null });
    expect(await jobsOf(connection.id)).toEqual([{ status: 'completed', options: { parser: 'local' } }]);
    expect(await keysUnder('single/folio-output/')).toEqual([
      'single/folio-output/one.accessible.pdf',
      'single/folio-output/one.html',
      'single/folio-output/one.report.html',
      'single/folio-output/one.report.json',
    ]);
    expect(await read('single/folio-output/one.html')).toContain('Single import');
    expect((await read('single/folio-output/one.accessible.pdf')).startsWith('%PDF-')).toBe(true);
    // The file is the owner's like an upload: listed, downloadable.
    const files = await call<{ files: Array<{ id: string; status: string }> }>(token, 'GET', '/api/files');
    expect(files.body.files).toEqual([expect.objectContaining({ id: done!.fileId, status: 'completed' })]);

    // Again: the same object (same ETag) is not imported twice; a handler run again changes nothing.
    expect((await call(token, 'POST', `/api/storage/connections/${connection.id}/import`, { key: 'single/one.pdf' })).body).toMatchObject({
      queued: 0,
      duplicates: 1,
    });
    const listed = await call<{ imports: Array<Record<string, unknown>> }>(token, 'GET', `/api/storage/connections/${connection.id}/imports`);
    expect(listed.body.imports).toEqual([
      expect.objectContaining({ objectKey: 'single/one.pdf', source: 'import', status: 'completed', fileId: done!.fileId, errorCode: null }),
    ]);
    expect(await importObject(app.deps, done!.id)).toBe('skipped');
    expect(await writeImportOutput(app.deps, done!.id)).toBe('skipped');
    expect(await jobsOf(connection.id)).toHaveLength(1);
    // A missing key is a 404.
    expect((await call(token, 'POST', `/api/storage/connections/${connection.id}/import`, { key: 'single/none.pdf' })).status).toBe(404);
  }, 240_000);

  it('imports the version it listed: an object changed since is refused, its new ETag is a new import', async () => {
    await put('changed/doc.pdf', await makePdf('Version two'));
    const token = await app.token('changed@example.com');
    const connection = await connect(token, { prefix: 'changed/' });
    const importId = await app.deps.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into storage_imports (connection_id, object_key, etag, size_bytes, source)
      values (${connection.id}, 'changed/doc.pdf', 'etag-of-version-one', 1000, 'import') returning id`);
    expect(await importObject(app.deps, importId)).toBe('failed');
    const [row] = await imports(connection.id);
    expect(row).toMatchObject({ status: 'failed', errorCode: 'IMPORT_ORIGIN_ERROR' });
    const files = await call<{ files: Array<{ status: string; errorMessage: string }> }>(token, 'GET', '/api/files');
    expect(files.body.files[0]).toMatchObject({ status: 'failed' });
    expect(files.body.files[0]!.errorMessage).toContain('changed after it was listed');
    expect(await app.deps.store.exists(`files/${row!.fileId}/source`)).toBe(false);
    expect((await call(token, 'POST', `/api/storage/connections/${connection.id}/import`, { key: 'changed/doc.pdf' })).body).toMatchObject({ queued: 1 });
  });

  it('imports a prefix of 30 PDFs, 3 of them already imported: 27 conversions', async () => {
    const token = await app.token('many@example.com');
    const connection = await connect(token, { prefix: 'many/' });
    await makePaid(app, 'many@example.com', 100);
    for (let index = 0; index < 30; index++) await put(`many/doc-${String(index).padStart(2, '0')}.pdf`, await makePdf(`Document ${index}`));
    await put('many/notes.txt', 'not a pdf');
    for (const key of ['many/doc-03.pdf', 'many/doc-14.pdf', 'many/doc-29.pdf']) {
      expect((await call(token, 'POST', `/api/storage/connections/${connection.id}/import`, { key })).body).toMatchObject({ queued: 1 });
    }
    const result = await call(token, 'POST', `/api/storage/connections/${connection.id}/import`);
    expect(result.body).toEqual({ found: 30, queued: 27, duplicates: 3, skipped: 1, nextStartAfter: null });
    const rows = await settled(connection.id, 30, ['converting', 'writing_output', 'completed'], 180_000);
    expect(new Set(rows.map((row) => row.fileId)).size).toBe(30);
    expect(await jobsOf(connection.id)).toHaveLength(30);
    // Listing again imports nothing.
    expect((await call(token, 'POST', `/api/storage/connections/${connection.id}/import`, { prefix: 'many/' })).body).toMatchObject({
      found: 30,
      queued: 0,
      duplicates: 30,
    });
  }, 240_000);

  it('a watch picks up a new object once and writes its results back, never importing its own outputs', async () => {
    const token = await app.token('watch@example.com');
    const connection = await connect(token, { prefix: 'watch/', watched: true, watchIntervalMinutes: 5 });
    await makePaid(app, 'watch@example.com', 20);
    expect(await listWatchedPrefix(app.deps, connection.id)).toEqual({ queued: 0 });
    await put('watch/new.pdf', await makePdf('Watched arrival'));
    expect(await listWatchedPrefix(app.deps, connection.id)).toEqual({ queued: 1 });
    expect(await listWatchedPrefix(app.deps, connection.id)).toEqual({ queued: 0 });
    // No tick driven here: the worker hears the conversion end and writes back at once.
    const [done] = await settled(connection.id, 1, ['completed'], 180_000);
    expect(done).toMatchObject({ objectKey: 'watch/new.pdf', status: 'completed' });
    expect(await keysUnder('watch/folio-output/')).toHaveLength(4);
    expect(await listWatchedPrefix(app.deps, connection.id)).toEqual({ queued: 0 });
    expect(await imports(connection.id)).toHaveLength(1);
  }, 240_000);

  it('the schedule lists a watch when its interval is due, and not before', async () => {
    const token = await app.token('tick@example.com');
    const connection = await connect(token, { prefix: 'tick/', watched: true, watchIntervalMinutes: 5 });
    await runWatchTick(app.deps);
    const first = await app.deps.db.oneFirst(sql.type(z.object({ at: z.date().nullable() }))`
      select last_listed_at as at from storage_connections where id = ${connection.id}`);
    expect(first).not.toBeNull();
    await runWatchTick(app.deps);
    const second = await app.deps.db.oneFirst(sql.type(z.object({ at: z.date().nullable() }))`
      select last_listed_at as at from storage_connections where id = ${connection.id}`);
    expect(second!.getTime()).toBe(first!.getTime());
  });

  it('stops when credits run out, emails the owner once, and resumes when topped up', async () => {
    const email = 'broke@example.com';
    const token = await app.token(email);
    const connection = await connect(token, { prefix: 'paid/', watched: true });
    await makePaid(app, email, 1);
    await put('paid/a.pdf', await makePdf('First'));
    await put('paid/b.pdf', await makePdf('Second'));
    expect(await listWatchedPrefix(app.deps, connection.id)).toEqual({ queued: 2 });
    const rows = await settled(connection.id, 2, ['converting', 'writing_output', 'completed', 'waiting_credits']);
    expect(rows.map((row) => row.status).sort()).toEqual(['converting', 'waiting_credits'].sort());
    const paused = await call<{ connections: Connection[] }>(token, 'GET', '/api/storage/connections');
    expect(paused.body.connections[0]).toMatchObject({ watchState: 'paused_credits' });
    const notices = () => resend.delivered.filter((message) => message.body.to === email || (message.body.to as string[])?.includes?.(email));
    await until(
      async () => notices().length,
      (count) => count === 1,
      30_000,
      'the pause email',
    );
    expect(String(notices()[0]!.body.subject)).toMatch(/watch has stopped/);
    // The notice job received twice mails once: the claim is on the connection.
    expect(await sendPauseNotice(app.deps, connection.id, 'a-second-delivery-of-the-job')).toBe(false);

    // Paused: a new object is not even listed, and the tick neither resumes nor mails again.
    await put('paid/c.pdf', await makePdf('Third'));
    expect(await listWatchedPrefix(app.deps, connection.id)).toBeUndefined();
    expect((await runWatchTick(app.deps)).resumed).toBe(0);
    expect(notices()).toHaveLength(1);

    await makePaid(app, email, 10);
    expect((await runWatchTick(app.deps)).resumed).toBe(1);
    await settled(connection.id, 2, ['converting', 'writing_output', 'completed']);
    expect(await listWatchedPrefix(app.deps, connection.id)).toEqual({ queued: 1 });
    await settled(connection.id, 3, ['converting', 'writing_output', 'completed']);
    expect(notices()).toHaveLength(1);
  }, 240_000);
});
