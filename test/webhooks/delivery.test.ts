import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { registerWebhookJobs } from '../../jobs/webhooks/webhooks.worker.ts';
import { verifyDownloadToken } from '../../server/conversion-jobs/download-token.ts';
import { AnyRow, sql } from '../../server/db/database.ts';
import { makePaid, uploadPdf } from '../service/harness.ts';
import { callJson, createFile, createTenant, createUser, deliveries, emitConversionEvent, startWebhookHarness } from './harness.ts';
import { until } from '../helpers/wait.ts';

/**
 * The whole path with real workers: a committed outbox row wakes the
 * dispatcher (LISTEN/NOTIFY), the attempt job runs on pg-boss, the receiver
 * checks the signature with the SDK helper.
 */
const { app, receiver } = await startWebhookHarness({ workers: true, env: { CHUNK_PAGES: '10', CONVERSION_POOL_SIZE: '1' } });
const webhooks = await registerWebhookJobs(app.deps, { schedule: false, overrides: { policy: { retryDelaysSeconds: [1, 1] } } });
afterAll(() => webhooks.dispatcher?.stop());

type Created = { id: string; secret: string };

const owner = await createUser(app, 'owner@example.com');
const endpoint = (await callJson<Created>(app, owner.token, 'POST', '/api/webhooks', { url: receiver.url('/folio') })).body;

beforeEach(() => {
  receiver.reset();
  receiver.setSecrets([endpoint.secret]);
});

describe('delivery from the outbox', () => {
  it('delivers conversion.completed once, signed, with the specification’s payload and headers', async () => {
    const fileId = await createFile(app, owner.id, 'Annual Report.pdf');
    const emittedAt = Date.now();
    await emitConversionEvent(app, fileId, 'conversion.completed', { pages: 12, wcagStatus: 'failed', backend: 'chunked-vision' });
    const [request] = await receiver.waitFor(1);
    expect(request!.verification).toMatchObject({ ok: true, endpointId: endpoint.id });
    expect(request!.headers).toMatchObject({
      'content-type': 'application/json',
      'x-webhook-id': endpoint.id,
      'x-webhook-signature': expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
      'x-webhook-timestamp': expect.stringMatching(/^\d{10}$/),
    });
    const payload = JSON.parse(request!.body);
    expect(payload).toEqual({
      event: 'conversion.completed',
      fileId,
      userId: owner.id,
      tenantId: null,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: {
        originalName: 'Annual Report.pdf',
        backend: 'chunked-vision',
        wcagStatus: 'failed',
        pages: 12,
        zipUrl: expect.stringMatching(new RegExp(`^https://folio\\.example\\.com/api/download/${fileId}/zip\\?token=`)),
        zipExpiresAt: expect.any(String),
      },
    });
    const token = decodeURIComponent(new URL(payload.data.zipUrl).searchParams.get('token')!);
    expect(verifyDownloadToken('test-download-secret', fileId, token, new Date())).toBe(true);
    const validFor = Date.parse(payload.data.zipExpiresAt) - emittedAt;
    expect(validFor).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(validFor).toBeLessThanOrEqual(24 * 3600_000 + 1_000);

    await until(
      () => deliveries(app, endpoint.id),
      (rows) => rows.some((row) => row.status === 'delivered'),
      10_000,
      'delivered',
    );
    const outbox = await app.deps.db.any(sql.type(AnyRow)`select dispatched_at from outbox_events where aggregate_id = ${fileId}`);
    expect(outbox.every((row) => row.dispatched_at !== null)).toBe(true);
    // nothing more arrives for it
    await webhooks.dispatcher!.kick();
    expect(receiver.requests).toHaveLength(1);
  });

  it('delivers conversion.failed with the error code and message', async () => {
    const fileId = await createFile(app, owner.id, 'broken.pdf');
    await emitConversionEvent(app, fileId, 'conversion.failed', { code: 'PDF_MALFORMED', message: 'The PDF is damaged' });
    const [request] = await receiver.waitFor(1);
    expect(JSON.parse(request!.body)).toMatchObject({
      event: 'conversion.failed',
      fileId,
      data: { originalName: 'broken.pdf', error: { code: 'PDF_MALFORMED', message: 'The PDF is damaged' } },
    });
    expect(JSON.parse(request!.body).data).not.toHaveProperty('zipUrl');
  });

  it('retries after 500s and succeeds on the third attempt (schedule shortened to 1 s here)', async () => {
    const fileId = await createFile(app, owner.id);
    receiver.next({ kind: 'status', status: 500, body: 'boom' }, { kind: 'status', status: 500, body: 'boom again' });
    await emitConversionEvent(app, fileId);
    const requests = await receiver.waitFor(3, 15_000);
    // every attempt signs afresh over the same bytes
    expect(new Set(requests.map((request) => request.body)).size).toBe(1);
    expect(requests.every((request) => request.verification?.ok)).toBe(true);
    const history = await until(
      () => callJson<{ deliveries: Array<Record<string, unknown>> }>(app, owner.token, 'GET', `/api/webhooks/${endpoint.id}/deliveries?limit=1`),
      (page) => page.body.deliveries[0]?.status === 'delivered',
      10_000,
      'third attempt recorded',
    );
    expect(history.body.deliveries[0]).toMatchObject({
      fileId,
      status: 'delivered',
      attempt: 3,
      httpStatus: 200,
      attempts: [
        { attempt: 1, httpStatus: 500, responseBody: 'boom', error: 'HTTP 500' },
        { attempt: 2, httpStatus: 500, responseBody: 'boom again' },
        { attempt: 3, httpStatus: 200, error: null },
      ],
    });
  });

  it('sends a tenant’s events to its tenant endpoints for every user, and a personal endpoint only its owner’s', async () => {
    const tenantId = await createTenant(app, 'Acme');
    const admin = await createUser(app, 'admin@acme.example', { id: tenantId, admin: true });
    const member = await createUser(app, 'member@acme.example', { id: tenantId });
    const tenantHook = (await callJson<Created>(app, admin.token, 'POST', '/api/webhooks', { url: receiver.url('/acme'), tenantId })).body;
    const memberHook = (await callJson<Created>(app, member.token, 'POST', '/api/webhooks', { url: receiver.url('/member') })).body;
    receiver.setSecrets([endpoint.secret, tenantHook.secret, memberHook.secret]);
    await emitConversionEvent(app, await createFile(app, admin.id, 'admin.pdf'));
    await emitConversionEvent(app, await createFile(app, member.id, 'member.pdf'));
    await emitConversionEvent(app, await createFile(app, owner.id, 'outsider.pdf'));
    const requests = await receiver.waitFor(4);
    await webhooks.dispatcher!.kick();
    const seen = requests.map((request) => `${request.path} ${JSON.parse(request.body).data.originalName}`).sort();
    expect(seen).toEqual(['/acme admin.pdf', '/acme member.pdf', '/folio outsider.pdf', '/member member.pdf']);
    expect(requests.every((request) => request.verification?.ok)).toBe(true);
    expect(JSON.parse(requests.find((request) => request.path === '/acme')!.body).tenantId).toBe(tenantId);
  });

  it('a real conversion ends in a conversion.completed whose zip link downloads the outputs', async () => {
    await registerConversionJobs(app.deps, { schedule: false });
    await makePaid(app, owner.email, 100);
    const pdf = await PDFDocument.create();
    pdf.addPage([300, 200]).drawText('A one-page letter.', { x: 20, y: 150, size: 14, font: await pdf.embedFont(StandardFonts.Helvetica) });
    const file = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'folio-webhook-')), 'letter.pdf');
    await fs.writeFile(file, await pdf.save());
    const fileId = await uploadPdf(app, owner.token, file);
    expect((await callJson(app, owner.token, 'POST', `/api/convert/${fileId}`, { highFidelity: false })).status).toBe(200);
    const request = await until(
      async () => receiver.requests.find((received) => JSON.parse(received.body).fileId === fileId),
      Boolean,
      60_000,
      'the conversion webhook',
    );
    const payload = JSON.parse(request!.body);
    expect(payload).toMatchObject({
      event: 'conversion.completed',
      fileId,
      userId: owner.id,
      data: { pages: 1, originalName: 'letter.pdf', backend: 'local' },
    });
    expect(['passed', 'failed']).toContain(payload.data.wcagStatus);
    expect(request!.verification?.ok).toBe(true);
    const zipPath = new URL(payload.data.zipUrl);
    const zip = await fetch(`${app.baseUrl}${zipPath.pathname}${zipPath.search}`);
    expect(zip.status).toBe(200);
    expect(
      Buffer.from(await zip.arrayBuffer())
        .subarray(0, 2)
        .toString(),
    ).toBe('PK');
  }, 90_000);
});
