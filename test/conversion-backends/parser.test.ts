import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { createParserBackend } from '../../server/conversion/backends/parser/parser-backend.ts';
import { DomainError, toErrorResponse } from '../../server/errors.ts';
import { silentLog } from '../../server/log.ts';
import { startParserFake } from '../fakes/parser-api.ts';
import { createTestDatabase } from '../helpers/database.ts';

await createTestDatabase();
const parserFake = await startParserFake();
afterAll(() => parserFake.close());
beforeEach(() => parserFake.reset());

const CORPUS = path.resolve(import.meta.dirname, '../../../shared/corpus');
const FAST_RETRY = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 4 };

function backend(env: Record<string, string> = {}, extra: { concurrency?: number; deadlineMs?: number } = {}) {
  const parser = loadConfig({ PARSER_API_URL: parserFake.url, PARSER_API_KEY: parserFake.apiKey, ...env }).conversion.parser;
  return createParserBackend({ parser, log: silentLog, retry: FAST_RETRY, pollIntervalMs: 2, ...extra });
}

/** A PDF whose pages each carry a title line and a body line. */
async function makePdf(pages: { title: string; body: string }[]): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  for (const { title, body } of pages) {
    const page = document.addPage([500, 700]);
    page.drawText(title, { x: 40, y: 640, size: 20, font });
    page.drawText(body, { x: 40, y: 600, size: 11, font });
  }
  return document.save();
}

const THREE_PAGES = [
  { title: 'Alpha chapter', body: 'The first page speaks of alpha.' },
  { title: 'Beta chapter', body: 'The second page speaks of beta.' },
  { title: 'Gamma chapter', body: 'The third page speaks of gamma.' },
];

async function failure(promise: Promise<unknown>): Promise<DomainError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DomainError);
  return error as DomainError;
}

describe('parser backend: success', () => {
  it('sends each page as its own PDF, polls until done, and parses the HTML into that page, in the order asked', async () => {
    const pdf = await makePdf(THREE_PAGES);
    const results = await backend().convertPages(pdf, [3, 1], {});

    expect(results.map((result) => [result.page, result.backend, result.classification])).toEqual([
      [3, 'parser', 'standard'],
      [1, 'parser', 'standard'],
    ]);
    expect(results[0]!.blocks).toEqual([
      { kind: 'heading', page: 3, level: 1, content: [{ kind: 'text', text: 'Gamma chapter' }] },
      { kind: 'paragraph', page: 3, content: [{ kind: 'text', text: 'The third page speaks of gamma.' }] },
    ]);
    expect(results[1]!.blocks[0]).toEqual({ kind: 'heading', page: 1, level: 1, content: [{ kind: 'text', text: 'Alpha chapter' }] });
    expect(results[0]!.costUsd).toBeGreaterThan(0);

    const submits = parserFake.requests.filter((request) => request.route === 'submit');
    expect(submits).toHaveLength(2);
    for (const submit of submits) {
      expect(submit.headers.app_key).toBe(parserFake.apiKey);
      expect(JSON.parse(submit.fields.options_json!)).toEqual({ conversion_formats: { html: true } });
      expect(submit.file!.type).toBe('application/pdf');
      expect((await PDFDocument.load(submit.file!.bytes)).getPageCount()).toBe(1);
    }
    // Two pending answers, then completed, for each job; then the HTML; then the job is deleted.
    expect(parserFake.count('status')).toBe(6);
    expect(parserFake.count('result')).toBe(2);
    expect(parserFake.count('delete')).toBe(2);
    expect(parserFake.jobs.size).toBe(0);
  });

  it('keeps tables, figures and formulas from the service, drops its scripts and styles, and classifies the page', async () => {
    parserFake.behave({
      pendingPolls: 0,
      render: async () =>
        `<html><head><style>table{border:1px}</style><script>track()</script></head><body>
         <h2>Results</h2><table><tr><th>Year</th><th>Value</th></tr><tr><td>2024</td><td>3</td></tr></table>
         <figure><img src="x.png" alt="Trend line rising"></figure>
         <div class="math-block"><math display="block"><mi>E</mi><mo>=</mo><mi>m</mi><msup><mi>c</mi><mn>2</mn></msup></math></div>
         </body></html>`,
    });
    const pdf = await makePdf(THREE_PAGES.slice(0, 1));
    const [result] = await backend().convertPages(pdf, [1], {});
    expect(result!.classification).toBe('complex');
    expect(result!.reasons).toEqual(['table', 'figure', 'formula']);
    expect(result!.blocks.map((block) => block.kind)).toEqual(['heading', 'table', 'figure', 'formula']);
    expect(JSON.stringify(result!.blocks)).not.toMatch(/track|border/);
  });

  it('converts a page of a real tagged corpus file', async () => {
    const pdf = new Uint8Array(await readFile(path.join(CORPUS, 'verapdf-ua1-7.4.2-headings.pdf')));
    const [result] = await backend().convertPages(pdf, [1], {});
    expect(result!.backend).toBe('parser');
    const text = JSON.stringify(result!.blocks);
    expect(text).toContain('Heading level 1');
    expect(text).toContain('Heading level 3');
  });

  it('rides out a 5xx on submit and a 503 while polling', async () => {
    parserFake.next({ kind: 'error', status: 502, route: 'submit' }, { kind: 'error', status: 503, route: 'status', headers: { 'retry-after': '0' } });
    const pdf = await makePdf(THREE_PAGES.slice(0, 1));
    const [result] = await backend().convertPages(pdf, [1], {});
    expect(result!.blocks[0]).toMatchObject({ kind: 'heading' });
    expect(parserFake.count('submit')).toBe(2);
  });
});

describe('parser backend: failures', () => {
  it.each([401, 403])('treats %i as a bad key: ERR_PARSER_API_KEY_INVALID, permanent, never retried', async (status) => {
    parserFake.next({ kind: 'error', status, route: 'submit' });
    const pdf = await makePdf(THREE_PAGES);
    const error = await failure(backend({}, { concurrency: 1 }).convertPages(pdf, [1, 2, 3], {}));

    expect(error.code).toBe('ERR_PARSER_API_KEY_INVALID');
    expect(error.retryable).toBe(false);
    expect(error.message).toBe('Document processing service authentication failed (ERR_PARSER_API_KEY_INVALID).');
    expect(toErrorResponse(error)).toEqual({ status: 502, body: { code: 'ERR_PARSER_API_KEY_INVALID', message: error.message } });
    // One request in all: no retry, and the other pages were not started.
    expect(parserFake.requests).toHaveLength(1);
  });

  it('sends the configured key, so a wrong key is refused by the service itself', async () => {
    const pdf = await makePdf(THREE_PAGES.slice(0, 1));
    const error = await failure(backend({ PARSER_API_KEY: 'not-the-key' }).convertPages(pdf, [1], {}));
    expect(error.code).toBe('ERR_PARSER_API_KEY_INVALID');
    expect(parserFake.requests).toHaveLength(1);
    expect(parserFake.requests[0]!.headers.app_key).toBe('not-the-key');
  });

  it('stops the other pages in flight on a bad key', async () => {
    // Its own fake: requests cancelled in flight may still land after the test, and must not land in the next one.
    const isolated = await startParserFake();
    try {
      const pdf = await makePdf(THREE_PAGES);
      const parser = { url: isolated.url, apiKey: 'not-the-key' };
      const error = await failure(createParserBackend({ parser, log: silentLog, retry: FAST_RETRY, concurrency: 4 }).convertPages(pdf, [1, 2, 3], {}));
      expect(error.code).toBe('ERR_PARSER_API_KEY_INVALID');
      // Each page tried at most once.
      expect(isolated.count('submit')).toBeLessThanOrEqual(3);
      expect(isolated.count('status')).toBe(0);
    } finally {
      await isolated.close();
    }
  });

  it('retries 5xx with backoff, then fails with a retryable ERR_PARSER_SUBMIT_FAILED', async () => {
    parserFake.next(...Array.from({ length: 5 }, () => ({ kind: 'error' as const, status: 503, route: 'submit' as const })));
    const pdf = await makePdf(THREE_PAGES.slice(0, 1));
    const error = await failure(backend().convertPages(pdf, [1], {}));
    expect(error.code).toBe('ERR_PARSER_SUBMIT_FAILED');
    expect(error.retryable).toBe(true);
    expect(error.message).toContain('ERR_PARSER_SUBMIT_FAILED');
    expect(parserFake.count('submit')).toBe(FAST_RETRY.maxAttempts);
  });

  it('retries dropped connections like 5xx', async () => {
    parserFake.next({ kind: 'drop', route: 'submit' }, { kind: 'drop', route: 'submit' }, { kind: 'drop', route: 'submit' });
    const pdf = await makePdf(THREE_PAGES.slice(0, 1));
    const error = await failure(backend().convertPages(pdf, [1], {}));
    expect(error).toMatchObject({ code: 'ERR_PARSER_SUBMIT_FAILED', retryable: true });
    expect(parserFake.count('submit')).toBe(FAST_RETRY.maxAttempts);
  });

  it('does not retry another 4xx: a permanent ERR_PARSER_SUBMIT_FAILED', async () => {
    parserFake.next({ kind: 'error', status: 413, route: 'submit' });
    const pdf = await makePdf(THREE_PAGES.slice(0, 1));
    const error = await failure(backend().convertPages(pdf, [1], {}));
    expect(error).toMatchObject({ code: 'ERR_PARSER_SUBMIT_FAILED', retryable: false });
    expect(parserFake.count('submit')).toBe(1);
  });

  it('reports a job that ends in error as a permanent ERR_PARSER_SUBMIT_FAILED and still deletes it', async () => {
    parserFake.behave({ pendingPolls: 1, error: 'Unable to process PDF' });
    const pdf = await makePdf(THREE_PAGES.slice(0, 1));
    const error = await failure(backend().convertPages(pdf, [1], {}));
    expect(error).toMatchObject({ code: 'ERR_PARSER_SUBMIT_FAILED', retryable: false, context: { error: 'Unable to process PDF' } });
    expect(parserFake.count('result')).toBe(0);
    expect(parserFake.count('delete')).toBe(1);
  });

  it('gives up on a job that never finishes, as retryable', async () => {
    parserFake.behave({ pendingPolls: 1_000_000 });
    const pdf = await makePdf(THREE_PAGES.slice(0, 1));
    const error = await failure(backend({}, { deadlineMs: 50 }).convertPages(pdf, [1], {}));
    expect(error).toMatchObject({ code: 'ERR_PARSER_SUBMIT_FAILED', retryable: true });
  });

  it('stops polling when the caller aborts, and still asks the service to delete the job', async () => {
    // Its own fake: the delete is not awaited after an abort, so it must not land in the next test.
    const isolated = await startParserFake();
    try {
      isolated.behave({ pendingPolls: 1_000_000 });
      const controller = new AbortController();
      const pdf = await makePdf(THREE_PAGES.slice(0, 1));
      const parser = { url: isolated.url, apiKey: isolated.apiKey };
      const run = createParserBackend({ parser, log: silentLog, retry: FAST_RETRY, pollIntervalMs: 2 }).convertPages(pdf, [1], { signal: controller.signal });
      await expect.poll(() => isolated.count('status'), { timeout: 5000 }).toBeGreaterThan(0);
      controller.abort(new Error('cancelled by user'));
      await expect(run).rejects.toThrow('cancelled by user');
      await expect.poll(() => isolated.jobs.size, { timeout: 5000 }).toBe(0);
    } finally {
      await isolated.close();
    }
  });

  it('fails clearly when the parser is not configured', async () => {
    const pdf = await makePdf(THREE_PAGES.slice(0, 1));
    const noKey = createParserBackend({ parser: { url: parserFake.url, apiKey: undefined }, log: silentLog });
    expect((await failure(noKey.convertPages(pdf, [1], {}))).code).toBe('ERR_PARSER_API_KEY_INVALID');
    const noUrl = createParserBackend({ parser: { url: undefined, apiKey: 'key' }, log: silentLog });
    expect(await failure(noUrl.convertPages(pdf, [1], {}))).toMatchObject({ code: 'ERR_PARSER_SUBMIT_FAILED', retryable: false });
    expect(parserFake.requests).toHaveLength(0);
  });
});
