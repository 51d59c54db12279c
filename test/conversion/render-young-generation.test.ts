import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDocumentRender } from '../../server/conversion/render/stream.ts';
import { whileYoungGenerationHeld } from '../../server/conversion/render/young-generation.ts';
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

const renderOf = async (pages: number) => {
  const render = openDocumentRender(
    { title: `${pages} pages`, lang: 'en', pageCount: pages, tagged: false, sourceName: 'pages.pdf' },
    { dir, baseName: `pages-${pages}` },
  );
  for (let n = 1; n <= pages; n++) await render.add(page(n, [{ kind: 'paragraph', page: n, content: [{ kind: 'text', text: `Page ${n}.` }] }]));
  return render.finish();
};

describe('whileYoungGenerationHeld', () => {
  it('turns semi-space growth off for the work and back to V8’s default after it', async () => {
    const flags = watchFlags();
    const during = await whileYoungGenerationHeld(async () => flags());
    expect(during).toEqual([OFF]);
    expect(flags()).toEqual([OFF, DEFAULT]);
  });

  it('gives the flag back when the work fails', async () => {
    const flags = watchFlags();
    await expect(whileYoungGenerationHeld(() => Promise.reject(new Error('pdfkit tripped')))).rejects.toThrow('pdfkit tripped');
    expect(flags()).toEqual([OFF, DEFAULT]);
  });

  it('keeps growth off until the last of two overlapping passes ends', async () => {
    const flags = watchFlags();
    let endFirst!: () => void;
    const first = whileYoungGenerationHeld(() => new Promise<void>((resolve) => (endFirst = resolve)));
    const second = whileYoungGenerationHeld(async () => undefined);
    await second;
    expect(flags()).toEqual([OFF]);
    endFirst();
    await first;
    expect(flags()).toEqual([OFF, DEFAULT]);
  });

  it('restores the factor the process was started with', async () => {
    vi.stubEnv('NODE_OPTIONS', '--semi-space-growth-factor=3');
    const flags = watchFlags();
    await whileYoungGenerationHeld(async () => undefined);
    expect(flags()).toEqual([OFF, '--semi-space-growth-factor=3']);
  });
});

describe('streaming render', () => {
  it('holds the young generation while a long document’s tagged PDF is drawn, and not for a short one', async () => {
    const flags = watchFlags();
    const short = await renderOf(3);
    expect(short.taggedPdf).toBeDefined();
    expect(flags()).toEqual([]);

    const long = await renderOf(60);
    expect(long.report.pages).toBe(60);
    expect(flags()).toEqual([OFF, DEFAULT]);
  });
});
