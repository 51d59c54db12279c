import { z } from 'zod';
import type { Block, Inline, PageResult } from './model.ts';
import { blocksText } from './page-content.ts';

/**
 * Figures by a stable id, and the descriptions people give them. A figure's
 * id is `p<page>-<n>`: the n-th figure of its page in reading order (nested
 * ones in quotes and table cells included), so the same stored pages always
 * give the same ids and a description finds its figure again when the
 * document is rendered anew.
 */

/** What a person says about one figure: its text alternative, or that it only decorates. */
export type FigureDescription = { alt: string; decorative?: false } | { decorative: true; alt?: undefined };
export type FigureDescriptions = ReadonlyMap<string, FigureDescription>;

/** Longest text alternative a person may store: a description, not a document. */
export const MAX_ALT_CHARS = 2000;
const MAX_DESCRIBED_FIGURES = 10_000;

export const FigureIdSchema = z.string().regex(/^p[1-9]\d{0,5}-[1-9]\d{0,4}$/, 'a figure id is p<page>-<n>, e.g. p3-1');
const FigureDescriptionSchema = z.union([
  z.object({ alt: z.string().trim().min(1).max(MAX_ALT_CHARS) }).strict(),
  z.object({ decorative: z.literal(true) }).strict(),
]);

/**
 * An alt file (`folio convert --alt alt.json`): `{ "p3-1": "A bar chart of…",
 * "p4-2": { "decorative": true } }`; a bare string is the alt text.
 */
const AltFileSchema = z
  .record(FigureIdSchema, z.union([z.string().trim().min(1).max(MAX_ALT_CHARS), FigureDescriptionSchema]))
  .refine((record) => Object.keys(record).length <= MAX_DESCRIBED_FIGURES, `at most ${MAX_DESCRIBED_FIGURES} figures`);

export function descriptionsFromAltFile(json: unknown): Map<string, FigureDescription> {
  const parsed = AltFileSchema.parse(json);
  return new Map(Object.entries(parsed).map(([id, value]) => [id, typeof value === 'string' ? { alt: value } : (value as FigureDescription)]));
}

export type FigureBlock = Extract<Block, { kind: 'figure' }>;

export type PageFigure = {
  id: string;
  page: number;
  figure: FigureBlock;
  /** the page's text just before and just after the figure, for whoever describes it */
  nearbyText: string;
};

/** Longest alt text made from a caption: a short name for the picture, the caption itself stays visible. */
const CAPTION_ALT_CHARS = 125;
/** Nearby text given with a figure, on each side. */
const NEARBY_CHARS = 300;

function figureId(page: number, index: number): string {
  return `p${page}-${index}`;
}

/** Every figure of a page in reading order, with its id and the text around it. */
export function pageFigures(page: PageResult): PageFigure[] {
  const flat: (FigureBlock | string)[] = [];
  const visit = (blocks: Block[]) => {
    for (const block of blocks) {
      if (block.kind === 'figure') flat.push(block);
      else if (block.kind === 'blockquote') visit(block.children);
      else if (block.kind === 'table') {
        flat.push(blocksText([{ ...block, rows: [] }]));
        for (const row of block.rows) for (const cell of row) cell.blocks ? visit(cell.blocks) : flat.push(inlineWords(cell.content));
      } else flat.push(blocksText([block]));
    }
  };
  visit(page.blocks);
  const figures: PageFigure[] = [];
  for (const [index, entry] of flat.entries()) {
    if (typeof entry === 'string') continue;
    const text = (from: number, to: number) =>
      flat
        .slice(Math.max(0, from), to)
        .filter((item): item is string => typeof item === 'string')
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim();
    const before = text(index - 3, index);
    const after = text(index + 1, index + 4);
    figures.push({
      id: figureId(page.page, figures.length + 1),
      page: page.page,
      figure: entry,
      nearbyText: [before.slice(-NEARBY_CHARS), after.slice(0, NEARBY_CHARS)].filter(Boolean).join(' … '),
    });
  }
  return figures;
}

function inlineWords(content: Inline[]): string {
  return blocksText([{ kind: 'paragraph', page: 0, content }]);
}

/**
 * A short alt text from a printed caption: its first sentence without the
 * "Figure 3:" label, cut at a word. Undefined when the caption is only a label.
 */
export function altFromCaption(caption: Inline[] | undefined): string | undefined {
  const text = inlineWords(caption ?? [])
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/^(figure|fig\.?|abbildung|abb\.?|chart|graph|diagram|image|photo|plate|illustration|map|scheme)\s*[\dIVXivx]+[a-z]?(\.\d+)*\s*[:.–—-]?\s*/i, '');
  const sentence = /^(.+?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
  const words = sentence.replace(/[.\s]+$/, '');
  if (!/\p{L}{2,}/u.test(words)) return undefined;
  if (words.length <= CAPTION_ALT_CHARS) return words;
  return `${words.slice(0, CAPTION_ALT_CHARS).replace(/\s+\S*$/, '')}…`;
}

/**
 * The page as it is rendered: each figure with the description a person
 * stored for it, else, when nobody (author, model, person) gave it alt text,
 * with a short alt from its caption. Returns a copy when anything changed.
 */
export function describePage(page: PageResult, descriptions?: FigureDescriptions): PageResult {
  const byFigure = new Map(pageFigures(page).map((entry) => [entry.figure, entry.id]));
  if (byFigure.size === 0) return page;
  const describe = (figure: FigureBlock): FigureBlock => {
    const stored = descriptions?.get(byFigure.get(figure)!);
    if (stored?.decorative) return { ...figure, alt: undefined, decorative: true, needsAlt: false };
    if (stored) return { ...figure, alt: stored.alt, decorative: false, needsAlt: false };
    if (figure.alt?.trim() || figure.decorative) return figure;
    const alt = altFromCaption(figure.caption);
    return alt ? { ...figure, alt, needsAlt: false } : figure;
  };
  const walk = (blocks: Block[]): Block[] =>
    blocks.map((block) => {
      if (block.kind === 'figure') return describe(block);
      if (block.kind === 'blockquote') return { ...block, children: walk(block.children) };
      if (block.kind === 'table' && block.rows.some((row) => row.some((cell) => cell.blocks))) {
        return { ...block, rows: block.rows.map((row) => row.map((cell) => (cell.blocks ? { ...cell, blocks: walk(cell.blocks) } : cell))) };
      }
      return block;
    });
  return { ...page, blocks: walk(page.blocks) };
}
