import type { Block, Inline, ListBlock } from '../../model.ts';
import { joinLines, runsToInlines, stripPrefix, type Run } from './inline.ts';
import { linkReferences, type Footnotes } from './page-footnotes.ts';
import type { Segment } from './segments.ts';
import { formulaToTex, isFormulaLine } from './tex.ts';

/**
 * The last layout pass: the segments of each column, in reading order, become
 * blocks. Lines of one paragraph join into one paragraph (a gap wider than
 * the column's line pitch, an indent or a size change starts the next);
 * bigger lines are headings; bullet and number glyphs open list items; a
 * ruled table, an aligned table or a footnote takes the place of its first
 * segment; a line of mathematics set off from the text is a display formula.
 */

/** Where a block starts on the page (its first line, page space): lets figures be placed among the text. */
export type BlockAnchor = { x: number; right: number; top: number };

export type BlockContext = {
  page: number;
  body: number;
  /** every segment of the page, for the page's heading sizes */
  all: Segment[];
  /** placeholders of ruled tables in the flow, with their table */
  ruledAt: Map<Segment, Block & { kind: 'table' }>;
  /** per column, the segments of aligned tables (the table's block on its first segment) */
  tablesByColumn: Map<Segment, { block?: Block }>[];
  notes: Footnotes;
};

const BULLET = /^[•◦▪▫■□●○‣⁃∙·\-–—*]\s+/u;
const ENUMERATOR = /^(\(?\d{1,3}[.)]|\(?[a-z][.)]|\(?[ivx]{1,5}[.)])\s+/i;
const TABLE_CAPTION = /^(table|tabelle|tableau|tabla|tab\.)\s*[\dIVX]+/i;

export function buildBlocks(ordered: Segment[][], context: BlockContext): { blocks: Block[]; anchors: Map<Block, BlockAnchor> } {
  const { page, body, ruledAt, notes, tablesByColumn } = context;
  // a heading is words: a big display formula ("a + b = c") or a lone symbol is not one
  const looksLikeHeading = (segment: Segment) => {
    if (segment.size < body * 1.15 || segment.text.length >= 200) return false;
    const letters = (segment.text.match(/\p{L}/gu) ?? []).length;
    return /\p{L}{2,}/u.test(segment.text) && letters >= segment.text.replace(/\s/g, '').length * 0.6;
  };
  const headingSizes = [...new Set(context.all.filter(looksLikeHeading).map((segment) => Math.round(segment.size)))].sort((a, b) => b - a);
  const levelOf = (size: number): 1 | 2 | 3 | 4 | 5 | 6 => Math.min(6, Math.max(1, headingSizes.indexOf(Math.round(size)) + 1)) as 1 | 2 | 3 | 4 | 5 | 6;

  const blocks: Block[] = [];
  const anchors = new Map<Block, BlockAnchor>();
  const place = (block: Block, first: Segment) => {
    blocks.push(block);
    anchors.set(block, { x: first.x, right: first.right, top: first.y + first.size });
  };
  for (const [columnIndex, column] of ordered.entries()) {
    let paragraph: { runs: Run[]; first: Segment; last: Segment; text: string } | undefined;
    // the last item's runs are kept so a continuation line keeps its links and footnote references
    let list: { block: ListBlock; indent: number; first: Segment; last: Segment; runs: Run[] } | undefined;
    const flushParagraph = () => {
      if (paragraph) place({ kind: 'paragraph', page, content: runsToInlines(paragraph.runs) }, paragraph.first);
      paragraph = undefined;
    };
    const flushList = () => {
      if (list) place(list.block, list.first);
      list = undefined;
    };
    let previous: Segment | undefined;
    const pitch = linePitch(column);
    const tables = tablesByColumn[columnIndex]!;
    for (const segment of column) {
      const ruledTable = ruledAt.get(segment);
      if (ruledTable) {
        flushParagraph();
        flushList();
        const last = blocks.at(-1);
        if (last?.kind === 'paragraph' && TABLE_CAPTION.test(textOf(last.content))) {
          blocks.pop();
          ruledTable.caption = last.content;
        }
        place(ruledTable, segment);
        previous = undefined;
        continue;
      }
      const note = notes.bySegment.get(segment);
      if (note) {
        flushParagraph();
        flushList();
        if (note.block) place(note.block, segment);
        previous = segment;
        continue;
      }
      segment.runs = linkReferences(segment.runs, notes.idByLabel);
      const table = tables.get(segment);
      if (table) {
        flushParagraph();
        flushList();
        if (table.block) {
          // "Table 1: …" just above the table is its caption
          const last = blocks.at(-1);
          if (last?.kind === 'paragraph' && TABLE_CAPTION.test(textOf(last.content)) && table.block.kind === 'table') {
            blocks.pop();
            table.block.caption = last.content;
          }
          place(table.block, segment);
        }
        previous = segment;
        continue;
      }
      if (isDisplayFormula(segment, column, previous)) {
        flushParagraph();
        flushList();
        const tex = formulaToTex(
          segment.runs.map((run) => ({ text: run.text, ...(run.sup ? { script: 'sup' as const } : run.sub ? { script: 'sub' as const } : {}) })),
        );
        if (tex) {
          place({ kind: 'formula', page, text: segment.text, tex, display: true }, segment);
          previous = segment;
          continue;
        }
      }
      const gap = previous ? previous.y - segment.y : 0;
      const size = Math.max(segment.size, previous?.size ?? 0);
      // a paragraph break is a gap clearly wider than the column's usual line pitch (Korean reports set lines 1.7 apart)
      const usual = pitch.get(Math.round(size * 2) / 2);
      const lineGap = usual ? Math.max(size * 1.3, usual * 1.3) : size * 1.6;
      const isHeading = looksLikeHeading(segment);
      if (isHeading) {
        flushParagraph();
        flushList();
        const last = blocks.at(-1);
        // a heading wrapped over two lines is one heading
        if (last?.kind === 'heading' && previous && Math.abs(previous.size - segment.size) < 0.5 && gap < lineGap) {
          last.content = runsToInlines([{ text: `${textOf(last.content)}\n` }, { text: segment.text }]);
        } else {
          place({ kind: 'heading', page, level: levelOf(segment.size), content: runsToInlines(segment.runs) }, segment);
        }
        previous = segment;
        continue;
      }
      const marker = BULLET.exec(segment.text) ?? ENUMERATOR.exec(segment.text);
      if (marker) {
        flushParagraph();
        const ordered = !BULLET.test(segment.text);
        const itemRuns = stripPrefix(segment.runs, marker[0].length);
        const content = runsToInlines(itemRuns);
        if (!list || list.block.ordered !== ordered || gap > lineGap * 1.5) {
          flushList();
          const start = ordered ? Number.parseInt(marker[1]!.replace(/\D/g, ''), 10) : undefined;
          list = {
            block: { kind: 'list', page, ordered, ...(start && start !== 1 ? { start } : {}), items: [] },
            indent: segment.x,
            first: segment,
            last: segment,
            runs: [],
          };
        }
        list.block.items.push({ content });
        list.runs = [...itemRuns];
        list.last = segment;
        previous = segment;
        continue;
      }
      if (list && gap < lineGap && segment.x > list.indent + 2) {
        // continuation of the last item (hanging indent)
        const item = list.block.items.at(-1)!;
        list.runs.push({ text: '\n' }, ...segment.runs);
        item.content = runsToInlines(list.runs);
        previous = segment;
        continue;
      }
      flushList();
      const startsNew =
        !paragraph ||
        gap > lineGap ||
        gap < 0 ||
        Math.abs(segment.size - paragraph.last.size) > 1 ||
        // a first-line indent opens a paragraph
        (segment.x > paragraph.last.x + segment.size * 0.8 && /[.!?:”"]$/.test(paragraph.text));
      if (startsNew) {
        flushParagraph();
        paragraph = { runs: [...segment.runs], first: segment, last: segment, text: segment.text };
      } else {
        const last = paragraph!.runs.at(-1);
        const first = segment.runs[0];
        if (last && first && /\p{L}-$/u.test(last.text) && /^\p{Ll}/u.test(first.text)) {
          last.text = last.text.slice(0, -1);
          paragraph!.runs.push(...segment.runs);
        } else {
          paragraph!.runs.push({ text: ' ', href: undefined }, ...segment.runs);
        }
        paragraph!.last = segment;
        paragraph!.text = joinLines(paragraph!.text, segment.text);
      }
      previous = segment;
    }
    flushParagraph();
    flushList();
  }
  return { blocks, anchors };
}

function textOf(list: Inline[]): string {
  return list.map((item) => (item.kind === 'text' || item.kind === 'code' ? item.text : 'children' in item ? textOf(item.children) : '')).join('');
}

/** The median distance between consecutive lines of the same size in a column, per size (rounded to half a point). */
function linePitch(column: Segment[]): Map<number, number> {
  const gapsBySize = new Map<number, number[]>();
  for (let index = 1; index < column.length; index++) {
    const a = column[index - 1]!;
    const b = column[index]!;
    if (Math.abs(a.size - b.size) > 0.6) continue;
    const gap = a.y - b.y;
    if (gap < a.size * 0.8 || gap > a.size * 3) continue;
    const key = Math.round(a.size * 2) / 2;
    const list = gapsBySize.get(key) ?? [];
    list.push(gap);
    gapsBySize.set(key, list);
  }
  const pitch = new Map<number, number>();
  for (const [size, gaps] of gapsBySize) {
    if (gaps.length < 2) continue;
    gaps.sort((x, y) => x - y);
    pitch.set(size, gaps[Math.floor(gaps.length / 2)]!);
  }
  return pitch;
}

/**
 * A display formula: a line of mathematics alone on its row, set off from
 * the text (indented from the column's left edge, or after a line ending in
 * a colon). A formula line flush with the text may be the end of a sentence.
 */
function isDisplayFormula(segment: Segment, column: Segment[], previous: Segment | undefined): boolean {
  // an enumerated line ("(i) d(A, B) = …") stays a list item
  if (!isFormulaLine(segment.text) || BULLET.test(segment.text) || ENUMERATOR.test(segment.text) || /^\(?[ivx]{1,4}\)/.test(segment.text)) return false;
  if (column.some((other) => other !== segment && Math.abs(other.y - segment.y) < 1)) return false;
  const left = Math.min(...column.map((other) => other.x));
  return segment.x >= left + segment.size * 1.5 || (previous !== undefined && /:$/.test(previous.text));
}
