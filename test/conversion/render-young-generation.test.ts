import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDocumentRender } from '../../server/conversion/render/stream.ts';
import { holdYoungGeneration } from '../../server/conversion/render/young-generation.ts';
import { page } from './render-fixture.ts';

const OFF = '--semi-space-growth-factor=1';
const DEFAULT = '--semi-space-growth-factor=2';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'folio-young-generation-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** The V8 flags set through `v8.setFlagsFromString`, in order; the calls still reach V8. */
const watchFlags = () => {
  const spy = vi.spyOn(v8, 'setFlagsFromString');
  return () => spy.mock.calls.map(([flag]) => flag);
};

describe('holdYoungGeneration', () => {
  it('turns semi-space growth off until released, then back to V8’s default; a second release does nothing', () => {
    const flags = watchFlags();
    const release = holdYoungGeneration();
    expect(flags()).toEqual([OFF]);
    release();
    release();
    expect(flags()).toEqual([OFF, DEFAULT]);
  });

  it('keeps growth off until the last of two overlapping holds is released', () => {
    const flags = watchFlags();
    const first = holdYoungGeneration();
    const second = holdYoungGeneration();
    first();
    first();
    expect(flags()).toEqual([OFF]);
    second();
    expect(flags()).toEqual([OFF, DEFAULT]);
  });

  it('restores the factor the process was started with', () => {
    vi.stubEnv('NODE_OPTIONS', '--semi-space-growth-factor=3');
    const flags = watchFlags();
    holdYoungGeneration()();
    expect(flags()).toEqual([OFF, '--semi-space-growth-factor=3']);
  });
});

const paragraphPage = (n: number) => page(n, [{ kind: 'paragraph', page: n, content: [{ kind: 'text', text: `Page ${n}.` }] }]);
const openRender = (pages: number, baseName: string) =>
  openDocumentRender({ title: `${pages} pages`, lang: 'en', pageCount: pages, tagged: false, sourceName: 'pages.pdf' }, { dir, baseName });

describe('streaming render', () => {
  it('holds the young generation from a long document’s first page until it is finished, and not for a short one', async () => {
    const flags = watchFlags();
    const short = openRender(3, 'short');
    for (let n = 1; n <= 3; n++) await short.add(paragraphPage(n));
    expect((await short.finish()).taggedPdf).toBeDefined();
    expect(flags()).toEqual([]);

    const long = openRender(60, 'long');
    for (let n = 1; n <= 60; n++) await long.add(paragraphPage(n));
    expect(flags()).toEqual([OFF]);
    const files = await long.finish();
    expect(files.taggedPdf).toBeDefined();
    expect(flags()).toEqual([OFF, DEFAULT]);
  });

  it('lets go of the young generation when a long render is aborted', async () => {
    const flags = watchFlags();
    const render = openRender(60, 'aborted');
    await render.add(paragraphPage(1));
    await render.abort();
    expect(flags()).toEqual([OFF, DEFAULT]);
  });
});
