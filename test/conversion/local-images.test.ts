import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createCanvas, loadImage } from '@napi-rs/canvas';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { convertLocalPage } from '../../server/conversion/backends/local/convert-page.ts';
import { inspectDocument } from '../../server/conversion/backends/local/document-meta.ts';
import { openPdf, shareOperatorList } from '../../server/conversion/backends/local/pdf.ts';
import { closeOcr } from '../../server/conversion/backends/local/ocr.ts';
import { MAX_IMAGES_PER_PAGE, renderRegions } from '../../server/conversion/backends/local/images.ts';
import { createConversionEngine } from '../../server/conversion/create-conversion-engine.ts';
import type { Block, Inline, PageResult } from '../../server/conversion/model.ts';
import { renderHtml } from '../../server/conversion/render/html.ts';
import { silentLog } from '../../server/log.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';
import { convertLocally } from '../helpers/local-pages.ts';

const convert = async (bytes: Uint8Array, name = 'test.pdf') => (await convertLocally(bytes, { name })).pages;

/** Figure pictures extracted by the local backend: tagged figures, untagged images, scans left alone. */

type Figure = Extract<Block, { kind: 'figure' }>;

const corpus = (file: string) => new Uint8Array(readFileSync(path.join(CORPUS_DIR, file)));
const text = (list: Inline[] | undefined): string =>
  (list ?? []).map((item) => ('children' in item ? text(item.children) : 'text' in item ? item.text : ' ')).join('');
const figuresOf = (results: PageResult[]): Figure[] => results.flatMap((result) => result.blocks).filter((block): block is Figure => block.kind === 'figure');

/** The bytes decode as the image they claim to be: PNG or JPEG magic matching the MIME type. */
function expectPicture(image: Figure['image']): void {
  expect(image).toBeDefined();
  const bytes = Buffer.from(image!.base64, 'base64');
  if (image!.mime === 'image/png') expect([...bytes.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  else expect([...bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
  expect(image!.width).toBeGreaterThan(0);
  expect(image!.height).toBeGreaterThan(0);
}

/** A PNG with a diagonal gradient (a picture, not a flat tint). */
function gradientPng(width: number, height: number): Buffer {
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  const gradient = context.createLinearGradient(0, 0, width, height);
  gradient.addColorStop(0, '#1060c0');
  gradient.addColorStop(1, '#f0a020');
  context.fillStyle = gradient;
  context.fillRect(0, 0, width, height);
  context.fillStyle = '#ffffff';
  context.fillRect(width / 4, height / 4, width / 2, height / 2);
  return canvas.toBuffer('image/png');
}

function flatPng(width: number, height: number, colour: string): Buffer {
  const canvas = createCanvas(width, height);
  const context = canvas.getContext('2d');
  context.fillStyle = colour;
  context.fillRect(0, 0, width, height);
  return canvas.toBuffer('image/png');
}

/** An untagged page: a title, a paragraph, a picture, a paragraph after it; optionally a flat tint box and a tiny icon. */
async function untaggedWithImage(extras = false): Promise<Uint8Array> {
  const pdf = await PDFDocument.create();
  const font = await pdf.embedFont(StandardFonts.Helvetica);
  const bold = await pdf.embedFont(StandardFonts.HelveticaBold);
  const page = pdf.addPage([612, 792]);
  page.drawText('Harbour survey', { x: 72, y: 720, size: 22, font: bold });
  page.drawText('The first paragraph describes the harbour before the picture.', { x: 72, y: 680, size: 11, font });
  page.drawText('It continues on a second line of the same paragraph.', { x: 72, y: 666, size: 11, font });
  const picture = await pdf.embedPng(gradientPng(320, 200));
  page.drawImage(picture, { x: 72, y: 440, width: 320, height: 200 });
  page.drawText('The closing paragraph comes after the picture in reading order.', { x: 72, y: 400, size: 11, font });
  page.drawText('It also has a second line so that it reads as a paragraph.', { x: 72, y: 386, size: 11, font });
  if (extras) {
    page.drawImage(await pdf.embedPng(flatPng(60, 60, '#d8e8f0')), { x: 420, y: 200, width: 120, height: 120 });
    page.drawImage(await pdf.embedPng(gradientPng(12, 12)), { x: 60, y: 398, width: 8, height: 8 });
  }
  return pdf.save();
}

afterAll(async () => {
  await closeOcr();
});

describe('local backend: figure pictures', () => {
  it('gives the tagged figure of verapdf-ua1-7.3-figure-alt.pdf its alt and its picture', async () => {
    const figures = figuresOf(await convert(corpus('verapdf-ua1-7.3-figure-alt.pdf')));
    expect(figures).toHaveLength(1);
    expect(figures[0]!.alt).toBe('Logo of Dual lab sprl');
    expectPicture(figures[0]!.image);
    // the logo's own pixels: 75 × 16 as stored in the file
    expect([figures[0]!.image!.width, figures[0]!.image!.height]).toEqual([75, 16]);
  });

  it('gives both figures of faa-amt-handbook-page.pdf a picture of the whole figure, assembled from its pieces', async () => {
    const figures = figuresOf(await convert(corpus('faa-amt-handbook-page.pdf')));
    expect(figures).toHaveLength(2);
    for (const figure of figures) {
      expectPicture(figure.image);
      // each figure is drawn from several ~210-pixel image pieces: the picture spans them all
      expect(figure.image!.width).toBeGreaterThan(400);
    }
    expect(figures[0]!.image!.base64).not.toBe(figures[1]!.image!.base64);
  });

  it('draws the page once for both assembled figures of faa-amt-handbook-page.pdf, not once a figure', async () => {
    const bytes = corpus('faa-amt-handbook-page.pdf');
    const meta = await inspectDocument(bytes.slice(), 'faa.pdf');
    const doc = await openPdf(bytes.slice());
    try {
      // pdf.js hands out one proxy per page: the conversion draws through this one
      const page = await doc.getPage(1);
      const render = vi.spyOn(page, 'render');
      const result = await convertLocalPage(doc, 1, { docLang: meta.lang, tagged: meta.tagged });
      const figures = figuresOf([result]);
      expect(figures).toHaveLength(2);
      for (const figure of figures) expect(figure.image!.width).toBeGreaterThan(400);
      expect(render).toHaveBeenCalledTimes(1);
    } finally {
      await doc.loadingTask.destroy();
    }
  });

  it('does not turn the scan of scanned-book-page.pdf into a figure of the OCR page', { timeout: 60_000 }, async () => {
    const [page] = await convert(corpus('scanned-book-page.pdf'));
    expect(page!.ocr).toBe(true);
    expect(figuresOf([page!])).toHaveLength(0);
  });

  it('gives an untagged image a figure with its picture, needing alt, between the paragraphs around it', async () => {
    const [page] = await convert(await untaggedWithImage());
    const kinds = page!.blocks.map((block) => block.kind);
    expect(kinds).toEqual(['heading', 'paragraph', 'figure', 'paragraph']);
    const figure = page!.blocks[2] as Figure;
    expect(figure).toMatchObject({ needsAlt: true, decorative: false });
    expectPicture(figure.image);
    expect([figure.image!.width, figure.image!.height]).toEqual([320, 200]);
    expect(text((page!.blocks[3] as Extract<Block, { kind: 'paragraph' }>).content)).toMatch(/^The closing paragraph/);
    expect(page!.warnings.join(' ')).toMatch(/1 image\(s\) need alt text/);
  });

  it('marks a flat tint box decorative and leaves a tiny icon out', async () => {
    const [page] = await convert(await untaggedWithImage(true));
    const figures = figuresOf([page!]);
    expect(figures).toHaveLength(2);
    expect(figures.filter((figure) => figure.decorative)).toHaveLength(1);
    expect(figures.find((figure) => figure.decorative)).toMatchObject({ needsAlt: false });
    expect(figures.find((figure) => !figure.decorative)).toMatchObject({ needsAlt: true });
  });

  it('caps the pictures of one page and says so', async () => {
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const page = pdf.addPage([612, 792]);
    page.drawText('A catalogue page of thumbnails.', { x: 40, y: 760, size: 11, font });
    const count = MAX_IMAGES_PER_PAGE + 2;
    for (let index = 0; index < count; index++) {
      // distinct pixels per image, so none is a repeat of another
      const image = await pdf.embedPng(gradientPng(40 + index, 40));
      page.drawImage(image, { x: 40 + (index % 6) * 90, y: 640 - Math.floor(index / 6) * 90, width: 60, height: 60 });
    }
    const [result] = await convert(await pdf.save());
    const figures = figuresOf([result!]);
    expect(figures).toHaveLength(count);
    expect(figures.filter((figure) => figure.image)).toHaveLength(MAX_IMAGES_PER_PAGE);
    expect(result!.warnings.join(' ')).toMatch(/more images than a page may carry/);
  });

  it('draws figure regions from the operator list the page already read, to the same picture', async () => {
    const bytes = corpus('faa-amt-handbook-page.pdf');
    // the two assembled figures of the page, in page space
    const boxes = [
      { x0: 320, y0: 78, x1: 611, y1: 337 },
      { x0: 70, y0: 87, x1: 346, y1: 238 },
    ];
    const draw = async (share: boolean) => {
      const doc = await openPdf(bytes.slice());
      try {
        const page = await doc.getPage(1);
        // pdf.js's request for an evaluation of the page: one for the list read, one more for each kind of drawing
        const evaluations = vi.spyOn(page as unknown as { _pumpOperatorList: () => void }, '_pumpOperatorList');
        const list = await page.getOperatorList();
        if (share) shareOperatorList(page, list);
        const pictures = await renderRegions(page, boxes);
        return { pictures, evaluations: evaluations.mock.calls.length };
      } finally {
        await doc.loadingTask.destroy();
      }
    };
    const shared = await draw(true);
    const apart = await draw(false);
    expect([shared.evaluations, apart.evaluations]).toEqual([1, 2]);
    const pixels = async (image: Figure['image']) => {
      const decoded = await loadImage(Buffer.from(image!.base64, 'base64'));
      const canvas = createCanvas(decoded.width, decoded.height);
      canvas.getContext('2d').drawImage(decoded, 0, 0);
      return canvas.getContext('2d').getImageData(0, 0, decoded.width, decoded.height).data;
    };
    for (const [index, picture] of shared.pictures.entries()) {
      const [mine, theirs] = [await pixels(picture), await pixels(apart.pictures[index])];
      expect(mine.length).toBe(theirs.length);
      let difference = 0;
      for (let at = 0; at < mine.length; at++) difference += Math.abs(mine[at]! - theirs[at]!);
      // the drawing list merges some operators: a few edge pixels are anti-aliased differently, nothing more
      expect(difference / mine.length).toBeLessThan(0.05);
    }
  });

  it('carries a stored JPEG through the worker pool as its own bytes, telling apart two photographs of one size', async () => {
    const jpeg = (from: string, to: string) => {
      const canvas = createCanvas(300, 200);
      const context = canvas.getContext('2d');
      const gradient = context.createLinearGradient(0, 0, 300, 200);
      gradient.addColorStop(0, from);
      gradient.addColorStop(1, to);
      context.fillStyle = gradient;
      context.fillRect(0, 0, 300, 200);
      return canvas.toBuffer('image/jpeg', 80);
    };
    const photos = [jpeg('#1060c0', '#f0a020'), jpeg('#20a040', '#802060')];
    const pdf = await PDFDocument.create();
    const font = await pdf.embedFont(StandardFonts.Helvetica);
    const page = pdf.addPage([612, 792]);
    page.drawText('Two photographs of the harbour, the second one first on the page.', { x: 72, y: 720, size: 11, font });
    const [first, second] = [await pdf.embedJpg(photos[0]!), await pdf.embedJpg(photos[1]!)];
    page.drawImage(second, { x: 72, y: 460, width: 300, height: 200 });
    page.drawImage(first, { x: 72, y: 200, width: 300, height: 200 });
    page.drawText('Both were taken from the lighthouse at noon.', { x: 72, y: 160, size: 11, font });
    const bytes = await pdf.save();
    const engine = createConversionEngine({ conversion: loadConfig({}).conversion, log: silentLog, poolSize: 1 });
    try {
      const figures = figuresOf(await engine.convertPages(bytes, { pages: [1], backend: 'local' }));
      expect(figures).toHaveLength(2);
      const carried = figures.map((figure) => figure.image!);
      for (const image of carried) expect([image.mime, image.width, image.height]).toEqual(['image/jpeg', 300, 200]);
      // in reading order, top first: the second photograph, then the first, each byte for byte
      expect(Buffer.from(carried[0]!.base64, 'base64').equals(photos[1]!)).toBe(true);
      expect(Buffer.from(carried[1]!.base64, 'base64').equals(photos[0]!)).toBe(true);
    } finally {
      await engine.close();
    }
  });

  it('carries the picture through the worker pool into the HTML as a data: image', async () => {
    const bytes = await untaggedWithImage();
    const engine = createConversionEngine({ conversion: loadConfig({}).conversion, log: silentLog, poolSize: 1 });
    try {
      const pages = await engine.convertPages(bytes, { pages: [1], backend: 'local' });
      const meta = await inspectDocument(bytes, 'survey.pdf');
      const { html } = renderHtml({ meta, pages });
      expect(html).toMatch(/<img src="data:image\/(png|jpeg);base64,[A-Za-z0-9+/=]{100,}"/);
    } finally {
      await engine.close();
    }
  });
});
