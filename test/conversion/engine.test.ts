import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { createConversionEngine } from '../../server/conversion/create-conversion-engine.ts';
import type { PageResult } from '../../server/conversion/model.ts';
import { isDomainError } from '../../server/errors.ts';
import { silentLog } from '../../server/log.ts';
import { startBedrockFake } from '../fakes/bedrock.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';

const corpus = (file: string) => new Uint8Array(readFileSync(path.join(CORPUS_DIR, file)));

const conversion = loadConfig({ ...process.env }).conversion;
const engine = createConversionEngine({ conversion, log: silentLog, poolSize: 2 });

afterAll(async () => {
  await engine.close();
});

async function inspectError(bytes: Uint8Array): Promise<string> {
  try {
    await engine.inspect(bytes);
  } catch (error) {
    if (isDomainError(error)) return error.code;
    throw error;
  }
  return 'no error';
}

describe('engine.inspect', () => {
  it('reads title, language, page count and tagging', async () => {
    const meta = await engine.inspect(corpus('verapdf-ua1-7.4.2-headings.pdf'), { sourceName: 'headings.pdf' });
    expect(meta).toMatchObject({ title: 'Heading-pass', lang: 'en-US', pageCount: 1, tagged: true, sourceName: 'headings.pdf' });
    const untagged = await engine.inspect(corpus('geotopo-117-pages.pdf'));
    expect(untagged).toMatchObject({ pageCount: 117, tagged: false, lang: 'de' });
  });

  it('maps unreadable input to the engine error codes', async () => {
    expect(await inspectError(corpus('encrypted-user-password.pdf'))).toBe('PDF_ENCRYPTED');
    expect(await inspectError(corpus('malformed-header-only.pdf'))).toBe('PDF_MALFORMED');
    expect(await inspectError(new Uint8Array(0))).toBe('NOT_A_PDF');
    expect(await inspectError(new TextEncoder().encode('<html><body>not a pdf</body></html>'))).toBe('NOT_A_PDF');
    // a missing xref keyword is recoverable: pdf.js rebuilds the table
    expect((await engine.inspect(corpus('malformed-xref-missing.pdf'))).pageCount).toBe(1);
  });

  it('refuses a PDF whose page tree is empty', async () => {
    const { PDFDocument } = await import('pdf-lib');
    // pdf.js itself reports one blank page for an empty page tree
    const empty = await (await PDFDocument.create()).save({ addDefaultPage: false, useObjectStreams: false });
    expect(await inspectError(empty)).toBe('PDF_NO_PAGES');
  });
});

describe('engine.convertPages (local, worker pool)', () => {
  it('streams pages in the order asked whichever worker finishes first', async () => {
    const pdf = corpus('geotopo-117-pages.pdf');
    // a heavy page first, light ones after: with two workers the light ones finish first
    const pages = [5, 1, 2, 3, 4, 60, 6];
    const seen: number[] = [];
    const results = await engine.convertPages(pdf, { pages, backend: 'local', onPage: (result) => void seen.push(result.page) });
    expect(seen).toEqual(pages);
    expect(results.map((result) => result.page)).toEqual(pages);
    for (const result of results) {
      expect(result.backend).toBe('local');
      expect(result.blocks.length).toBeGreaterThan(0);
      expect(result.blocks.every((block) => block.page === result.page)).toBe(true);
    }
    // the same pages one at a time give the same blocks: no state leaks between pages
    const alone = await engine.convertPages(pdf, { pages: [60], backend: 'local' });
    expect(alone[0]!.blocks).toEqual(results[5]!.blocks);
  });

  it('reads a formula the same whichever page with its near twin a worker converted first (a cache of read formulas keyed on rounded places)', async () => {
    const pdf = corpus('geotopo-117-pages.pdf');
    // pages 32 and 114 both name the half-space R^n_{+,0}, its glyphs a few hundredths of a point apart
    const read = async (pages: number[]) => {
      const oneWorker = createConversionEngine({ conversion, log: silentLog, poolSize: 1 });
      try {
        const results = await oneWorker.convertPages(pdf, { pages, backend: 'local' });
        return new Map(results.map((result) => [result.page, result.blocks]));
      } finally {
        await oneWorker.close();
      }
    };
    const [forwards, backwards] = [await read([32, 114]), await read([114, 32])];
    expect(backwards.get(32)).toEqual(forwards.get(32));
    expect(backwards.get(114)).toEqual(forwards.get(114));
  });

  it('stops before the next page starts when aborted', async () => {
    const pdf = corpus('geotopo-117-pages.pdf');
    const controller = new AbortController();
    const seen: PageResult[] = [];
    const run = engine.convertPages(pdf, {
      pages: Array.from({ length: 117 }, (_, index) => index + 1),
      backend: 'local',
      signal: controller.signal,
      onPage: (result) => {
        seen.push(result);
        if (seen.length === 3) controller.abort(new Error('cancelled by the test'));
      },
    });
    await expect(run).rejects.toThrow('cancelled by the test');
    // pages in flight may finish, but nothing near the end of the document was started
    expect(seen.length).toBeLessThan(20);
    expect(seen.slice(0, 3).map((result) => result.page)).toEqual([1, 2, 3]);
  });

  it('stops like an abort when onPage throws', async () => {
    const run = engine.convertPages(corpus('multicolumn-latex.pdf'), {
      pages: [1, 2, 3],
      backend: 'local',
      onPage: (result) => {
        if (result.page === 1) throw new Error('storage is down');
      },
    });
    await expect(run).rejects.toThrow('storage is down');
  });

  it('gives every one of several concurrent runs all its pages (chunk workers share one engine)', async () => {
    const pdf = corpus('multicolumn-latex.pdf');
    const seen: number[][] = [[], [], []];
    const runs = [[1, 2, 3], [3, 1], [2]].map((pages, run) =>
      engine.convertPages(pdf, { pages, backend: 'local', onPage: (result) => void seen[run]!.push(result.page) }),
    );
    const results = await Promise.all(runs);
    expect(results.map((pages) => pages.map((result) => result.page))).toEqual([[1, 2, 3], [3, 1], [2]]);
    expect(seen).toEqual([[1, 2, 3], [3, 1], [2]]);
    expect(results.every((pages) => pages.every((result) => result.blocks.length > 0))).toBe(true);
  });

  it('rejects pages outside the document', async () => {
    await expect(engine.convertPages(corpus('multicolumn-latex.pdf'), { pages: [4], backend: 'local' })).rejects.toThrow(/not in the document/);
  });

  it('converts the tagged list file through the pool with its structure', async () => {
    const [page] = await engine.convertPages(corpus('verapdf-ua1-7.1-list.pdf'), { pages: [1], backend: 'local' });
    expect(page!.blocks.map((block) => block.kind)).toContain('list');
    expect(page!.blocks.find((block) => block.kind === 'heading')).toBeDefined();
  });
});

describe('engine.render and engine.zip', () => {
  it('renders converted pages to HTML, tagged PDF and report, and zips them', async () => {
    const pdf = corpus('verapdf-ua1-7.4.2-headings.pdf');
    const meta = await engine.inspect(pdf, { sourceName: 'headings.pdf' });
    const pages = await engine.convertPages(pdf, { pages: [1], backend: 'local' });
    const outputs = await engine.render({ meta, pages });
    expect(outputs.html).toMatch(/<html[^>]* lang="en-US"/);
    expect(outputs.html).toContain('Heading level 3');
    expect(outputs.taggedPdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    expect(outputs.report.pages).toBe(1);
    const chunks: Buffer[] = [];
    for await (const chunk of engine.zip(outputs, 'headings')) chunks.push(chunk as Buffer);
    const zip = Buffer.concat(chunks);
    expect(zip.subarray(0, 2).toString('latin1')).toBe('PK');
    expect(zip.includes(Buffer.from('headings.accessible.pdf'))).toBe(true);
  });

  it('audits in a page worker with the same findings as an audit in this thread', async () => {
    const { renderDocument } = await import('../../server/conversion/render/render-document.ts');
    const pdf = corpus('verapdf-ua1-7.5-table-scope.pdf');
    const meta = await engine.inspect(pdf, { sourceName: 'table.pdf' });
    const pages = await engine.convertPages(pdf, { pages: [1], backend: 'local' });
    const inWorker = await engine.render({ meta, pages });
    const here = await renderDocument({ meta, pages });
    const findings = (outputs: typeof here) => {
      const { audit } = outputs.report as unknown as { audit: { violations: unknown[]; incomplete: unknown[]; passedRules: number; engine: string } };
      return { violations: audit.violations, incomplete: audit.incomplete, passedRules: audit.passedRules, engine: audit.engine };
    };
    // axe ran and passed rules: an audit that came back empty would not match
    expect(findings(inWorker).passedRules).toBeGreaterThan(10);
    expect(findings(inWorker)).toEqual(findings(here));
  });
});

describe('engine.convertPages (chunked-vision)', () => {
  it('sends pages to the Converse endpoint and falls back to the local engine when the model cannot answer', async () => {
    const fake = await startBedrockFake();
    const visionConfig = loadConfig({
      BEDROCK_ENDPOINT: fake.url,
      BEDROCK_MODEL_ID: 'anthropic.claude-3-5-sonnet-20241022-v2:0',
      CLOUD_ACCESS_KEY_ID: 'AKIDFAKE',
      CLOUD_SECRET_ACCESS_KEY: 'fake-secret',
    }).conversion;
    const vision = createConversionEngine({ conversion: visionConfig, log: silentLog, poolSize: 1 });
    try {
      const pdf = corpus('verapdf-ua1-7.4.2-headings.pdf');
      fake.next({ kind: 'text', text: '<p>Numbered headings</p><h1>Heading level 1</h1><h2>Heading level 2</h2><h3>Heading level 3</h3>' });
      const [accepted] = await vision.convertPages(pdf, { pages: [1], backend: 'chunked-vision' });
      expect(accepted).toMatchObject({ backend: 'chunked-vision', model: 'anthropic.claude-3-5-sonnet-20241022-v2:0' });
      expect(accepted!.blocks.filter((block) => block.kind === 'heading').map((block) => block.kind === 'heading' && block.level)).toEqual([1, 2, 3]);
      expect(fake.requests[0]!.documents).toHaveLength(1);

      // a non-retryable error: the page comes from the local engine, with the reason
      fake.next({ kind: 'error', type: 'ValidationException' });
      const seen: number[] = [];
      const [fallen] = await vision.convertPages(pdf, { pages: [1], backend: 'chunked-vision', onPage: (result) => void seen.push(result.page) });
      expect(seen).toEqual([1]);
      expect(fallen!.backend).toBe('local');
      expect(fallen!.warnings.join(' ')).toMatch(/vision model unavailable \(ValidationException\)/);
      expect(fallen!.blocks.filter((block) => block.kind === 'heading')).toHaveLength(3);
    } finally {
      await vision.close();
      await fake.close();
    }
  });
});

describe('page pool', () => {
  it('turns a worker that dies on a page into an empty page with the reason, and carries on with a fresh worker', async () => {
    const { createPagePool } = await import('../../server/conversion/pool/page-pool.ts');
    // a stand-in worker speaking the pool protocol: page 2 kills it
    const source = `
      import { parentPort } from 'node:worker_threads';
      parentPort.on('message', (message) => {
        if (message.type !== 'page') return;
        if (message.page === 2) process.exit(3);
        parentPort.postMessage({ type: 'page', docId: message.docId, page: message.page, result: {
          page: message.page, label: String(message.page), backend: 'local', classification: 'standard', reasons: [], blocks: [],
          warnings: [], textLayerWords: 0, ocr: false, timings: { ms: 0 }, costUsd: 0 } });
      });`;
    const pool = createPagePool({ size: 2, workerUrl: new URL(`data:text/javascript,${encodeURIComponent(source)}`) });
    try {
      const seen: number[] = [];
      const results = await pool.run({
        pdf: new Uint8Array(8),
        key: 'stand-in',
        pages: [1, 2, 3, 4],
        options: { docLang: 'en', tagged: false },
        onPage: (result) => void seen.push(result.page),
      });
      expect(seen).toEqual([1, 2, 3, 4]);
      expect(results[1]!.warnings.join(' ')).toMatch(/page worker stopped: page worker exited with code 3/);
      expect(results[1]!.blocks).toEqual([]);
      expect(results[3]!.warnings).toEqual([]);
    } finally {
      await pool.close();
    }
  });

  // a stand-in worker that signs each page with its thread id and dies on the page given in the URL's hash
  /**
   * A stand-in page worker that signs each page it converts with its thread id: it dies on page `dieOn`,
   * answers after `delay` ms (a JavaScript expression over `message`) or at once, and, with `inspects`,
   * answers an inspection with its thread id as page 1's label.
   */
  const pageWorker = ({ dieOn, delay, inspects = false }: { dieOn?: number; delay?: string; inspects?: boolean }) => {
    const answer = `parentPort.postMessage({ type: 'page', docId: message.docId, page: message.page, result: {
        page: message.page, label: String(threadId), backend: 'local', classification: 'standard', reasons: [], blocks: [],
        warnings: [], textLayerWords: 0, ocr: false, timings: { ms: 0 }, costUsd: 0 } })`;
    const inspection = `if (message.type === 'inspect') {
        parentPort.postMessage({ type: 'inspect', id: message.id, result: { meta: { pageCount: 1, tagged: false }, labels: [[1, String(threadId)]] } });
        return;
      }`;
    return new URL(
      `data:text/javascript,${encodeURIComponent(`
    import { parentPort, threadId } from 'node:worker_threads';
    parentPort.on('message', (message) => {
      ${inspects ? inspection : ''}
      if (message.type !== 'page') return;
      ${dieOn === undefined ? '' : `if (message.page === ${dieOn}) process.exit(3);`}
      ${delay === undefined ? answer : `setTimeout(() => ${answer}, ${delay})`};
    });`)}`,
    );
  };
  const signingWorker = (dieOn: number) => pageWorker({ dieOn });

  it('says an engine that cannot load is one, not a damaged file', async () => {
    const { createPagePool } = await import('../../server/conversion/pool/page-pool.ts');
    // the real worker, with the local backend's first module unresolvable (a broken install)
    const realWorker = new URL('../../server/conversion/pool/worker.ts', import.meta.url).href;
    const source = `
      import { registerHooks } from 'node:module';
      registerHooks({ resolve(specifier, context, next) {
        if (specifier.endsWith('/convert-page.ts')) throw new Error('Cannot find package pdfjs-dist');
        return next(specifier, context);
      } });
      await import(${JSON.stringify(realWorker)});`;
    const pool = createPagePool({ size: 1, workerUrl: new URL(`data:text/javascript,${encodeURIComponent(source)}`) });
    try {
      const failure = await pool
        .inspect({ pdf: corpus('verapdf-ua1-7.4.2-headings.pdf'), key: 'broken-install', sourceName: 'headings.pdf' })
        .catch((error: unknown) => error);
      expect(isDomainError(failure)).toBe(false);
      expect((failure as Error).message).toBe('the conversion engine could not load: Cannot find package pdfjs-dist');
    } finally {
      await pool.close();
    }
  });

  it('fails an audit whose worker dies, so the engine can audit in its own thread instead', async () => {
    const { createPagePool } = await import('../../server/conversion/pool/page-pool.ts');
    const source = `
      import { parentPort } from 'node:worker_threads';
      parentPort.on('message', (message) => { if (message.type === 'audit') process.exit(5); });`;
    const pool = createPagePool({ size: 1, workerUrl: new URL(`data:text/javascript,${encodeURIComponent(source)}`) });
    try {
      await expect(pool.audit('<!DOCTYPE html><html lang="en"><head><title>x</title></head><body><main><h1>x</h1></main></body></html>')).rejects.toThrow(
        /exited with code 5/,
      );
    } finally {
      await pool.close();
    }
  });

  it('gives each worker a run of consecutive pages, so running-head reads of neighbours are its own pages', async () => {
    const { createPagePool } = await import('../../server/conversion/pool/page-pool.ts');
    const pool = createPagePool({ size: 2, workerUrl: signingWorker(0) });
    try {
      const results = await pool.run({ pdf: new Uint8Array(8), key: 'runs', pages: [1, 2, 3, 4, 5, 6, 7, 8], options: { docLang: 'en', tagged: false } });
      expect(results.map((result) => result.page)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      const byWorker = results.map((result) => result.label);
      expect(new Set(byWorker).size).toBe(2);
      expect(byWorker.slice(0, 4).every((worker) => worker === byWorker[0])).toBe(true);
      expect(byWorker.slice(4).every((worker) => worker === byWorker[4])).toBe(true);
    } finally {
      await pool.close();
    }
  });

  // answers page 100 only after the given delay
  const slowPageWorker = (delayMs: number) => pageWorker({ delay: `message.page === 100 ? ${delayMs} : 0` });

  it('runs a second document on the worker the first leaves free, instead of after it', async () => {
    const { createPagePool } = await import('../../server/conversion/pool/page-pool.ts');
    const pool = createPagePool({ size: 2, workerUrl: slowPageWorker(1500) });
    try {
      const finished: string[] = [];
      const options = { docLang: 'en', tagged: false };
      const noting = (name: string) => (pages: PageResult[]) => {
        finished.push(name);
        return pages;
      };
      const slow = pool.run({ pdf: new Uint8Array(8), key: 'slow', pages: [100], options }).then(noting('slow'));
      const quick = pool.run({ pdf: new Uint8Array(8), key: 'quick', pages: [1], options }).then(noting('quick'));
      const [slowPages, quickPages] = await Promise.all([slow, quick]);
      expect(finished).toEqual(['quick', 'slow']);
      expect(quickPages[0]!.label).not.toBe(slowPages[0]!.label);
    } finally {
      await pool.close();
    }
  });

  // takes a few milliseconds a page, so lanes of two runs interleave
  const steadyWorker = pageWorker({ delay: '5' });

  it("gives a short document started after a long one a worker at the long one's next chunk boundary, not after its last page", async () => {
    const { createPagePool } = await import('../../server/conversion/pool/page-pool.ts');
    const pool = createPagePool({ size: 2, workerUrl: steadyWorker });
    try {
      const options = { docLang: 'en', tagged: false };
      const events: string[] = [];
      const longPages = Array.from({ length: 64 }, (_, index) => index + 1);
      // 64 pages on two workers: four chunks of 16, two per lane when nothing else runs
      const long = pool.run({ pdf: new Uint8Array(8), key: 'long', pages: longPages, options, onPage: (result) => void events.push(`long ${result.page}`) });
      const short = pool.run({ pdf: new Uint8Array(8), key: 'short', pages: [1], options, onPage: () => void events.push('short') });
      const [longResults, shortResults] = await Promise.all([long, short]);
      // the short page came while the long document still had a chunk to go, on a worker the long one handed back
      expect(events.indexOf('short')).toBeLessThan(events.indexOf('long 49'));
      expect(longResults.map((result) => result.label)).toContain(shortResults[0]!.label);
      // after the hand-over the long document went on with one worker until the short one was done
      expect(new Set(longResults.slice(32, 48).map((result) => result.label)).size).toBe(1);
    } finally {
      await pool.close();
    }
  });

  it("sends a document's next pages to the idle worker that already has it open", async () => {
    const { createPagePool } = await import('../../server/conversion/pool/page-pool.ts');
    const pool = createPagePool({ size: 2, workerUrl: signingWorker(0) });
    try {
      const options = { docLang: 'en', tagged: false };
      // two documents at once: each opens on a worker of its own
      const [first, second] = await Promise.all([
        pool.run({ pdf: new Uint8Array(8), key: 'first', pages: [1], options }),
        pool.run({ pdf: new Uint8Array(8), key: 'second', pages: [1], options }),
      ]);
      expect(first[0]!.label).not.toBe(second[0]!.label);
      // both workers idle now; the second document's worker is not the first in the pool
      const again = await pool.run({ pdf: new Uint8Array(8), key: 'second', pages: [2], options });
      expect(again[0]!.label).toBe(second[0]!.label);
    } finally {
      await pool.close();
    }
  });

  // answers page 100 late
  const inspectingWorker = pageWorker({ delay: 'message.page === 100 ? 200 : 0', inspects: true });

  it('inspects a new document on an idle worker, not on the first worker while it converts pages', async () => {
    const { createPagePool } = await import('../../server/conversion/pool/page-pool.ts');
    const pool = createPagePool({ size: 2, workerUrl: inspectingWorker });
    try {
      const options = { docLang: 'en', tagged: false };
      // two documents at once start both workers, the first document's on the pool's first worker
      const [first, second] = await Promise.all([
        pool.run({ pdf: new Uint8Array(8), key: 'first', pages: [1], options }),
        pool.run({ pdf: new Uint8Array(8), key: 'second', pages: [1], options }),
      ]);
      // the first worker converts a long page of the document it has open while a third document is inspected
      const busy = pool.run({ pdf: new Uint8Array(8), key: 'first', pages: [100], options });
      const facts = await pool.inspect({ pdf: new Uint8Array(8), key: 'third', sourceName: 'third.pdf' });
      expect((await busy)[0]!.label).toBe(first[0]!.label);
      expect(facts.labels).toEqual([[1, second[0]!.label]]);
      // its pages follow it to the worker that has it open
      const pages = await pool.run({ pdf: new Uint8Array(8), key: 'third', pages: [1], options });
      expect(pages[0]!.label).toBe(second[0]!.label);
    } finally {
      await pool.close();
    }
  });

  it('makes a run waiting for a worker fail when the pool closes, rather than wait forever', async () => {
    const { createPagePool } = await import('../../server/conversion/pool/page-pool.ts');
    const pool = createPagePool({ size: 1, workerUrl: slowPageWorker(60_000) });
    const options = { docLang: 'en', tagged: false };
    const holding = pool.run({ pdf: new Uint8Array(8), key: 'holding', pages: [100], options });
    const waiting = pool.run({ pdf: new Uint8Array(8), key: 'waiting', pages: [1], options });
    holding.catch(() => undefined);
    const refused = expect(waiting).rejects.toThrow(/closed/);
    await pool.close();
    await refused;
  });

  it('still converts the rest of a run whose worker died in the middle of it', async () => {
    const { createPagePool } = await import('../../server/conversion/pool/page-pool.ts');
    const pool = createPagePool({ size: 2, workerUrl: signingWorker(2) });
    try {
      const seen: number[] = [];
      const results = await pool.run({
        pdf: new Uint8Array(8),
        key: 'died',
        pages: [1, 2, 3, 4, 5, 6, 7, 8],
        options: { docLang: 'en', tagged: false },
        onPage: (result) => void seen.push(result.page),
      });
      expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      expect(results[1]!.warnings.join(' ')).toMatch(/page worker stopped/);
      // pages 3 and 4 were claimed by the worker that died: another worker converts them
      expect(results.filter((result) => result.warnings.length > 0).map((result) => result.page)).toEqual([2]);
    } finally {
      await pool.close();
    }
  });
});
