import type { Block } from '../../model.ts';
import { findAlignedTables } from './aligned-tables.ts';
import { takeDisplayFormulas } from './display-formulas.ts';
import { BRACE_TIPS } from './math-layout.ts';
import type { Mark, Rule } from './drawing.ts';
import { buildBlocks, type BlockAnchor } from './page-blocks.ts';
import { findFootnotes } from './page-footnotes.ts';
import {
  dropLineNumbers,
  dropMarginLines,
  dropPageNumbers,
  dropRotatedMarginLines,
  dropRunningHeads,
  dropSetOffEdgeLines,
  dropWatermarks,
  rowsOf,
  rowText,
} from './page-furniture.ts';
import { readingOrder } from './reading-order.ts';
import { findRuledTables, type RuledTable } from './ruled-tables.ts';
import type { EdgeLines } from './running-heads.ts';
import { bodySize, type Segment } from './segments.ts';
import { findVectorFigures, type VectorFigure } from './vector-figures.ts';

/**
 * An untagged page's structure inferred from geometry, as a row of passes
 * over its segments (buildSegments): page furniture leaves the flow (running
 * heads, page numbers), ruled tables and vector figures take their text out
 * of it, display formulas over several lines become one piece each, the rest
 * is put in reading order (columns), footnotes are found at
 * the columns' feet, and the columns become blocks (paragraphs, headings,
 * lists, aligned tables, formulas).
 */

export type { BlockAnchor } from './page-blocks.ts';
/** `figures`: regions drawn with vector paths, their text (labels) taken out of the blocks. */
/** `furniture`: the lines left out as page furniture on the page's own evidence (copyright, DOI, "Downloaded from"; a small line set off at the edge), for the report. */
export type Layout = {
  blocks: Block[];
  multiColumn: boolean;
  artifacts: number;
  furniture: string[];
  anchors: Map<Block, BlockAnchor>;
  figures: VectorFigure[];
};

export type LayoutOptions = {
  page: number;
  pageWidth: number;
  pageHeight: number;
  neighbours?: EdgeLines[];
  /** ruling lines drawn on the page (page space), for ruled tables */
  rules?: Rule[];
  /** font ids of bold fonts, for ruled tables' header rows and headings at body size */
  boldFonts?: Set<string>;
  /** font ids of monospaced fonts: their lines are code, never headings */
  monoFonts?: Set<string>;
  /** painted paths (page space), for figures drawn without an image */
  marks?: Mark[];
};

/** Brace tips and spaces, at least one tip (a ruled table's placeholder in the flow is a space alone). */
const braceTipsOnly = (text: string) => text.trim() !== '' && [...text.replace(/\s/g, '')].every((char) => BRACE_TIPS.test(char));

export function layoutPage(segments: Segment[], options: LayoutOptions): Layout {
  const { page } = options;
  const heads = dropRunningHeads(segments, options.neighbours);
  if (heads.kept.length === 0) return { blocks: [], multiColumn: false, artifacts: heads.dropped.length, furniture: [], anchors: new Map(), figures: [] };
  const turned = dropRotatedMarginLines(heads.kept, options.pageWidth);
  const margins = dropMarginLines(turned.kept, options.pageHeight);
  const numbers = dropPageNumbers(margins.kept, options.pageHeight);
  const lineNumbers = dropLineNumbers(numbers.kept);
  const bodyWithMarks = bodySize(lineNumbers.kept);
  const watermarks = dropWatermarks(lineNumbers.kept, bodyWithMarks);
  const kept = watermarks.kept;
  const body = watermarks.dropped.length > 0 ? bodySize(kept) : bodyWithMarks;
  const ruled = takeRuledTables(kept, options, body);
  const drawn = takeVectorFigures(ruled, options, body);
  const formulas = takeDisplayFormulas(drawn.flow, options.rules ?? []);
  // after tables and drawings have taken their text: a drawing's label or a table's row at the page's edge is no running head
  const numbered = new Set(numbers.dropped.map((segment) => Math.round(segment.y)));
  // a line of brace tips alone (TeX's \underbrace drawn in pieces) says nothing as text: the formula's TeX has it
  const flow = formulas.flow.filter((segment) => !braceTipsOnly(segment.text));
  const edges = dropSetOffEdgeLines(flow, options.pageHeight, body, numbered);
  const order = readingOrder(edges.kept, options.pageWidth, options.pageHeight, options.rules);
  const { multiColumn } = order;
  const ordered = [...order.ordered, ...order.foot];
  const tablesByColumn = ordered.map((column) => findAlignedTables(column, page));
  // the page's foot (an imprint under the columns) holds no footnotes and does not continue one
  const notes = findFootnotes(order.ordered, tablesByColumn, body, page, options.pageHeight, options.rules ?? []);
  const { blocks, anchors } = buildBlocks(ordered, {
    page,
    body,
    all: kept,
    ruledAt: ruled.placeholders,
    formulaAt: formulas.areas,
    tablesByColumn,
    notes,
    boldFonts: options.boldFonts ?? new Set(),
    monoFonts: options.monoFonts ?? new Set(),
    furniture: [...heads.dropped, ...margins.dropped, ...edges.dropped].map((segment) => segment.text),
  });
  return {
    blocks,
    multiColumn,
    artifacts:
      heads.dropped.length +
      turned.dropped.length +
      margins.dropped.length +
      numbers.dropped.length +
      lineNumbers.dropped.length +
      watermarks.dropped.length +
      edges.dropped.length,
    furniture: [
      ...lineTexts([...turned.dropped, ...margins.dropped, ...edges.dropped]),
      ...(lineNumbers.label ? [lineNumbers.label] : []),
      ...watermarks.dropped.map((segment) => `watermark: ${segment.text}`),
    ],
    anchors,
    figures: drawn.figures,
  };
}

/**
 * A ruled table's text leaves the flow; a placeholder spanning the table
 * keeps its place in the reading order.
 */
function takeRuledTables(
  segments: Segment[],
  options: LayoutOptions,
  body: number,
): { flow: Segment[]; tables: RuledTable[]; placeholders: Map<Segment, Block & { kind: 'table' }> } {
  const tables = options.rules && options.rules.length > 0 ? findRuledTables(options.rules, segments, options.page, options.boldFonts ?? new Set()) : [];
  const placeholders = new Map<Segment, Block & { kind: 'table' }>();
  if (tables.length === 0) return { flow: segments, tables, placeholders };
  const flow = segments.filter((segment) => !tables.some((table) => table.segments.has(segment)));
  for (const table of tables) {
    const anchor: Segment = { x: table.box.x, right: table.box.right, y: table.box.top, size: body, font: '', text: ' ', runs: [] };
    placeholders.set(anchor, table.block);
    flow.push(anchor);
  }
  flow.sort((a, b) => b.y - a.y || a.x - b.x);
  return { flow, tables, placeholders };
}

/** Figures drawn with paths; a drawing's labels leave the flow with it. */
function takeVectorFigures(
  { flow, tables, placeholders }: ReturnType<typeof takeRuledTables>,
  options: LayoutOptions,
  body: number,
): { flow: Segment[]; figures: VectorFigure[] } {
  if (!options.marks?.length) return { flow, figures: [] };
  const figures = findVectorFigures(
    options.marks,
    flow.filter((segment) => !placeholders.has(segment)),
    {
      body,
      pageWidth: options.pageWidth,
      pageHeight: options.pageHeight,
      exclude: tables.map((table) => ({ x0: table.box.x, x1: table.box.right, y0: table.box.bottom, y1: table.box.top })),
    },
  );
  if (figures.length === 0) return { flow, figures };
  const labels = new Set(figures.flatMap((figure) => figure.segments));
  return { flow: flow.filter((segment) => !labels.has(segment)), figures };
}

/** Segments as the lines they were on, top to bottom. */
function lineTexts(segments: Segment[]): string[] {
  return [...rowsOf(segments)].sort((a, b) => b[0] - a[0]).map(([, row]) => rowText(row, true));
}
