import fs from 'node:fs/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerConversionJobs } from '../../jobs/conversion/conversion.worker.ts';
import { type ConversionEvent, createFolioClient, FolioError, toFolioError, uploadFile, watchConversion } from '../../client-sdk/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { api, gatedEngine, makePaid, THREE_PAGES } from '../service/harness.ts';

const ENV = { CHUNK_PAGES: '1', CHUNK_CONCURRENCY: '2', CHUNK_HEARTBEAT_INTERVAL_MS: '100', CONVERSION_POOL_SIZE: '1' };

let app: TestApp;
let engine: ReturnType<typeof gatedEngine>;

beforeAll(async () => {
  app = await startTestApp({ env: ENV, workers: true, engine: (core) => (engine = gatedEngine(core.config, core.log)).provider });
  await registerConversionJobs(app.deps, { schedule: false });
}, 60_000);

async function paidUser(email: string) {
  const token = await app.token(email);
  await api(app, token, 'GET', '/api/me');
  await makePaid(app, email, 100);
  return token;
}

async function collect(events: AsyncIterable<ConversionEvent>) {
  const seen: ConversionEvent[] = [];
  for await (const event of events) seen.push(event);
  return seen;
}

async function rejection(promise: Promise<unknown>): Promise<FolioError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error, 'the call should have failed').toBeInstanceOf(FolioError);
  return error as FolioError;
}

describe('client SDK', () => {
  it('uploads with progress, streams typed events to completed, and its download link serves the zip', async () => {
    const token = await paidUser('sdk-flow@example.com');
    const options = { baseUrl: app.baseUrl, token: () => token };
    const folio = createFolioClient(options);
    const bytes = await fs.readFile(THREE_PAGES);

    const progress: number[] = [];
    const file = await uploadFile(options, new Blob([bytes], { type: 'application/pdf' }), {
      name: 'three.pdf',
      onProgress: ({ loaded, total }) => {
        expect(loaded).toBeLessThanOrEqual(total);
        progress.push(loaded / total);
      },
    });
    expect(file).toMatchObject({ name: 'three.pdf', pages: 3, status: 'uploaded' });
    expect(progress.at(-1)).toBe(1);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));

    await expect(folio.conversion.downloadLink.query({ fileId: file.id }).catch(toFolioError)).resolves.toMatchObject({ code: 'CONFLICT', status: 409 });

    engine.holdConvert();
    const started = await folio.conversion.start.mutate({ fileId: file.id });
    expect(started.totalPages).toBe(3);
    const events = watchConversion(options, file.id);
    const first = await events.next();
    expect(first.value).toMatchObject({ type: 'progress', fileId: file.id, totalPages: 3 });
    engine.releaseConvert();
    const rest = await collect(events);
    const last = rest.at(-1)!;
    expect(rest.slice(0, -1).every((event) => event.type === 'progress')).toBe(true);
    expect(last.type).toBe('completed');
    if (last.type !== 'completed') return;
    expect(last.pagesDone).toBe(3);
    expect(last.downloadUrl.startsWith(`${app.baseUrl}/api/download/${file.id}/zip?token=`)).toBe(true);

    const zip = await fetch(last.downloadUrl);
    expect(zip.status).toBe(200);
    expect(
      Buffer.from(await zip.arrayBuffer())
        .subarray(0, 2)
        .toString(),
    ).toBe('PK');

    // The accessible HTML opens in a tab: served inline from the same zip, sandboxed so the document cannot act on the API.
    expect(last.htmlUrl.startsWith(`${app.baseUrl}/api/download/${file.id}/html?token=`)).toBe(true);
    const html = await fetch(last.htmlUrl);
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.headers.get('content-security-policy')).toMatch(/^sandbox;/);
    expect(await html.text()).toMatch(/^<!doctype html>/i);
    expect((await fetch(last.htmlUrl.replace(/token=[^&]+/, 'token=1.x'))).status).toBe(403);

    const link = await folio.conversion.downloadLink.query({ fileId: file.id });
    expect((await fetch(`${app.baseUrl}${link.url}`)).status).toBe(200);
    expect((await fetch(`${app.baseUrl}${link.htmlUrl}`)).status).toBe(200);
  }, 180_000);

  it('ends the iterator with cancelled when the conversion is cancelled', async () => {
    const token = await paidUser('sdk-cancel@example.com');
    const options = { baseUrl: app.baseUrl, token };
    const folio = createFolioClient(options);
    const file = await uploadFile(options, new Blob([await fs.readFile(THREE_PAGES)], { type: 'application/pdf' }));
    engine.holdConvert();
    try {
      await folio.conversion.start.mutate({ fileId: file.id });
      const events = watchConversion(options, file.id);
      expect((await events.next()).value).toMatchObject({ type: 'progress' });
      await folio.conversion.cancel.mutate({ fileId: file.id });
      const rest = await collect(events);
      expect(rest.at(-1)).toMatchObject({ type: 'cancelled', fileId: file.id });
    } finally {
      engine.releaseConvert();
    }
  }, 120_000);

  it('turns every failure into a FolioError with the stable code and a readable message', async () => {
    const token = await paidUser('sdk-errors@example.com');
    const options = { baseUrl: app.baseUrl, token };
    const folio = createFolioClient(options);

    const notPdf = await rejection(uploadFile(options, new Blob(['hello'], { type: 'text/plain' }), { name: 'hello.txt' }));
    expect(notPdf.status).toBe(415);
    expect(notPdf.code).toMatch(/^(NOT_A_PDF|UNSUPPORTED_FILE_TYPE)$/);
    expect(notPdf.message).not.toMatch(/^[{[]/);

    const anonymous = await rejection(uploadFile({ baseUrl: app.baseUrl }, new Blob(['%PDF-1.4'])));
    expect(anonymous).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });

    const file = await uploadFile(options, new Blob([await fs.readFile(THREE_PAGES)], { type: 'application/pdf' }));
    // A validation failure names each field, so a page can say what to fix.
    const invalid = toFolioError(await folio.figures.describe.mutate({ fileId: file.id, figureId: 'p1-1', alt: '' }).catch((error: unknown) => error));
    expect(invalid).toMatchObject({ code: 'VALIDATION_FAILED', status: 400 });
    expect(invalid.issues.map((issue) => issue.path.join('.'))).toContain('alt');

    const idle = toFolioError(await folio.conversion.cancel.mutate({ fileId: file.id }).catch((error: unknown) => error));
    expect(idle).toMatchObject({ code: 'NO_ACTIVE_CONVERSION', status: 409 });

    const stranger = await app.token('sdk-stranger@example.com');
    const hidden = await rejection(watchConversion({ baseUrl: app.baseUrl, token: stranger }, file.id).next());
    expect(hidden).toMatchObject({ code: 'NOT_FOUND', status: 404 });

    const unreachable = await rejection(uploadFile({ baseUrl: 'http://127.0.0.1:1', token }, new Blob(['%PDF-1.4'])));
    expect(unreachable.code).toBe('NETWORK_ERROR');
  });
});
