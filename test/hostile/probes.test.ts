import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { createConversionEngine } from '../../server/conversion/create-conversion-engine.ts';
import { silentLog } from '../../server/log.ts';
import { drawPdf } from '../helpers/local-pages.ts';
import { farApartFigures, flateBomb, imageBomb, junkAfterHeader, manyImages, operatorFlood, selfReferencingPageTree } from './probes.ts';

/**
 * The hostile probe set against the engine: each file is bounded before it
 * costs memory or minutes, and comes out as a 4xx code or a page with a
 * warning, never as a crash or a plain Error (a 500 at the upload).
 */

const conversion = loadConfig({ ...process.env }).conversion;
const engine = createConversionEngine({ conversion, log: silentLog, poolSize: 1 });
afterAll(() => engine.close());

async function inspectCode(bytes: Buffer): Promise<string> {
  return engine.inspect(new Uint8Array(bytes)).then(
    () => 'no error',
    (error: { code?: string; message: string }) => error.code ?? `plain error: ${error.message}`,
  );
}

describe('hostile PDFs', () => {
  it('an image of 20000×20000 pixels (1 MB on disk) is not decoded: the page keeps a placeholder figure and says why', async () => {
    const pdf = new Uint8Array(imageBomb(20_000));
    expect(pdf.byteLength).toBeLessThan(2_000_000);
    await engine.inspect(pdf);
    const [page] = await engine.convertPages(pdf, { pages: [1], backend: 'local' });
    expect(page!.warnings.join('\n')).toMatch(/1 image\(s\) larger than 50 megapixels were not decoded/);
    expect(page!.blocks.filter((block) => block.kind === 'figure')).toHaveLength(1);
    expect(page!.blocks.some((block) => block.kind === 'paragraph')).toBe(true);
  }, 120_000);

  it('a page of many images, each under the per-image cap, ends its own worker at the memory bound: the page is empty with the reason, the next document converts', async () => {
    // the bound scaled down (640 MB by default) so the page is small: eight 9-megapixel images, 216 MB decoded
    const bounded = createConversionEngine({ conversion, log: silentLog, poolSize: 1, workerExternalMb: 96 });
    try {
      const pdf = new Uint8Array(manyImages(8, 3000));
      expect(pdf.byteLength).toBeLessThan(1_000_000);
      await bounded.inspect(pdf);
      const [page] = await bounded.convertPages(pdf, { pages: [1], backend: 'local' });
      expect(page!.warnings.join('\n')).toMatch(/page 1 could not be converted \(the page worker stopped: it used more than 96 MB outside its heap\)/);
      const next = await drawPdf((doc) => doc.fontSize(14).text('A plain page after the bomb.', 72, 72));
      await bounded.inspect(next);
      const [plain] = await bounded.convertPages(next, { pages: [1], backend: 'local' });
      expect(plain!.warnings).toEqual([]);
      expect(JSON.stringify(plain!.blocks)).toContain('A plain page after the bomb.');
    } finally {
      await bounded.close();
    }
  }, 120_000);

  it('two small figures in opposite corners of a 14,400-point page are rendered one by one, not on one canvas as big as the page', async () => {
    const pdf = new Uint8Array(farApartFigures(14_400));
    await engine.inspect(pdf);
    // the canvas is native memory in this process (the page worker is a thread): the shared one was 1.6 GB
    const before = process.memoryUsage.rss();
    let peak = before;
    const watch = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage.rss());
    }, 20);
    try {
      const [page] = await engine.convertPages(pdf, { pages: [1], backend: 'local' });
      const figures = page!.blocks.filter((block) => block.kind === 'figure');
      expect(figures).toHaveLength(2);
      for (const figure of figures)
        expect(figure.kind === 'figure' && figure.image ? Math.max(figure.image.width, figure.image.height) : 0).toBeGreaterThan(500);
    } finally {
      clearInterval(watch);
    }
    expect((peak - before) / 1024 / 1024).toBeLessThan(512);
  }, 60_000);

  it('a content stream that inflates to 512 MB is PDF_MALFORMED before pdf.js reads it', async () => {
    expect(await inspectCode(flateBomb(512))).toBe('PDF_MALFORMED');
  }, 120_000);

  it('190 MB of zeros after %PDF- is PDF_MALFORMED without a page worker scanning it', async () => {
    expect(await inspectCode(junkAfterHeader(190 * 1024 * 1024))).toBe('PDF_MALFORMED');
  }, 120_000);

  it('a page tree that refers to itself is PDF_MALFORMED, not a plain error', async () => {
    expect(await inspectCode(selfReferencingPageTree())).toBe('PDF_MALFORMED');
  }, 60_000);

  it('a page of 800,000 path operators is read for its text only, with a warning, instead of drawn and OCRed', async () => {
    const pdf = new Uint8Array(operatorFlood(800_000));
    await engine.inspect(pdf);
    const [page] = await engine.convertPages(pdf, { pages: [1], backend: 'local' });
    expect(page!.warnings.join('\n')).toMatch(/draws \d+ operators, more than the 250000 a page may/);
    expect(page!.ocr).toBe(false);
  }, 300_000);
});
