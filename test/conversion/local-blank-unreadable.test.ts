import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { closeOcr } from '../../server/conversion/backends/local/ocr.ts';
import type { Block } from '../../server/conversion/model.ts';
import { blocksText } from '../../server/conversion/page-content.ts';
import { convertLocally } from '../helpers/local-pages.ts';

/**
 * Blank scans give no text; scans OCR cannot read (scribbles standing in for
 * handwriting) are their picture with a notice, sent to the vision backend
 * by the report and the CLI's summary. The scans are drawn here.
 */

const require = createRequire(import.meta.url);
const ROOT = path.resolve(import.meta.dirname, '../..');
type Context = import('@napi-rs/canvas').SKRSContext2D;

/** A PDF whose pages are each one 200 dpi picture, drawn by the given function on white (null: a page with nothing on it). */
async function scanPdf(pages: (((context: Context, width: number, height: number) => void) | null | string)[]): Promise<Uint8Array> {
  const { createCanvas, GlobalFonts } = await import('@napi-rs/canvas');
  const { PDFDocument, StandardFonts } = await import('pdf-lib');
  GlobalFonts.registerFromPath(require.resolve('dejavu-fonts-ttf/ttf/DejaVuSerif.ttf'), 'ScanSerif');
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  for (const draw of pages) {
    const [width, height] = [1000, 1300];
    const size = { width: (width * 72) / 200, height: (height * 72) / 200 };
    const page = pdf.addPage([size.width, size.height]);
    if (typeof draw === 'string') {
      page.drawText(draw, { x: 30, y: size.height - 60, size: 11, font });
      continue;
    }
    if (!draw) continue;
    const canvas = createCanvas(width, height);
    const context = canvas.getContext('2d');
    context.fillStyle = '#ffffff';
    context.fillRect(0, 0, width, height);
    draw(context, width, height);
    page.drawImage(await pdf.embedPng(canvas.toBuffer('image/png')), { x: 0, y: 0, ...size });
  }
  return pdf.save();
}

/** A repeatable sequence in [0, 1). */
function random(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 16807) % 2147483647) / 2147483647;
}

const white = () => undefined;
/** Dust and a scanner's grey edge: what a blank sheet looks like scanned. */
function specks(context: Context, width: number, height: number) {
  const next = random(7);
  context.fillStyle = '#000000';
  for (let index = 0; index < 60; index++) context.fillRect(next() * width, next() * height, 1 + next() * 4, 1 + next() * 4);
  context.fillStyle = '#888888';
  context.fillRect(0, 0, 12, height);
}
/**
 * Twelve lines of letters each tilted and lifted its own way, as a hand writes them: ink in lines of letter shapes that
 * OCR finds and reads at about a third of its confidence (zigzag strokes its page layout takes for no text at all).
 */
function scribbles(context: Context, width: number) {
  const next = random(11);
  context.fillStyle = '#000000';
  context.font = '34px ScanSerif';
  for (let line = 0; line < 12; line++) {
    const base = 100 + line * 90;
    for (let x = 60; x < width - 120; x += 14 + next() * 18 + (next() < 0.15 ? 20 : 0)) {
      context.save();
      context.translate(x, base + (next() - 0.5) * 18);
      context.rotate((next() - 0.5) * 0.9);
      context.fillText(String.fromCharCode(97 + Math.floor(next() * 26)), 0, 0);
      context.restore();
    }
  }
}

afterAll(async () => {
  await closeOcr();
});

describe('blank pages', () => {
  it('gives no text for an empty page, a white scan and a scan of dust, and does not call them OCR', { timeout: 60_000 }, async () => {
    const { pages } = await convertLocally(await scanPdf([null, white, specks]), { name: 'blank.pdf' });
    expect(pages).toHaveLength(3);
    for (const page of pages) {
      expect(blocksText(page.blocks).trim()).toBe('');
      expect(page.ocr).toBe(false);
      expect(page.classification).toBe('standard');
    }
    expect(pages[1]!.warnings).toEqual(['page 2 is blank: nothing on it reads as text']);
    expect(pages[2]!.warnings).toEqual(['page 3 is blank: nothing on it reads as text']);
  });
});

describe('pages OCR cannot read', () => {
  it('shows a scan read with low confidence as its picture with a notice, not its guessed text, and marks it for the vision backend', {
    timeout: 60_000,
  }, async () => {
    const { pages } = await convertLocally(await scanPdf([scribbles]), { name: 'scribbles.pdf' });
    const [page] = pages;
    expect(page!.reasons).toContain('unreadable');
    expect(page!.classification).toBe('complex');
    expect(page!.ocr).toBe(false);
    expect(page!.blocks.map((block) => block.kind)).toEqual(['paragraph', 'figure']);
    expect(blocksText(page!.blocks)).toMatch(/^This page could not be read reliably \(OCR read it with \d+% confidence\); it is shown as its picture\./);
    const figure = page!.blocks[1] as Extract<Block, { kind: 'figure' }>;
    expect(figure.image?.mime).toMatch(/^image\//);
    expect(figure.needsAlt).toBe(true);
    expect(page!.warnings.join('\n')).toMatch(/could not be read reliably .*--backend vision/);
  });

  it('says so in the report and in the CLI summary', { timeout: 120_000 }, async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'folio-unreadable-'));
    try {
      await writeFile(path.join(dir, 'mixed.pdf'), await scanPdf(['A page of printed words that reads well enough.', white, scribbles]));
      const run = await new Promise<{ stdout: string; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          [path.join(ROOT, 'bin/folio.ts'), 'convert', 'mixed.pdf', '-o', 'out'],
          { cwd: dir, env: { ...process.env, CONVERSION_POOL_SIZE: '1', LOG_LEVEL: 'error' }, timeout: 100_000 },
          (_error, stdout, stderr) => resolve({ stdout, stderr }),
        ),
      );
      expect(run.stdout, run.stderr).toContain('mixed.pdf: page(s) 3 could not be read reliably and are shown as pictures; convert them with --backend vision');
      const report = JSON.parse(await readFile(path.join(dir, 'out', 'mixed.report.json'), 'utf8')) as {
        unreadablePages: { page: number; label: string }[];
        pageDetails: { page: number; classification: string; reasons: string[] }[];
      };
      expect(report.unreadablePages).toEqual([{ page: 3, label: '3' }]);
      expect(report.pageDetails[2]).toMatchObject({ classification: 'complex', reasons: expect.arrayContaining(['unreadable']) });
      expect(report.pageDetails[1]!.reasons).toEqual([]);
      const html = await readFile(path.join(dir, 'out', 'mixed.html'), 'utf8');
      expect(html).toContain('A page of printed words that reads well enough.');
      expect(html).toContain('This page could not be read reliably');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
