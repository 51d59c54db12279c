import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { convertLocalPage, inspectDocument, openPdf } from '../../server/conversion/backends/local/index.ts';
import { formulaToTex, isFormulaLine, looksLikeMath } from '../../server/conversion/backends/local/tex.ts';
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

describe('footnotes on tagged pages', () => {
  it('makes the /Note of verapdf-ua1-7.1-list.pdf a footnote labelled by its Lbl, referenced from the list item link "1"', async () => {
    const [page] = await convert('verapdf-ua1-7.1-list.pdf', [1]);
    const notes = footnotesOf(page!.blocks);
    expect(notes).toHaveLength(1);
    expect(notes[0]!.label).toBe('1');
    expect(text(notes[0]!.content)).toMatch(/^Artifacts may also be used/);
    const list = page!.blocks.find((block) => block.kind === 'list');
    expect(refsOf(list ? [list] : [])).toEqual([{ id: notes[0]!.id, label: '1', before: 'Artifacts' }]);
  });

  it('keeps the paragraph around a LaTeX footnote whole, puts the note after it, and leaves the TOC numbers alone (latex-tagged-two-column.pdf p.1)', async () => {
    const [page] = await convert('latex-tagged-two-column.pdf', [1]);
    const notes = footnotesOf(page!.blocks);
    expect(notes.map((note) => note.label)).toEqual(['1']);
    const refs = refsOf(page!.blocks);
    expect(refs).toHaveLength(1);
    expect(refs[0]!.before).toMatch(/heading rows of tables\.$/);
    const index = page!.blocks.indexOf(notes[0]!);
    const before = page!.blocks[index - 1]!;
    expect(before.kind === 'paragraph' && text(before.content)).toMatch(/heading rows of tables\.1 The document just uses/);
  });

  it('reads a LaTeX float wrapped in /Note (latex-tagged-two-column.pdf p.2) as its figure, not as a footnote', async () => {
    const [page] = await convert('latex-tagged-two-column.pdf', [2]);
    expect(page!.blocks.some((block) => block.kind === 'figure')).toBe(true);
    expect(footnotesOf(page!.blocks).every((note) => !/Larger image/.test(text(note.content)))).toBe(true);
  });
});

describe('TeX from the text of a formula', () => {
  it('maps Greek letters, operators, relations, Unicode scripts, roots and plain fractions', () => {
    expect(formulaToTex('α + β ≤ γ')).toBe('\\alpha + \\beta \\leq \\gamma');
    expect(formulaToTex('x₁ + x₂ = 1/2')).toBe('x_{1} + x_{2} = \\frac{1}{2}');
    expect(formulaToTex('√(a² + b²) ≠ ∞')).toBe('\\sqrt{a^{2} + b^{2}} \\neq \\infty');
    expect(formulaToTex('∑ xᵢ ∈ ℝ')).toBe('\\sum x_{i} \\in \\mathbb{R}');
    expect(formulaToTex('(a+b)/c → 0')).toBe('\\frac{a+b}{c} \\to 0');
    expect(formulaToTex('sin(θ) ≥ 0')).toBe('\\sin (\\theta) \\geq 0');
  });

  it('takes scripts from the layout only where they touch their base', () => {
    expect(formulaToTex([{ text: 'e' }, { text: 'iπ', script: 'sup' }, { text: ' = −1' }])).toBe('e^{i\\pi} = -1');
    // a smaller glyph after a space is not a script of what precedes it
    expect(formulaToTex([{ text: 'α' }, { text: '1', script: 'sub' }, { text: ' ≤ ' }, { text: 'α', script: 'sup' }, { text: '2', script: 'sub' }])).toBe('\\alpha_{1} \\leq \\alpha_{2}');
  });

  it('repairs the pdfTeX pieces of ↦ and long arrows', () => {
    expect(formulaToTex([{ text: 'x ' }, { text: '7' }, { text: '→ y' }])).toBe('x \\mapsto y');
    expect(formulaToTex('m −−−−→ ∞')).toBe('m \\longrightarrow \\infty');
  });

  it('gives no TeX for prose, for other scripts, or for text it cannot read for certain', () => {
    expect(looksLikeMath('Area of a Triangle')).toBe(false);
    expect(formulaToTex('Area of a Triangle')).toBeUndefined();
    expect(formulaToTex('The value is larger than the other = obviously')).toBeUndefined();
    expect(formulaToTex('코로나 = 1')).toBeUndefined();
    expect(formulaToTex('x_1 = 2')).toBeUndefined();
    expect(isFormulaLine('Sei X = R und d die Metrik')).toBe(false);
    expect(isFormulaLine('d(x, y) > 0 ⇒ ∃ε > 0')).toBe(true);
  });

  it('keeps the alt text of verapdf-ua1-7.7-formula.pdf ("Area of a Triangle") as text without TeX', async () => {
    const [page] = await convert('verapdf-ua1-7.7-formula.pdf', [1]);
    const formula = page!.blocks.find((block) => block.kind === 'formula');
    expect(formula).toMatchObject({ text: 'Area of a Triangle' });
    expect(formula && 'tex' in formula ? formula.tex : undefined).toBeUndefined();
  });

  it('makes the display formulas of geotopo-117-pages.pdf p.12 formula blocks with TeX and their text, and leaves its prose alone', async () => {
    const [page] = await convert('geotopo-117-pages.pdf', [12]);
    const formulas = page!.blocks.filter((block): block is Extract<Block, { kind: 'formula' }> => block.kind === 'formula');
    const separation = formulas.find((formula) => formula.text.startsWith('d(x, y) > 0'));
    expect(separation).toMatchObject({ display: true, text: 'd(x, y) > 0 ⇒ ∃ε > 0 : Bε(x) ∩ Bε(y) = ∅' });
    expect(separation!.tex).toBe('d(x, y) > 0 \\Rightarrow \\exists \\varepsilon > 0 : B_{\\varepsilon}(x) \\cap B_{\\varepsilon}(y) = \\emptyset');
    // every formula block carries TeX, and no formula holds a word of running text
    expect(formulas.every((formula) => typeof formula.tex === 'string' && !/\p{L}{3,}/u.test(formula.text.replace(/\b(sin|cos|log|lim)\b/g, '')))).toBe(true);
    expect(page!.blocks.some((block) => block.kind === 'paragraph' && /französische|Metrik/.test(text(block.content)))).toBe(true);
  });
});
