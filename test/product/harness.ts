import { randomUUID } from 'node:crypto';
import { afterAll, beforeEach } from 'vitest';
import { z } from 'zod';
import { zipOutputs } from '../../server/conversion/render/zip.ts';
import type { Clock } from '../../server/deps.ts';
import { AnyRow, sql } from '../../server/db/database.ts';
import { startTestApp, TEST_PROXY_SECRET, type TestApp } from '../helpers/app.ts';
import { startResendFake, type ResendFake } from '../fakes/resend.ts';
import { startSesFake, type SesFake } from '../fakes/ses.ts';

const RESEND_KEY = 're_product';

export type ProductHarness = {
  app: TestApp;
  resend: ResendFake;
  ses: SesFake;
  /** Calls the REST API: JSON in, status and JSON (or text) out. */
  call: (method: string, path: string, options?: { token?: string; body?: unknown; proxy?: boolean; headers?: Record<string, string> }) => Promise<ApiAnswer>;
  /** The user's id (created on first use, like a first sign-in) and a Bearer token. */
  signIn: (email: string) => Promise<{ id: string; token: string; customerId: string }>;
};

// biome-ignore lint/suspicious/noExplicitAny: tests read whatever the route answered, field by field
type ApiAnswer = { status: number; headers: Headers; body: any; text: string };

/**
 * The real app on a database of its own, with both provider fakes behind the
 * real SDKs. `env` is added to the base environment (links on
 * https://folio.example, the team address, the purchase link).
 */
export async function startProductHarness(
  options: { env?: Record<string, string | undefined>; clock?: Clock; workers?: boolean } = {},
): Promise<ProductHarness> {
  const [resend, ses] = await Promise.all([startResendFake({ apiKey: RESEND_KEY }), startSesFake()]);
  afterAll(async () => {
    await Promise.all([resend.close(), ses.close()]);
  });
  const app = await startTestApp({
    clock: options.clock,
    workers: options.workers,
    env: {
      PROVIDER_A_API_KEY: RESEND_KEY,
      PROVIDER_A_BASE_URL: resend.url,
      PROVIDER_B_ENDPOINT: ses.url,
      CLOUD_ACCESS_KEY_ID: 'AKIAPRODUCT',
      CLOUD_SECRET_ACCESS_KEY: 'secret',
      EMAIL_SENDER_DOMAIN: 'folio.example',
      PUBLIC_BASE_URL: 'https://folio.example',
      CONTACT_EMAIL: 'team@folio.example',
      PURCHASE_URL: 'https://folio.example/buy',
      ADMIN_EMAILS: 'admin@folio.example',
      ...options.env,
    },
  });
  beforeEach(() => {
    resend.reset();
    ses.reset();
  });
  const call: ProductHarness['call'] = async (method, path, callOptions = {}) => {
    const headers: Record<string, string> = { ...callOptions.headers };
    if (callOptions.token) headers.authorization = `Bearer ${callOptions.token}`;
    if (callOptions.proxy) headers['x-proxy-secret'] = TEST_PROXY_SECRET;
    if (callOptions.body !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(`${app.baseUrl}${path}`, {
      method,
      headers,
      body: callOptions.body === undefined ? undefined : typeof callOptions.body === 'string' ? callOptions.body : JSON.stringify(callOptions.body),
    });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: the text is the body
    }
    return { status: response.status, headers: response.headers, body, text };
  };
  const signIn: ProductHarness['signIn'] = async (email) => {
    const token = await app.token(email);
    const me = await call('GET', '/api/me', { token });
    if (me.status !== 200) throw new Error(`sign-in failed: ${me.text}`);
    const customerId = await app.database.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`select customer_id as id from users where id = ${me.body.id}`);
    return { id: me.body.id as string, token, customerId };
  };
  return { app, resend, ses, call, signIn };
}

/**
 * A converted file as the service leaves it: the file row completed, a
 * completed job, and a real result zip (HTML, tagged PDF, report) in the store.
 */
export async function seedConvertedFile(
  app: TestApp,
  ownerId: string,
  options: { name?: string; html?: string; wcagStatus?: 'passed' | 'failed'; pages?: number } = {},
): Promise<{ fileId: string; jobId: string; resultKey: string }> {
  const db = app.database.db;
  const fileId = randomUUID();
  const jobId = randomUUID();
  const pages = options.pages ?? 2;
  const resultKey = `files/${fileId}/jobs/${jobId}/result.zip`;
  const customerId = await db.oneFirst(sql.type(z.object({ id: z.uuid() }))`select customer_id as id from users where id = ${ownerId}`);
  await db.query(sql.type(AnyRow)`
    insert into files (id, owner_id, original_name, content_type, size_bytes, page_count, storage_key, status)
    values (${fileId}, ${ownerId}, ${options.name ?? 'Annual report.pdf'}, 'application/pdf', 1000, ${pages}, ${`files/${fileId}/source.pdf`}, 'completed')`);
  await db.query(sql.type(AnyRow)`
    insert into large_conversion_jobs (id, file_id, owner_id, customer_id, status, total_pages, total_chunks, result_key, credits_charged, finished_at)
    values (${jobId}, ${fileId}, ${ownerId}, ${customerId}, 'completed', ${pages}, 1, ${resultKey}, ${pages}, now())`);
  const zip = zipOutputs(
    {
      html: options.html ?? '<!doctype html><html lang="en"><head><title>Annual report</title></head><body><main><h1>Annual report</h1></main></body></html>',
      taggedPdf: Buffer.from('%PDF-1.7\n%stub\n'),
      report: { wcagStatus: options.wcagStatus ?? 'passed', pages, standardPages: pages, complexPages: 0, costUsd: 0, findings: [] },
      reportHtml: '<!doctype html><html lang="en"><head><title>Report</title></head><body><h1>Report</h1></body></html>',
    },
    options.name ?? 'Annual report.pdf',
  );
  await app.deps.store.put(resultKey, zip, { contentType: 'application/zip' });
  return { fileId, jobId, resultKey };
}
