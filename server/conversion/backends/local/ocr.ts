import { createRequire } from 'node:module';
import path from 'node:path';
import type { PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { Block } from '../../model.ts';
import { runsToInlines } from './inline.ts';

/**
 * Pages without a usable text layer (scans, text drawn as curves) are
 * rendered with @napi-rs/canvas and read by tesseract.js, offline: the
 * language data comes from the @tesseract.js-data/eng package, never from a
 * CDN. One tesseract worker per thread, created on first need and reused.
 */

/** 200 dpi: tesseract's accuracy flattens out above ~200 dpi; time and memory grow with the square. */
export const OCR_DPI = 200;
/** Renders of huge pages are capped (pixels) so one poster cannot exhaust memory. */
const MAX_PIXELS = 4500 * 4500;

type TesseractWorker = {
  recognize(image: Buffer): Promise<{ data: { text: string; confidence: number } }>;
  terminate(): Promise<unknown>;
};

let workerPromise: Promise<TesseractWorker> | undefined;

async function tesseract(): Promise<TesseractWorker> {
  workerPromise ??= (async () => {
    const require = createRequire(import.meta.url);
    const langPath = path.join(path.dirname(require.resolve('@tesseract.js-data/eng/package.json')), '4.0.0_best_int');
    const { createWorker } = await import('tesseract.js');
    return (await createWorker('eng', 1, { langPath, cacheMethod: 'none', gzip: true })) as unknown as TesseractWorker;
  })();
  return workerPromise;
}

export async function closeOcr(): Promise<void> {
  const pending = workerPromise;
  workerPromise = undefined;
  if (pending) await (await pending).terminate().catch(() => undefined);
}

export async function renderPagePng(page: PDFPageProxy, dpi = OCR_DPI): Promise<Buffer> {
  const { createCanvas } = await import('@napi-rs/canvas');
  let scale = dpi / 72;
  const base = page.getViewport({ scale: 1 });
  if (base.width * base.height * scale * scale > MAX_PIXELS) scale = Math.sqrt(MAX_PIXELS / (base.width * base.height));
  const viewport = page.getViewport({ scale });
  const canvas = createCanvas(Math.ceil(viewport.width), Math.ceil(viewport.height));
  const context = canvas.getContext('2d');
  context.fillStyle = '#ffffff';
  context.fillRect(0, 0, canvas.width, canvas.height);
  await page.render({ canvas: canvas as never, canvasContext: context as never, viewport }).promise;
  return canvas.toBuffer('image/png');
}

/** OCR of one page: paragraphs as tesseract separates them (blank lines), with line-end hyphens repaired. */
export async function ocrPage(page: PDFPageProxy, pageNumber: number): Promise<{ blocks: Block[]; confidence: number; words: number }> {
  const png = await renderPagePng(page);
  const worker = await tesseract();
  const { data } = await worker.recognize(png);
  const blocks: Block[] = [];
  let words = 0;
  for (const chunk of data.text.split(/\n\s*\n/)) {
    const lines = chunk.split('\n').map((line) => line.trim()).filter((line) => line !== '');
    if (lines.length === 0) continue;
    const content = runsToInlines(lines.map((line, index) => ({ text: index < lines.length - 1 ? `${line}\n` : line })));
    const text = lines.join(' ');
    // tesseract reads specks and rules as stray symbols: keep only lines with real words
    if (!/[\p{L}\p{N}]{2,}/u.test(text)) continue;
    words += (text.match(/[\p{L}\p{N}]+/gu) ?? []).length;
    blocks.push({ kind: 'paragraph', page: pageNumber, content });
  }
  return { blocks, confidence: data.confidence, words };
}
