import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeRgbPng, PNG_SIGNATURE, pngChunk } from '../../server/conversion/backends/local/png.ts';
import { renderTaggedPdf } from '../../server/conversion/render/pdf.ts';
import type { Block, ConvertedDocument } from '../../server/conversion/model.ts';
import { fullDocument, page } from './render-fixture.ts';

const run = promisify(execFile);

function hasPdfinfo(): boolean {
  try {
    execFileSync('pdfinfo', ['-v'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const poppler = hasPdfinfo();
if (!poppler) console.warn('render-pdf: pdfinfo (Debian poppler-utils) is missing; the structure-tree checks are skipped');

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'folio-render-pdf-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(name: string, pdf: Buffer): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, pdf);
  return file;
}

const t = (text: string) => ({ kind: 'text' as const, text });

describe('tagged PDF renderer', () => {
  it.skipIf(!poppler)('documents drawn one after another share parsed faces but each embeds its own glyphs', async () => {
    const only = (words: string, bold: string): ConvertedDocument => ({
      meta: { title: words, lang: 'en', pageCount: 1, tagged: false, sourceName: `${words}.pdf` },
      pages: [page(1, [{ kind: 'paragraph', page: 1, content: [t(`${words} `), { kind: 'emphasis', strong: true, children: [t(bold)] }] }])],
    });
    const first = await write('first.pdf', await renderTaggedPdf(only('Quartz jigs vexed', 'Klimt')));
    const second = await write('second.pdf', await renderTaggedPdf(only('Bright whale onyx', 'Zephyr')));
    for (const [file, words] of [
      [first, 'Quartz jigs vexed Klimt'],
      [second, 'Bright whale onyx Zephyr'],
    ] as const) {
      expect((await run('pdftotext', [file, '-'])).stdout).toContain(words);
      const fonts = (await run('pdffonts', [file])).stdout;
      // a subset per document (a tag like ABCDEF+DejaVuSans), embedded, with its Unicode map
      expect(fonts).toMatch(/^[A-Z]{6}\+DejaVuSans\s.*\byes\s+yes\s+yes\b/m);
      expect(fonts).toMatch(/^[A-Z]{6}\+DejaVuSans-Bold\s/m);
    }
    expect((await run('pdftotext', [second, '-'])).stdout).not.toMatch(/Quartz|Klimt/);
  });

  it('writes a PDF 1.7 with embedded fonts, language and the title shown', async () => {
    const pdf = await renderTaggedPdf(fullDocument());
    const head = pdf.subarray(0, 8).toString('latin1');
    expect(head).toBe('%PDF-1.7');
    const body = pdf.toString('latin1');
    expect(body).toMatch(/\/DisplayDocTitle true/);
    expect(body).toMatch(/\/Lang \(en-GB\)/);
    expect(body).toMatch(/\/FontFile2/);
    expect(body).toMatch(/DejaVuSans/);
  });

  it.skipIf(!poppler)('is tagged, and its structure tree carries headings, paragraphs, lists, tables and figures in order', async () => {
    const file = await write('full.pdf', await renderTaggedPdf(fullDocument()));
    const info = (await run('pdfinfo', [file])).stdout;
    expect(info).toMatch(/^Tagged:\s+yes$/m);
    expect(info).toMatch(/^Title:\s+Annual <Report> & "Review"$/m);
    const struct = (await run('pdfinfo', ['-struct-text', file])).stdout;
    const top = struct
      .split('\n')
      .filter((l) => /^ {2}[A-Z]/.test(l))
      .map((l) => l.trim().split(' ')[0]);
    expect(top).toEqual(['H1', 'P', 'H2', 'L', 'Table', 'Figure', 'Caption', 'H2', 'Formula', 'Formula', 'H3', 'BlockQuote', 'Code', 'P', 'H2', 'Note']);
    expect(struct).toMatch(/^ {4}LI/m);
    expect(struct).toMatch(/^ {6}Lbl/m);
    expect(struct).toMatch(/^ {6}LBody/m);
    // The nested list sits in its item's body.
    expect(struct).toMatch(/^ {6}LBody \(block\)\n {8}"Fourth item"\n {8}L \(block\)\n {10}LI/m);
    expect(struct).toMatch(/^ {6}TH/m);
    expect(struct).toMatch(/^ {6}TD/m);
    expect(struct).toContain('"Annual report"');
    expect(struct).toContain('"Revenue"');
    // Links are Link elements holding their annotation (OBJR), inside their paragraph.
    expect(struct).toMatch(/^ {2}P \(block\)\n(?: {4}".*"\n)* {4}Link/m);
    const body = pdfBody(await renderTaggedPdf(fullDocument()));
    expect(body).toMatch(/\/S \/Link\n\/Alt \(link\)[^>]*\/Type \/OBJR/);
    // Language changes are Spans with their Lang.
    expect(body).toMatch(/\/S \/Span\n\/Lang \(fr\)/);
    expect(body).toMatch(/\/S \/Span\n\/Lang \(ar\)/);
    // The figure's alt text is in the tree.
    expect(body).toMatch(/\/S \/Figure\n\/Alt \(A red square\)/);
    // Header cells carry their scope and spans as table attributes.
    const attrs = (await run('pdfinfo', ['-struct', file])).stdout;
    expect(attrs).toMatch(/TH:\n\s+\/Scope \/Column\n\s+TH:\n\s+\/Scope \/Column\n\s+\/ColSpan 2/);
    expect(attrs).toMatch(/TH:\n\s+\/Scope \/Row\n\s+\/RowSpan 2/);
    // Headings to level 3 are bookmarks.
    expect(body).toMatch(/\/Outlines \d+ 0 R/);
    for (const title of ['Annual report', 'Highlights', 'Methods', 'Details', 'Results']) expect(body).toContain(`/Title (${title})`);
  });

  it.skipIf(!poppler)('uses the title as H1 when the document has no leading level-1 heading, and pages its text', async () => {
    const blocks: Block[] = [{ kind: 'heading', page: 1, level: 3, content: [t('Section')] }];
    for (let i = 0; i < 120; i++) blocks.push({ kind: 'paragraph', page: 1, content: [t(`Paragraph ${i} `.repeat(30))] });
    const doc: ConvertedDocument = { meta: { title: 'Long one', lang: 'de', pageCount: 1, tagged: false, sourceName: 'l.pdf' }, pages: [page(1, blocks)] };
    const file = await write('long.pdf', await renderTaggedPdf(doc));
    const info = (await run('pdfinfo', [file])).stdout;
    expect(Number(/^Pages:\s+(\d+)$/m.exec(info)?.[1])).toBeGreaterThan(5);
    const struct = (await run('pdfinfo', ['-struct-text', file])).stdout;
    const top = struct
      .split('\n')
      .filter((l) => /^ {2}[A-Z]/.test(l))
      .map((l) => l.trim().split(' ')[0]);
    expect(top.slice(0, 3)).toEqual(['H1', 'H2', 'P']);
    expect(top.filter((x) => x === 'P')).toHaveLength(120);
    // Running headers and page numbers are artifacts: not in the tree's text.
    const text = (await run('pdftotext', [file, '-'])).stdout;
    expect(text).toContain('Paragraph 119');
    // The running header is drawn on every page but, as an artifact, only the H1 carries the title in the tree.
    expect(text.split('Long one').length - 1).toBeGreaterThan(5);
    expect(struct.split('"Long one"').length - 1).toBe(1);
  });

  it.skipIf(!poppler)('figure pictures keep every pixel: RGB and grey PNGs embedded as they are, one with alpha through pdfkit', async () => {
    const width = 5;
    const height = 3;
    const rgba = new Uint8Array(width * height * 4).map((_, i) => (i % 4 === 3 ? 255 : (i * 37) % 256));
    const grey = Buffer.from(Array.from({ length: width * height }, (_, i) => (i * 53) % 256));
    const png = (colourType: number, channels: number, pixels: Uint8Array) => {
      const rows = Buffer.concat(
        Array.from({ length: height }, (_, y) => Buffer.concat([Buffer.from([0]), pixels.subarray(y * width * channels, (y + 1) * width * channels)])),
      );
      const header = Buffer.from([0, 0, 0, width, 0, 0, 0, height, 8, colourType, 0, 0, 0]);
      return Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', header), pngChunk('IDAT', deflateSync(rows)), pngChunk('IEND', Buffer.alloc(0))]);
    };
    const figure = (bytes: Buffer, alt: string): Block => ({
      kind: 'figure',
      page: 1,
      image: { mime: 'image/png', base64: bytes.toString('base64'), width, height },
      alt,
      decorative: false,
      needsAlt: false,
    });
    const doc: ConvertedDocument = {
      meta: { title: 'Pictures', lang: 'en', pageCount: 1, tagged: false, sourceName: 'pictures.pdf' },
      pages: [page(1, [figure(encodeRgbPng(rgba, width, height), 'colour'), figure(png(0, 1, grey), 'grey'), figure(png(6, 4, rgba), 'with alpha')])],
    };
    const file = await write('pictures.pdf', await renderTaggedPdf(doc));
    const prefix = path.join(dir, 'pictures');
    await run('pdfimages', [file, prefix]);
    const netpbm = async (name: string) => {
      const bytes = await readFile(`${prefix}-${name}`);
      // P6 or P5, width, height, maxval, each followed by one whitespace byte, then the samples
      const header = /^(P[56])\s+(\d+)\s+(\d+)\s+255\s/.exec(bytes.toString('latin1', 0, 40))!;
      return { kind: header[1], size: [Number(header[2]), Number(header[3])], samples: bytes.subarray(header[0].length) };
    };
    const rgb = Buffer.from(rgba.filter((_, i) => i % 4 !== 3));
    expect(await netpbm('000.ppm')).toEqual({ kind: 'P6', size: [width, height], samples: rgb });
    // pdfimages writes grey pictures as RGB too
    expect(await netpbm('001.ppm')).toEqual({ kind: 'P6', size: [width, height], samples: Buffer.from([...grey].flatMap((v) => [v, v, v])) });
    // the alpha channel is split into a soft mask beside the colour
    expect(await netpbm('002.ppm')).toEqual({ kind: 'P6', size: [width, height], samples: rgb });
    expect((await netpbm('003.ppm')).samples).toEqual(Buffer.alloc(width * height * 3, 255));
  });

  it('never throws on hostile content: CJK, Arabic, control characters, broken images, huge tables, odd levels', async () => {
    const wide = Array.from({ length: 60 }, (_, i) => ({ header: i === 0, content: [t(`c${i} 漢字`)] }));
    const doc: ConvertedDocument = {
      meta: { title: '\u0000\u0007标题', lang: 'zh', pageCount: 1, tagged: false, sourceName: 'x.pdf' },
      pages: [
        page(1, [
          { kind: 'heading', page: 1, level: 9 as never, content: [t('中文标题 \ud800 ')] },
          { kind: 'paragraph', page: 1, content: [t('عربي \u202e mixed 日本語 😀\u0001'), { kind: 'link', href: 'javascript:x', children: [] }] },
          {
            kind: 'figure',
            page: 1,
            image: { mime: 'image/png', base64: 'not-base64!!', width: 0, height: -5 },
            alt: 'broken',
            decorative: false,
            needsAlt: false,
          },
          { kind: 'figure', page: 1, image: { mime: 'image/jpeg', base64: 'AAAA', width: 10000, height: 10000 }, decorative: true, needsAlt: false },
          { kind: 'table', page: 1, rows: [wide, [], [{ header: false, rowSpan: 99, colSpan: 99, content: [] }]] },
          { kind: 'list', page: 1, ordered: true, items: [] },
          { kind: 'formula', page: 1, text: '', display: false },
          { kind: 'code', page: 1, text: '\t'.repeat(10) + 'x'.repeat(5000) },
        ]),
      ],
    };
    const pdf = await renderTaggedPdf(doc);
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    if (poppler) {
      const file = await write('hostile.pdf', pdf);
      expect((await run('pdfinfo', [file])).stdout).toMatch(/^Tagged:\s+yes$/m);
    }
  });
});

function pdfBody(pdf: Buffer): string {
  return pdf.toString('latin1');
}
