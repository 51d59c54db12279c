import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCliArgs, readAltFile, UsageError } from '../../server/conversion/cli/convert-files.ts';
import { altFromCaption, describePage, descriptionsFromAltFile, pageFigures } from '../../server/conversion/figures.ts';
import type { Block, ConvertedDocument } from '../../server/conversion/model.ts';
import { openDocumentRender } from '../../server/conversion/render/stream.ts';
import { page, PNG_BASE64 } from './render-fixture.ts';

/** Figures by id, alt text from captions, stored descriptions applied when rendering, and the CLI's --alt file. */

const t = (text: string) => ({ kind: 'text' as const, text });
const image = { mime: 'image/png' as const, base64: PNG_BASE64, width: 2, height: 2 };
const figure = (extra: Partial<Extract<Block, { kind: 'figure' }>> = {}): Block => ({
  kind: 'figure',
  page: 1,
  image,
  decorative: false,
  needsAlt: true,
  ...extra,
});

function document(): ConvertedDocument {
  return {
    meta: { title: 'Rainfall', lang: 'en', pageCount: 2, tagged: false, sourceName: 'rain.pdf' },
    pages: [
      page(1, [
        { kind: 'paragraph', page: 1, content: [t('Rain fell mostly in spring.')] },
        figure({ caption: [t('Figure 1: Monthly rainfall at the three stations, 2019–2024. Bars show the mean.')] }),
        { kind: 'paragraph', page: 1, content: [t('The wettest month was April.')] },
        figure(),
      ]),
      page(2, [{ kind: 'blockquote', page: 2, children: [figure({ page: 2 })] }]),
    ],
  };
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'folio-figures-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function render(doc: ConvertedDocument, figures?: Map<string, { alt: string } | { decorative: true }>) {
  const target = { dir: await mkdtemp(path.join(dir, 'r-')), baseName: 'rain' };
  const rendering = openDocumentRender(doc.meta, target, { figures });
  for (const p of doc.pages) await rendering.add(p);
  const files = await rendering.finish();
  return { ...files, html: await readFile(files.html, 'utf8'), pdf: await readFile(files.taggedPdf!) };
}

describe('figures', () => {
  it('numbers figures per page in reading order, nested ones included, with the text around them', () => {
    const [first, second] = document().pages.map(pageFigures);
    expect(first!.map((entry) => entry.id)).toEqual(['p1-1', 'p1-2']);
    expect(first![0]!.nearbyText).toBe('Rain fell mostly in spring. … The wettest month was April.');
    expect(second!.map((entry) => entry.id)).toEqual(['p2-1']);
  });

  it('makes a short alt from a caption: its first sentence without the figure label', () => {
    expect(altFromCaption([t('Figure 1: Monthly rainfall at the three stations, 2019–2024. Bars show the mean.')])).toBe(
      'Monthly rainfall at the three stations, 2019–2024',
    );
    expect(altFromCaption([t('Fig. 2.3 – Map of the basin')])).toBe('Map of the basin');
    expect(altFromCaption([t('Figure 4.')])).toBeUndefined();
    expect(altFromCaption([t(`Figure 5: ${'word '.repeat(60)}`)])!.length).toBeLessThanOrEqual(126);
  });

  it('leaves author and model alt text alone and describes only what nobody described', () => {
    const described = describePage(
      page(1, [figure({ alt: 'Author alt', caption: [t('Figure 1: Caption')] }), figure({ caption: [t('Figure 2: Caption two')] })]),
    );
    expect(described.blocks.map((block) => block.kind === 'figure' && block.alt)).toEqual(['Author alt', 'Caption two']);
  });

  it('fails the audit on an undescribed figure only, lists it, and passes once it is described or marked decorative', async () => {
    const before = await render(document());
    expect(before.report.wcagStatus).toBe('failed');
    expect(before.report.figuresNeedingAlt).toEqual([
      { id: 'p1-2', page: 1 },
      { id: 'p2-1', page: 2 },
    ]);
    // the captioned figure needs nothing: its caption named it, and stays visible
    expect(before.html).toContain('alt="Monthly rainfall at the three stations, 2019–2024"');
    expect(before.html).toContain('<figcaption>Figure 1: Monthly rainfall');

    const after = await render(
      document(),
      new Map([
        ['p1-2', { alt: 'Line chart: April is the wettest month' }],
        ['p2-1', { decorative: true as const }],
      ]),
    );
    expect(after.report.wcagStatus).toBe('passed');
    expect(after.report.figuresNeedingAlt).toEqual([]);
    expect(after.html).toContain('alt="Line chart: April is the wettest month"');
    expect(after.html).not.toContain('data-needs-alt');
    expect(after.pdf.toString('latin1')).toContain('(Line chart: April is the wettest month)');
  });

  it('reads an --alt file of figure ids to descriptions, and names what is wrong with a bad one', async () => {
    expect(descriptionsFromAltFile({ 'p1-2': 'A chart', 'p2-1': { decorative: true }, 'p3-1': { alt: 'A map' } })).toEqual(
      new Map<string, unknown>([
        ['p1-2', { alt: 'A chart' }],
        ['p2-1', { decorative: true }],
        ['p3-1', { alt: 'A map' }],
      ]),
    );
    const command = parseCliArgs(['convert', 'a.pdf', '--alt', 'alt.json'], dir);
    expect(command).toMatchObject({ command: 'convert', alt: path.join(dir, 'alt.json') });
    const bad = path.join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ figure1: 'x' }));
    await expect(readAltFile(bad)).rejects.toThrow(UsageError);
    await expect(readAltFile(bad)).rejects.toThrow(/figure1|figure id/);
    await writeFile(bad, '{ not json');
    await expect(readAltFile(bad)).rejects.toThrow(/not JSON/);
    await expect(readAltFile(path.join(dir, 'missing.json'))).rejects.toThrow(/no file/);
    await writeFile(bad, JSON.stringify({ 'p1-1': { alt: '' } }));
    await expect(readAltFile(bad)).rejects.toThrow(UsageError);
  });
});
