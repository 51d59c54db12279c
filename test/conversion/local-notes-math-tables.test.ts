import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertLocalPage, inspectDocument, openPdf } from '../../server/conversion/backends/local/index.ts';
import type { Block, Inline, PageResult } from '../../server/conversion/model.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';

/** Footnotes, formula TeX and ruled tables from the local backend, on corpus pages and PDFs drawn here. */

async function convertBytes(bytes: Uint8Array, name: string, pages?: number[]): Promise<PageResult[]> {
  const meta = await inspectDocument(bytes, name);
  const doc = await openPdf(bytes);
  try {
    const results: PageResult[] = [];
    for (const page of pages ?? Array.from({ length: meta.pageCount }, (_, index) => index + 1)) {
      results.push(await convertLocalPage(doc, page, { docLang: meta.lang, tagged: meta.tagged, ocr: false }));
    }
    return results;
  } finally {
    await doc.loadingTask.destroy();
  }
}

const convert = (file: string, pages?: number[]) => convertBytes(new Uint8Array(readFileSync(path.join(CORPUS_DIR, file))), file, pages);

const text = (list: Inline[] | undefined): string =>
  (list ?? []).map((item) => ('children' in item ? text(item.children) : item.kind === 'footnoteRef' ? item.label : 'text' in item ? item.text : ' ')).join('');

/** Every footnote reference in a page's blocks, wherever it sits (paragraph, list item, table cell). */
function refsOf(blocks: Block[]): { id: string; label: string; before: string }[] {
  const found: { id: string; label: string; before: string }[] = [];
  const walk = (value: unknown) => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        if (item && typeof item === 'object' && (item as Inline).kind === 'footnoteRef') {
          const ref = item as Extract<Inline, { kind: 'footnoteRef' }>;
          found.push({ id: ref.id, label: ref.label, before: text(value.slice(0, index) as Inline[]) });
        } else walk(item);
      });
    } else if (value && typeof value === 'object') for (const child of Object.values(value)) walk(child);
  };
  walk(blocks);
  return found;
}

const footnotesOf = (blocks: Block[]) => blocks.filter((block): block is Extract<Block, { kind: 'footnote' }> => block.kind === 'footnote');

describe('footnotes on untagged pages', () => {
  it('turns the small "1)", "2)", "*" notes at the foot of korean-report-4pages.pdf p.1 into footnotes linked from their raised markers', async () => {
    const [page] = await convert('korean-report-4pages.pdf', [1]);
    const notes = footnotesOf(page!.blocks);
    expect(notes.map((note) => note.label)).toEqual(['1', '2', '*']);
    expect(text(notes[0]!.content)).toMatch(/^손해보험의 표준약관 규정에 따르면.*상해로 정의함$/);
    // "1) 한국표준…" inside note 2 is a list within that note, not a second note 1
    expect(text(notes[1]!.content)).toContain('1) 한국표준질병');
    const refs = refsOf(page!.blocks);
    expect(refs.map((ref) => ref.id)).toEqual([notes[0]!.id, notes[1]!.id]);
    expect(refs[0]!.before).toMatch(/상해$/);
    // the note text is no longer in any paragraph
    const paragraphs = page!.blocks.filter((block) => block.kind === 'paragraph').map((block) => text(block.kind === 'paragraph' ? block.content : []));
    expect(paragraphs.some((line) => line.includes('손해보험의 표준약관'))).toBe(false);
  });

  it('links every marker of korean-report-4pages.pdf p.2, including those in list items and after 」', async () => {
    const [page] = await convert('korean-report-4pages.pdf', [2]);
    const notes = footnotesOf(page!.blocks);
    expect(notes.map((note) => note.label)).toEqual(['3', '4', '5', '6', '7']);
    expect(new Set(refsOf(page!.blocks).map((ref) => ref.label))).toEqual(new Set(['3', '4', '5', '6', '7']));
  });

  it('keeps the imprint below the last note of korean-report-4pages.pdf p.4 out of that note', async () => {
    const [page] = await convert('korean-report-4pages.pdf', [4]);
    const [note] = footnotesOf(page!.blocks);
    expect(note!.label).toBe('10');
    expect(text(note!.content)).toMatch(/보험을 말함$/);
  });

  it('reads the raised "1" of geotopo-117-pages.pdf p.12 as a reference to the note at the foot of the page', async () => {
    const [page] = await convert('geotopo-117-pages.pdf', [12]);
    const [note] = footnotesOf(page!.blocks);
    expect(note).toMatchObject({ label: '1' });
    expect(text(note!.content)).toBe('Diese Metrik wird auch „französische Eisenbahnmetrik“ genannt.');
    expect(refsOf(page!.blocks)).toEqual([{ id: note!.id, label: '1', before: expect.stringMatching(/SNCF-Metrik$/) }]);
  });

  it('does not take exponents for references: R² on geotopo-117-pages.pdf p.114 stays text', async () => {
    const [page] = await convert('geotopo-117-pages.pdf', [114]);
    const refs = refsOf(page!.blocks);
    expect(footnotesOf(page!.blocks).map((note) => note.label)).toEqual(['2']);
    expect(refs.every((ref) => !/(^|\s)R$/.test(ref.before))).toBe(true);
  });
});
