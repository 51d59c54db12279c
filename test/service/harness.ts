import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, expect } from 'vitest';
import { z } from 'zod';
import { sql } from '../../server/db/database.ts';
import type { ConversionEngine } from '../../server/conversion/engine.ts';
import { lazyEngine, type EngineProvider } from '../../server/conversion-jobs/engine-provider.ts';
import type { TestApp } from '../helpers/app.ts';

export const CORPUS = path.resolve(import.meta.dirname, '../../../shared/corpus');
export const THREE_PAGES = path.join(CORPUS, 'multicolumn-latex.pdf');

type Gate = { promise: Promise<void>; open: () => void };
function gate(): Gate {
  let open = () => {};
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * The real engine, with switches that hold convertPages or render at their
 * start so a test can act while a chunk runs or a job assembles. A held
 * convertPages still honours its abort signal, as the engine does.
 */
export function gatedEngine(config: TestApp['config'], log: TestApp['deps']['log']) {
  const real = lazyEngine({ config, log });
  let convertGate: Gate | undefined;
  let renderGate: Gate | undefined;
  const stats = { convertCalls: 0, renderCalls: 0, pagesConverted: [] as number[][] };
  let failing: { error: Error; times: number; page?: number } | undefined;
  const provider: EngineProvider = async () => {
    const engine = await real();
    const wrapped: ConversionEngine = {
      inspect: (pdf, options) => engine.inspect(pdf, options),
      async convertPages(pdf, input) {
        stats.convertCalls++;
        stats.pagesConverted.push(input.pages ?? []);
        if (convertGate) {
          const signal = input.signal;
          await new Promise<void>((resolve, reject) => {
            if (signal?.aborted) return reject(signal.reason);
            signal?.addEventListener('abort', () => reject(signal.reason), { once: true });
            convertGate!.promise.then(resolve);
          });
        }
        if (failing && failing.times > 0 && (failing.page === undefined || input.pages?.includes(failing.page))) {
          failing.times--;
          throw failing.error;
        }
        return engine.convertPages(pdf, input);
      },
      async render(document) {
        stats.renderCalls++;
        if (renderGate) await renderGate.promise;
        return engine.render(document);
      },
      openRender(meta, target, options) {
        stats.renderCalls++;
        const render = engine.openRender(meta, target, options);
        return {
          add: (page) => render.add(page),
          async finish() {
            if (renderGate) await renderGate.promise;
            return render.finish();
          },
          abort: () => render.abort(),
        };
      },
      zip: (outputs, baseName) => engine.zip(outputs, baseName),
      convertDocx: (docx) => engine.convertDocx(docx),
      zipFiles: (files, baseName) => engine.zipFiles(files, baseName),
      close: () => engine.close(),
    };
    return wrapped;
  };
  afterAll(() => real.close());
  return {
    provider,
    stats,
    holdConvert: () => void (convertGate = gate()),
    /** The next `times` convertPages calls (of the chunk holding `page`, when given) throw `error`, after any hold. */
    failNextConvert: (error: Error, options: { times?: number; page?: number } = {}) =>
      void (failing = { error, times: options.times ?? 1, page: options.page }),
    stopFailing: () => void (failing = undefined),
    releaseConvert: () => {
      convertGate?.open();
      convertGate = undefined;
    },
    holdRender: () => void (renderGate = gate()),
    releaseRender: () => {
      renderGate?.open();
      renderGate = undefined;
    },
  };
}

export async function upload(app: TestApp, token: string, file: string, name = path.basename(file), type = 'application/pdf') {
  const form = new FormData();
  form.append('file', new Blob([await fs.readFile(file)], { type }), name);
  return fetch(`${app.baseUrl}/api/files`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form });
}

export async function uploadPdf(app: TestApp, token: string, file = THREE_PAGES): Promise<string> {
  const response = await upload(app, token, file);
  const body = (await response.json()) as { id: string };
  expect(response.status, JSON.stringify(body)).toBe(201);
  return body.id;
}

export function api(app: TestApp, token: string, method: string, route: string, body?: unknown) {
  return fetch(`${app.baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

export type SseEvent = { event: string; data: Record<string, unknown> };

/** Reads a server-sent event stream to its end. */
export async function readEvents(response: Response): Promise<SseEvent[]> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block.includes('event:'))
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)![1]!;
      const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!) as Record<string, unknown>;
      return { event, data };
    });
}

export async function makePaid(app: TestApp, email: string, credits: number) {
  await app.deps.db.query(sql.unsafe`
    update customers set plan_type = 'paid', credits_remaining = ${credits} where id = (select customer_id from users where email = ${email})`);
}

export function balance(app: TestApp, email: string) {
  return app.deps.db.one(sql.type(z.object({ credits: z.number(), held: z.number(), freeUsed: z.number(), freeHeld: z.number() }))`
    select credits_remaining as credits, credits_held as held, lifetime_free_pages_used as "freeUsed", free_pages_held as "freeHeld"
      from customers where id = (select customer_id from users where email = ${email})`);
}

export function jobState(app: TestApp, fileId: string) {
  return app.deps.db.maybeOne(sql.type(
    z.object({
      id: z.uuid(),
      status: z.string(),
      holdStatus: z.string().nullable(),
      holdOutcome: z.string().nullable(),
      chunks: z.array(z.string()),
      fileStatus: z.string(),
    }),
  )`
    select j.id, j.status, h.status as "holdStatus", h.outcome as "holdOutcome",
           array(select c.status from chunk_jobs c where c.job_id = j.id order by c.chunk_index) as chunks, f.status as "fileStatus"
      from large_conversion_jobs j join files f on f.id = j.file_id left join credit_holds h on h.id = j.hold_id
     where j.file_id = ${fileId} order by j.created_at desc limit 1`);
}
