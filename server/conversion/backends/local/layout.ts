import type { Block, Inline, ListBlock } from '../../model.ts';
import { joinLines, runsToInlines, type Run } from './inline.ts';
import { edgeKey, type EdgeLines } from './running-heads.ts';
import type { TextItem } from './text-layer.ts';
import type { Mark, Rule } from './drawing.ts';
import { columnsOf, findRuledTables } from './ruled-tables.ts';
import { formulaToTex, isFormulaLine } from './tex.ts';
import { findVectorFigures, type VectorFigure } from './vector-figures.ts';

/**
 * An untagged page's structure inferred from geometry: items grouped into
 * line segments, segments into columns (a vertical gutter most lines do not
 * cross), columns read left before right inside bands cut by full-width
 * lines, then paragraphs, headings (bigger than body text) and lists
 * (bullet or number glyphs).
 */

export type Segment = { x: number; right: number; y: number; size: number; font: string; text: string; runs: Run[] };
export type LinkArea = { href: string; rect: [number, number, number, number] };
/** Where a block starts on the page (its first line, page space): lets figures be placed among the text. */
export type BlockAnchor = { x: number; right: number; top: number };
/** `figures`: regions drawn with vector paths, their text (labels) taken out of the blocks. */
export type Layout = { blocks: Block[]; multiColumn: boolean; artifacts: number; anchors: Map<Block, BlockAnchor>; figures: VectorFigure[] };

const BULLET = /^[•◦▪▫■□●○‣⁃∙·\-–—*]\s+/u;
const ENUMERATOR = /^(\(?\d{1,3}[.)]|\(?[a-z][.)]|\(?[ivx]{1,5}[.)])\s+/i;

export function buildSegments(items: TextItem[], links: LinkArea[]): Segment[] {
  const usable = items.filter((item) => !item.artifact && item.text !== '' && item.size > 0);
  usable.sort((a, b) => b.y - a.y || a.x - b.x);
  // 1. lines: items whose baselines are within half a line of each other (superscripts and subscripts join their line)
  const lines: { y: number; size: number; items: TextItem[] }[] = [];
  for (const item of usable) {
    const line = lines.at(-1);
    if (line && Math.abs(line.y - item.y) <= Math.max(2, Math.max(line.size, item.size) * 0.5)) {
      line.items.push(item);
      // the line's baseline and size are those of its biggest text, not of a superscript
      if (item.size > line.size && item.text.trim().length > 0) {
        line.size = item.size;
        line.y = item.y;
      }
    } else {
      lines.push({ y: item.y, size: item.size, items: [item] });
    }
  }
  // a superscript at the end of a word in one column can fall within half a line of the other column's baseline
  // above: it belongs to the line just below it, beside whose text it sits
  for (let index = 0; index + 1 < lines.length; index++) {
    const line = lines[index]!;
    const next = lines[index + 1]!;
    const moved = line.items.filter(
      (item) =>
        line.y - item.y > line.size * 0.3 &&
        item.size < line.size * 0.9 &&
        item.y - next.y > 0 &&
        item.y - next.y <= next.size * 0.6 &&
        next.items.some((other) => item.x >= other.x - next.size && item.x <= other.x + other.width + next.size),
    );
    if (moved.length === 0) continue;
    line.items = line.items.filter((item) => !moved.includes(item));
    next.items.push(...moved);
  }
  // 2. segments: a line cut where the horizontal gap is wider than a word space (column gutters, table cells)
  const segments: Segment[] = [];
  for (const line of lines) {
    line.items.sort((a, b) => a.x - b.x);
    let current: Segment | undefined;
    let longest = 0;
    for (const item of line.items) {
      // pdf.js writes a wide gap as a space item of that width: a cell or column boundary, not a word space
      if (item.text.trim() === '' && item.width > line.size * 1.1) {
        current = undefined;
        continue;
      }
      const gap = current ? item.x - current.right : 0;
      if (current && gap < Math.min(line.size, Math.max(item.size, line.size * 0.7)) * 0.9 && gap > -line.size) {
        const needsSpace = gap > item.size * 0.15 && !/\s$/.test(current.text) && !/^\s/.test(item.text);
        const text = (needsSpace ? ' ' : '') + item.text;
        current.text += text;
        current.right = Math.max(current.right, item.x + item.width);
        current.runs.push({ text, href: hrefAt(links, item), ...scriptOf(item, line) });
        // a segment's size is that of most of its text (a superscript or a drop cap must not set it)
        if (item.text.trim().length > longest) {
          longest = item.text.trim().length;
          current.size = item.size;
          current.font = item.font;
        }
        continue;
      }
      longest = item.text.trim().length;
      current = {
        x: item.x,
        right: item.x + item.width,
        y: line.y,
        size: item.size,
        font: item.font,
        text: item.text,
        runs: [{ text: item.text, href: hrefAt(links, item), ...scriptOf(item, line) }],
      };
      segments.push(current);
    }
  }
  for (const segment of segments) segment.text = segment.text.trim();
  return segments.filter((segment) => segment.text !== '');
}

/** A superscript: clearly above its line's baseline and smaller than its text; a subscript: below it and smaller. */
function scriptOf(item: TextItem, line: { y: number; size: number }): { sup?: true; sub?: true } {
  if (item.size >= line.size * 0.9 || item.text.trim() === '') return {};
  if (item.y - line.y > line.size * 0.2) return { sup: true };
  if (line.y - item.y > line.size * 0.1) return { sub: true };
  return {};
}

function hrefAt(links: LinkArea[], item: TextItem): string | undefined {
  const cx = item.x + item.width / 2;
  const cy = item.y + item.size * 0.3;
  for (const link of links) {
    const [x1, y1, x2, y2] = link.rect;
    if (cx >= Math.min(x1, x2) && cx <= Math.max(x1, x2) && cy >= Math.min(y1, y2) - 1 && cy <= Math.max(y1, y2) + 1) return link.href;
  }
  return undefined;
}

/** Body text size: the size carrying the most characters. */
export function bodySize(segments: Segment[]): number {
  const weight = new Map<number, number>();
  for (const segment of segments) {
    const key = Math.round(segment.size * 2) / 2;
    weight.set(key, (weight.get(key) ?? 0) + segment.text.length);
  }
  let best = 10;
  let bestWeight = -1;
  for (const [size, count] of weight) if (count > bestWeight) [best, bestWeight] = [size, count];
  return best;
}

/** Reading order: bands split by full-width lines; inside a band, the left column before the right. */
export function readingOrder(segments: Segment[], pageWidth: number): { ordered: Segment[][]; multiColumn: boolean } {
  if (segments.length < 6) return { ordered: [segments], multiColumn: false };
  // tables span the page like full-width lines: their column gaps are not a gutter
  const tableCells = findAlignedTables(segments, 0);
  const rowKey = (segment: Segment) => Math.round(segment.y);
  const tableRows = new Map<number, { x: number; right: number }>();
  for (const segment of tableCells.keys()) {
    const row = tableRows.get(rowKey(segment));
    tableRows.set(rowKey(segment), row ? { x: Math.min(row.x, segment.x), right: Math.max(row.right, segment.right) } : { x: segment.x, right: segment.right });
  }
  const spans: { x: number; right: number }[] = [...segments.filter((segment) => !tableCells.has(segment)), ...tableRows.values()];
  const left = Math.min(...segments.map((segment) => segment.x));
  const right = Math.max(...segments.map((segment) => segment.right));
  const findGutter = (list: { x: number; right: number }[]) => {
    let found: number | undefined;
    let bestCrossing = Infinity;
    for (let x = left + (right - left) * 0.3; x <= left + (right - left) * 0.7; x += 2) {
      const crossing = list.filter((span) => span.x < x - 1 && span.right > x + 1).length;
      const leftCount = list.filter((span) => span.right <= x + 1).length;
      const rightCount = list.filter((span) => span.x >= x - 1).length;
      if (leftCount >= 3 && rightCount >= 3 && crossing < bestCrossing) {
        bestCrossing = crossing;
        found = x;
      }
    }
    return found === undefined || bestCrossing > list.length * 0.2 ? undefined : found;
  };
  // a gutter that only exists between a table's columns is no gutter; otherwise tables do not change the columns
  const gutter = tableCells.size > 0 && findGutter(spans) === undefined ? undefined : findGutter(segments);
  if (gutter === undefined || right - left < pageWidth * 0.4) return { ordered: [segments], multiColumn: false };
  const g = gutter;
  const isWide = (segment: Segment) => segment.x < g - 1 && segment.right > g + 1;
  const ordered: Segment[][] = [];
  let band: Segment[] = [];
  const flushBand = () => {
    if (band.length === 0) return;
    const leftColumn = band.filter((segment) => segment.right <= g + 1);
    const rightColumn = band.filter((segment) => segment.x >= g - 1);
    if (leftColumn.length > 0) ordered.push(leftColumn);
    if (rightColumn.length > 0) ordered.push(rightColumn);
    band = [];
  };
  let wide: Segment[] = [];
  for (const segment of segments) {
    if (isWide(segment)) {
      flushBand();
      wide.push(segment);
    } else {
      if (wide.length > 0) ordered.push(wide);
      wide = [];
      band.push(segment);
    }
  }
  flushBand();
  if (wide.length > 0) ordered.push(wide);
  return { ordered, multiColumn: true };
}

export function layoutPage(
  segments: Segment[],
  options: {
    page: number;
    pageWidth: number;
    pageHeight: number;
    neighbours?: EdgeLines[];
    /** ruling lines drawn on the page (page space), for ruled tables */
    rules?: Rule[];
    /** font ids of bold fonts, for ruled tables' header rows */
    boldFonts?: Set<string>;
    /** painted paths (page space), for figures drawn without an image */
    marks?: Mark[];
  },
): Layout {
  const { page } = options;
  let artifacts = 0;
  // running heads and feet: a top or bottom line that recurs at the same edge of a nearby page
  if (options.neighbours && options.neighbours.length > 0 && segments.length > 4) {
    const tops = new Set(options.neighbours.flatMap((edges) => edges.top));
    const bottoms = new Set(options.neighbours.flatMap((edges) => edges.bottom));
    const ys = [...new Set(segments.map((segment) => Math.round(segment.y)))].sort((a, b) => b - a);
    const lineKey = (y: number) =>
      edgeKey(
        segments
          .filter((segment) => Math.round(segment.y) === y)
          .sort((a, b) => a.x - b.x)
          .map((segment) => segment.text)
          .join(' '),
      );
    const drop = new Set<number>();
    for (const y of ys.slice(0, 2)) if (tops.has(lineKey(y))) drop.add(y);
    for (const y of ys.slice(-2)) if (bottoms.has(lineKey(y))) drop.add(y);
    if (drop.size > 0) {
      const before = segments.length;
      segments = segments.filter((segment) => !drop.has(Math.round(segment.y)));
      artifacts += before - segments.length;
    }
  }
  if (segments.length === 0) return { blocks: [], multiColumn: false, artifacts, anchors: new Map(), figures: [] };
  // bare page numbers at the top or bottom are artifacts
  const top = Math.max(...segments.map((segment) => segment.y));
  const bottom = Math.min(...segments.map((segment) => segment.y));
  const kept = segments.filter((segment) => {
    const inBand = segment.y <= bottom + 1 || segment.y >= top - 1;
    if (inBand && segments.length > 1 && /^(page\s+)?[-–]?\s*(\d{1,4}|[ivxlc]{1,6})\s*[-–]?(\s*(of|\/)\s*\d+)?$/i.test(segment.text)) {
      artifacts++;
      return false;
    }
    return true;
  });
  const body = bodySize(kept);
  // a ruled table's text leaves the flow; a placeholder spanning the table keeps its place in the reading order
  const ruled = options.rules && options.rules.length > 0 ? findRuledTables(options.rules, kept, page, options.boldFonts ?? new Set()) : [];
  const ruledAt = new Map<Segment, Block & { kind: 'table' }>();
  let flow = kept;
  if (ruled.length > 0) {
    flow = kept.filter((segment) => !ruled.some((table) => table.segments.has(segment)));
    for (const table of ruled) {
      const anchor: Segment = { x: table.box.x, right: table.box.right, y: table.box.top, size: body, font: '', text: ' ', runs: [] };
      ruledAt.set(anchor, table.block);
      flow.push(anchor);
    }
    flow.sort((a, b) => b.y - a.y || a.x - b.x);
  }
  // a drawing's labels leave the flow with it
  const figures = options.marks?.length
    ? findVectorFigures(
        options.marks,
        flow.filter((segment) => !ruledAt.has(segment)),
        {
          body,
          pageWidth: options.pageWidth,
          pageHeight: options.pageHeight,
          exclude: ruled.map((table) => ({ x0: table.box.x, x1: table.box.right, y0: table.box.bottom, y1: table.box.top })),
        },
      )
    : [];
  if (figures.length > 0) {
    const labels = new Set(figures.flatMap((figure) => figure.segments));
    flow = flow.filter((segment) => !labels.has(segment));
  }
  const { ordered, multiColumn } = readingOrder(flow, options.pageWidth);
  // a heading is words: a big display formula ("a + b = c") or a lone symbol is not one
  const looksLikeHeading = (segment: Segment) => {
    if (segment.size < body * 1.15 || segment.text.length >= 200) return false;
    const letters = (segment.text.match(/\p{L}/gu) ?? []).length;
    return /\p{L}{2,}/u.test(segment.text) && letters >= segment.text.replace(/\s/g, '').length * 0.6;
  };
  const headingSizes = [...new Set(kept.filter(looksLikeHeading).map((segment) => Math.round(segment.size)))].sort((a, b) => b - a);
  const levelOf = (size: number): 1 | 2 | 3 | 4 | 5 | 6 => Math.min(6, Math.max(1, headingSizes.indexOf(Math.round(size)) + 1)) as 1 | 2 | 3 | 4 | 5 | 6;

  const tablesByColumn = ordered.map((column) => findAlignedTables(column, page));
  const notes = findFootnotes(ordered, tablesByColumn, body, page, options.pageHeight, options.rules ?? []);
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
        if (last?.kind === 'paragraph' && /^(table|tabelle|tableau|tabla|tab\.)\s*[\dIVX]+/i.test(textOf(last.content))) {
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
          if (last?.kind === 'paragraph' && /^(table|tabelle|tableau|tabla|tab\.)\s*[\dIVX]+/i.test(textOf(last.content)) && table.block.kind === 'table') {
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
  return { blocks, multiColumn, artifacts, anchors, figures };
}

function stripPrefix(runs: Run[], length: number): Run[] {
  let remaining = length;
  const out: Run[] = [];
  for (const run of runs) {
    const trimmed = run.text.replace(/^\s+/, '');
    const lead = run.text.length - trimmed.length;
    if (remaining <= 0) out.push(run);
    else if (run.text.length - lead <= remaining - lead || run.text.length <= remaining) remaining -= run.text.length;
    else {
      out.push({ ...run, text: run.text.slice(remaining) });
      remaining = 0;
    }
  }
  return out;
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
 * Tables without ruling lines, from column alignment: three or more
 * consecutive lines each cut into two or more segments whose left edges fall
 * on the same columns. The first line is taken as the header row. The
 * structure is a guess, so the table is marked uncertain for review.
 * Returns, for every segment inside a table, the table (its block on the
 * first segment only).
 */
function findAlignedTables(column: Segment[], page: number): Map<Segment, { block?: Block }> {
  const found = new Map<Segment, { block?: Block }>();
  const rows: { y: number; cells: Segment[] }[] = [];
  for (const segment of column) {
    const row = rows.at(-1);
    if (row && Math.abs(row.y - segment.y) < 1) row.cells.push(segment);
    else rows.push({ y: segment.y, cells: [segment] });
  }
  for (const row of rows) row.cells.sort((a, b) => a.x - b.x);
  let start = 0;
  while (start < rows.length) {
    let end = start;
    while (end < rows.length && rows[end]!.cells.length >= 2 && (end === start || rows[end - 1]!.y - rows[end]!.y <= rows[end]!.cells[0]!.size * 3)) end++;
    if (end - start >= 3) {
      const run = rows.slice(start, end);
      // columns by x-extent work for centred columns too
      const columns = columnsOf(run);
      const cells = run.flatMap((row) => row.cells);
      const numeric = cells.filter((cell) => /\d/.test(cell.text)).length;
      // table cells are short; two columns of prose side by side are not a table
      const averageWidth = cells.reduce((sum, cell) => sum + (cell.right - cell.x), 0) / cells.length;
      const tableWidth = columns.at(-1)![1] - columns[0]![0];
      if (columns.length >= 2 && averageWidth <= tableWidth * 0.3 && (columns.length >= 3 || numeric * 2 >= cells.length)) {
        const tableRows = run.map((row, rowIndex) => {
          const out: { header: boolean; scope?: 'col'; content: Inline[] }[] = columns.map(() => ({ header: rowIndex === 0, content: [] as Inline[] }));
          for (const cell of row.cells) {
            const index = Math.max(
              0,
              columns.findIndex(([x, right]) => cell.x >= x - 1 && cell.x <= right),
            );
            const target = out[index]!;
            target.content =
              target.content.length === 0 ? runsToInlines(cell.runs) : [...target.content, { kind: 'text', text: ' ' }, ...runsToInlines(cell.runs)];
          }
          if (rowIndex === 0) for (const cell of out) cell.scope = 'col';
          return out;
        });
        const block: Block = { kind: 'table', page, rows: tableRows, uncertain: true };
        run.forEach((row, index) => row.cells.forEach((cell, cellIndex) => found.set(cell, index === 0 && cellIndex === 0 ? { block } : {})));
        start = end;
        continue;
      }
    }
    start = Math.max(start + 1, end);
  }
  // the first segment in reading order must carry the block
  const first = column.find((segment) => found.has(segment));
  if (first && !found.get(first)!.block) {
    const holder = [...found.values()].find((entry) => entry.block);
    if (holder) {
      found.set(first, { block: holder.block });
      holder.block = undefined;
    }
  }
  return found;
}

/** A footnote marker at the start of a line: "1)", "*", "†", "¹", or a number before a word. */
const NOTE_MARKER = /^\s*(\d{1,3}\)|[*†‡§¶]{1,3}|[¹²³⁴⁵⁶⁷⁸⁹⁰]{1,3}|\d{1,3}(?=\s+\p{L}))\s*/u;
const SUPERSCRIPT_DIGITS = '⁰¹²³⁴⁵⁶⁷⁸⁹';

/** The label a marker stands for: "1)" and "¹" both mean note 1. */
function noteLabel(marker: string): string {
  return marker
    .trim()
    .replace(/\)$/, '')
    .replace(/[⁰¹²³⁴⁵⁶⁷⁸⁹]/g, (digit) => String(SUPERSCRIPT_DIGITS.indexOf(digit)));
}

type Footnotes = { bySegment: Map<Segment, { block?: Block }>; idByLabel: Map<string, string> };

/**
 * Footnotes of an untagged page: the run of smaller-than-body lines that ends
 * a column in the lower part of the page, from its first line that starts
 * with a marker (a raised number, "1)", "*", "†"). A line starting with a
 * marker already used on the page continues the note above (a numbered list
 * inside a note), any other line continues it too. Unmarked lines opening
 * such a run go on with the note the previous column ended with; on the
 * page's first run they go on with the previous page's last note, which the
 * page cannot see: they become a `continued` footnote, joined to it when the
 * document is assembled (joinContinuedFootnotes).
 */
function findFootnotes(columns: Segment[][], tables: Map<Segment, unknown>[], body: number, page: number, pageHeight: number, rules: Rule[]): Footnotes {
  const bySegment = new Map<Segment, { block?: Block }>();
  const idByLabel = new Map<string, string>();
  let carried: { block: Block & { kind: 'footnote' }; runs: Run[] } | undefined;
  for (const [index, column] of columns.entries()) {
    let start = column.length;
    while (start > 0) {
      const segment = column[start - 1]!;
      if (tables[index]!.has(segment) || segment.size > body * 0.9 || segment.y > pageHeight * 0.45) break;
      start--;
    }
    const markerOf = (segment: Segment): { label: string; runs: Run[] } | undefined => {
      const first = segment.runs.find((run) => run.text.trim() !== '');
      if (first?.sup && /^\s*([*†‡§¶]{1,3}|\d{1,3}\)?|[a-z])\s*$/u.test(first.text)) {
        return { label: noteLabel(first.text), runs: segment.runs.slice(segment.runs.indexOf(first) + 1) };
      }
      const match = NOTE_MARKER.exec(segment.text);
      if (!match || match[0].length >= segment.text.length) return undefined;
      return { label: noteLabel(match[1]!), runs: stripPrefix(segment.runs, match[0].length) };
    };
    let marked = start;
    while (marked < column.length && !markerOf(column[marked]!)) marked++;
    const leading = column.slice(start, marked);
    let current: { block: Block & { kind: 'footnote' }; runs: Run[] } | undefined;
    if (leading.length > 0 && (carried || bySegment.size === 0) && continuesNote(leading, column[marked], carried, rules)) {
      current = carried;
      if (!current) {
        current = { block: { kind: 'footnote', page, id: `p${page}-continued`, label: '', content: [], continued: true }, runs: [] };
        bySegment.set(leading[0]!, { block: current.block });
      }
      for (const segment of leading) {
        if (current.runs.length > 0) current.runs.push({ text: ' ' });
        current.runs.push(...segment.runs);
        if (!bySegment.has(segment)) bySegment.set(segment, {});
      }
    }
    const flush = () => {
      if (current) current.block.content = runsToInlines(current.runs);
    };
    let previous: Segment | undefined = current ? leading.at(-1) : undefined;
    for (const segment of column.slice(marked)) {
      const marker = markerOf(segment);
      // a line well below the note (a colophon, an imprint) is not part of it
      const detached = previous !== undefined && previous.y - segment.y > Math.max(previous.size, segment.size) * 2.5;
      previous = segment;
      if (marker && !idByLabel.has(marker.label)) {
        flush();
        const id = `p${page}-${marker.label}`;
        idByLabel.set(marker.label, id);
        current = { block: { kind: 'footnote', page, id, label: marker.label, content: [] }, runs: [...marker.runs] };
        bySegment.set(segment, { block: current.block });
        continue;
      }
      if (!current || detached) {
        flush();
        current = undefined;
        continue;
      }
      current.runs.push({ text: ' ' }, ...segment.runs);
      bySegment.set(segment, {});
    }
    flush();
    // a note running to the column's foot may go on in the next column
    carried = current && column.length > 0 && bySegment.has(column.at(-1)!) ? current : undefined;
  }
  return { bySegment, idByLabel };
}

/**
 * Whether unmarked small lines at a column's foot go on with a note rather
 * than being small print of their own (an imprint, a formula's limits): they
 * read as words, and the note separator rule is just above them, or a marked
 * note follows them with no separator between (which would put them above the
 * notes), or, after a note in the previous column, the sentence goes on (a
 * lower-case start, or that note stopped mid-sentence).
 */
function continuesNote(lines: Segment[], next: Segment | undefined, before: { runs: Run[] } | undefined, rules: Rule[]): boolean {
  const first = lines[0]!;
  const last = lines.at(-1)!;
  if (
    (
      lines
        .map((line) => line.text)
        .join(' ')
        .match(/\p{L}{2,}/gu) ?? []
    ).length < 3
  )
    return false;
  const horizontal = rules.filter((rule) => rule.y1 === rule.y2);
  const separated = horizontal.some(
    (rule) => rule.y1 > first.y + first.size * 0.5 && rule.y1 < first.y + first.size * 3 && rule.x1 <= first.x + first.size * 2 && rule.x2 > first.x,
  );
  if (separated) return true;
  if (next && !horizontal.some((rule) => rule.y1 < last.y && rule.y1 > next.y + next.size * 0.5 && rule.x1 < next.right && rule.x2 > next.x)) return true;
  return before !== undefined && (/^\p{Ll}/u.test(first.text) || !/[.!?:;)\]”"»。]\s*$/u.test(before.runs.map((run) => run.text).join('')));
}

/** Raised markers in running text whose label is a footnote of the page become references to it. */
function linkReferences(runs: Run[], idByLabel: Map<string, string>): Run[] {
  if (idByLabel.size === 0 || !runs.some((run) => run.sup)) return runs;
  return runs.map((run, index) => {
    if (!run.sup || index === 0) return run;
    // a marker follows a word or closing punctuation; after a lone Latin letter or a digit it is an exponent (R², x², 10²)
    const before = runs
      .slice(0, index)
      .map((other) => other.text)
      .join('');
    if (!/(\p{L}\p{L}|[\p{Script=Hangul}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]|[)\]”"'’.,;:」』》〉）])$/u.test(before)) return run;
    const id = idByLabel.get(noteLabel(run.text));
    return id ? { ...run, note: { id, label: noteLabel(run.text) } } : run;
  });
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
