import type { Block, Inline, ListBlock } from '../../model.ts';
import type { FormulaArea } from './display-formulas.ts';
import { joinLines, runsToInlines, stripPrefix, type Run } from './inline.ts';
import { linkReferences, type Footnotes } from './page-footnotes.ts';
import { REFERENCE_MARK, type Segment } from './segments.ts';
import { numberingDepth } from '../../heading-levels.ts';
import { besideFlow, joinInlines, readsOn } from '../../paragraphs.ts';
import { CONDITION_WORDS, formulaToTex, isFormulaLine, RELATION, withTag } from './tex.ts';
import { echoedIn } from './title.ts';

/**
 * The last layout pass: the segments of each column, in reading order, become
 * blocks. Lines of one paragraph join into one paragraph (a gap wider than
 * the column's line pitch, an indent or a size change starts the next);
 * bigger lines are headings; bullet and number glyphs open list items; a
 * ruled table, an aligned table or a footnote takes the place of its first
 * segment; a line of mathematics set off from the text is a display formula.
 * A paragraph at the foot of a column that reads on at the head of the next
 * is one paragraph (joinAcrossColumns).
 */

/** Where a block starts on the page (its first line, page space): lets figures be placed among the text. `bottom`: where a formula over several lines ends. */
export type BlockAnchor = { x: number; right: number; top: number; bottom?: number };

export type BlockContext = {
  page: number;
  body: number;
  /** every segment of the page, for the page's heading sizes */
  all: Segment[];
  /** placeholders of ruled tables in the flow, with their table */
  ruledAt: Map<Segment, Block & { kind: 'table' }>;
  /** display formulas over several lines, each one segment, with the area it covers */
  formulaAt: Map<Segment, FormulaArea>;
  /** per column, the segments of aligned tables (the table's block on its first segment) */
  tablesByColumn: Map<Segment, { block?: Block }>[];
  notes: Footnotes;
  /** font ids of bold fonts: a numbered bold line at body size is a heading, and headings say how they are set */
  boldFonts: Set<string>;
  /** font ids of monospaced fonts: their lines are code */
  monoFonts: Set<string>;
  /** the lines left out of the page as furniture (running heads, a journal's citation line) */
  furniture?: string[];
};

const BULLET = /^[•◦▪▫■□●○‣⁃∙·\-–—*]\s+/u;
/** A bullet glyph alone (a dash or a star alone is too often something else). */
const LONE_BULLET = /^[•◦▪▫■□●○‣⁃∙]$/u;
const ENUMERATOR = /^(\(?\d{1,3}[.)]|\(?[a-z][.)]|\(?[ivx]{1,5}[.)])\s+/i;
// Korean and Chinese reports label tables "[표 1]", "表1"
const TABLE_CAPTION = /^[[(【<]?\s*(table|tabelle|tableau|tabla|tab\.|표|表)\s*[\dIVX]+/i;
const TABLE_LABEL_ONLY = /^[[(【<]?\s*(table|tabelle|tableau|tabla|tab\.|표|表)\s*[\dIVX]+[a-z]?[\])】>]?[.:]?$/i;

export function buildBlocks(ordered: Segment[][], context: BlockContext): { blocks: Block[]; anchors: Map<Block, BlockAnchor> } {
  const { page, body, ruledAt, notes, tablesByColumn } = context;
  // a heading is words: a big display formula ("a + b = c") or a lone symbol is not one
  // (on a first page, a journal's name in its masthead, which the page's citation line repeats, is no heading)
  const looksLikeHeading = (segment: Segment) => {
    if (segment.size < body * 1.15 || segment.text.length >= 200) return false;
    if (page === 1 && context.furniture && echoedIn(segment.text, context.furniture)) return false;
    const letters = (segment.text.match(/\p{L}/gu) ?? []).length;
    return /\p{L}{2,}/u.test(segment.text) && letters >= segment.text.replace(/\s/g, '').length * 0.6;
  };
  const headingSizes = [...new Set(context.all.filter(looksLikeHeading).map((segment) => Math.round(segment.size)))].sort((a, b) => b - a);
  const levelOf = (size: number): 1 | 2 | 3 | 4 | 5 | 6 => Math.min(6, Math.max(1, headingSizes.indexOf(Math.round(size)) + 1)) as 1 | 2 | 3 | 4 | 5 | 6;

  // a numbered line in bold at body size, short and set apart, is a section heading ("5.1 Hyper Parameter Optimization")
  // (a line that runs on — a hyphen, a question — is a bold sentence, like a questionnaire's "28. Are …")
  const numberedHeading = (segment: Segment, gap: number, lineGap: number) => {
    const numbering = numberingDepth(segment.text);
    const words = segment.text.split(/\s+/).length;
    return (
      context.boldFonts.has(segment.font) &&
      numbering !== undefined &&
      words <= (numbering.depth === 1 ? 8 : 12) &&
      !/[.,;:?-]$/.test(segment.text) &&
      (gap > lineGap || gap <= 0)
    );
  };
  // a line wholly bold, at body size or a little above, short and set apart from the lines around it, is a heading
  // (a word processor's "Heading 2": bold, 13.4 pt over a 12 pt body) — unless the page sets its body in bold too
  const boldBody = context.all.filter((segment) => Math.abs(segment.size - body) < 0.6);
  const boldShare =
    boldBody.filter((segment) => context.boldFonts.has(segment.font)).reduce((sum, segment) => sum + segment.text.length, 0) /
    Math.max(
      1,
      boldBody.reduce((sum, segment) => sum + segment.text.length, 0),
    );
  // alone on its line (not a table's bold cell, not a run-in label) and apart from the text above
  const standsApart = (segment: Segment, column: Segment[], gap: number, lineGap: number) =>
    (gap > lineGap || gap <= 0) && !column.some((other) => other !== segment && Math.abs(other.y - segment.y) < 1);
  const styledHeading = (segment: Segment, next: Segment | undefined, column: Segment[], gap: number, lineGap: number, gapFor: (size: number) => number) => {
    const fonts = segment.fonts?.length ? segment.fonts : [segment.font];
    if (boldShare > 0.4 || !fonts.every((font) => context.boldFonts.has(font)) || fonts.some((font) => context.monoFonts.has(font))) return false;
    const text = segment.text;
    const letters = (text.match(/\p{L}/gu) ?? []).length;
    if (segment.size < body * 0.95 || text.length > 120 || text.split(/\s+/).length > 12 || letters < text.replace(/\s/g, '').length * 0.6) return false;
    if (!/^[\p{Lu}\d"“‘(]/u.test(text) || /[.,;:!?\-–]$/.test(text) || CODE_TOKENS.test(text) || TABLE_CAPTION.test(text)) return false;
    if (!standsApart(segment, column, gap, lineGap)) return false;
    // a heading introduces text under it: a bold last line (a footer, a signature) is not one
    if (!next) return false;
    const below = segment.y - next.y;
    const nextBold = (next.fonts?.length ? next.fonts : [next.font]).every((font) => context.boldFonts.has(font));
    return below > gapFor(Math.max(segment.size, next.size)) || below < 0 || !nextBold;
  };
  // a line in capitals at body size or above, alone on its line, set apart above and opening the text under it (a
  // gap or a first-line indent below): a typescript's or a style sheet's heading ("SAMPLE DESIGN") where no bold
  // face marks it
  const capsHeading = (segment: Segment, next: Segment | undefined, column: Segment[], gap: number, lineGap: number) => {
    const text = segment.text.trim();
    if (/\p{Ll}/u.test(text) || !next || segment.size < body * 0.95 || (text.match(/\p{L}/gu) ?? []).length < 4) return false;
    if (text.split(/\s+/).length > 8 || /[.,;:!\-–]$/.test(text) || CODE_TOKENS.test(text) || TABLE_CAPTION.test(text)) return false;
    if (context.monoFonts.has(segment.font) || !standsApart(segment, column, gap, lineGap)) return false;
    if (!/\p{Ll}/u.test(next.text) || next.size > segment.size * 1.05) return false;
    // a journal's section label over an article's authors and title is no heading of the text under it
    if (page === 1 && context.all.some((other) => other.y < segment.y && other.size > segment.size * 1.3)) return false;
    return segment.y - next.y > lineGap * 0.9 || next.x > segment.x + segment.size * 0.8;
  };
  const styleOf = (segment: Segment) => ({ size: Math.round(segment.size * 2) / 2, bold: context.boldFonts.has(segment.font) });
  const byline = page === 1 ? frontMatter(ordered, looksLikeHeading) : new Set<Segment>();

  const blocks: Block[] = [];
  const anchors = new Map<Block, BlockAnchor>();
  const paragraphLines = new Map<Block, ParagraphLines>();
  const columnStarts: number[] = [];
  const place = (block: Block, first: Segment) => {
    blocks.push(block);
    anchors.set(block, { x: first.x, right: first.right, top: first.y + first.size });
  };
  for (const [columnIndex, given] of ordered.entries()) {
    columnStarts.push(blocks.length);
    const column = joinFormulaRows(
      joinLeaders(given, tablesByColumn[columnIndex]!, (segment) => context.boldFonts.has(segment.font) || segment.size >= body * 1.15),
      tablesByColumn[columnIndex]!,
    );
    const columnLeft = Math.min(...column.map((segment) => segment.x));
    const columnWidth = Math.max(...column.map((segment) => segment.right)) - columnLeft;
    let paragraph: { runs: Run[]; first: Segment; last: Segment; text: string; sizes: number[]; lefts: number[] } | undefined;
    // the last item's runs are kept so a continuation line keeps its links and footnote references
    // `margin`: where the last item's lines run on when they wrap back to the margin, under its marker's left
    let list: { block: ListBlock; indent: number; first: Segment; last: Segment; runs: Run[]; letter?: string; margin?: number } | undefined;
    // the hanging indent the last paragraph was set with (its first line's start, its other lines' step in)
    let hanging: { left: number; indent: number } | undefined;
    const flushParagraph = () => {
      if (paragraph) {
        const [first, second] = paragraph.lefts;
        hanging = second !== undefined && hangsFrom(paragraph.lefts, paragraph.first) ? { left: first!, indent: second - first! } : undefined;
        const sizes = paragraph.sizes.sort((a, b) => a - b);
        const block: Block = {
          kind: 'paragraph',
          page,
          content: runsToInlines(paragraph.runs),
          size: Math.round(sizes[Math.floor(sizes.length / 2)]! * 10) / 10,
        };
        place(block, paragraph.first);
        paragraphLines.set(block, { first: paragraph.first, last: paragraph.last, text: paragraph.text, columnLeft });
      }
      paragraph = undefined;
    };
    const flushList = () => {
      if (list) place(list.block, list.first);
      list = undefined;
    };
    let previous: Segment | undefined;
    const pitch = linePitch(column);
    const gapFor = (size: number) => {
      const usual = pitch.get(Math.round(size * 2) / 2);
      return usual ? Math.max(size * 1.3, usual * 1.3) : size * 1.6;
    };
    const tables = tablesByColumn[columnIndex]!;
    const code = codeLines(column, looksLikeHeading, context.monoFonts);
    const prose = proseRuns(column, body, looksLikeHeading);
    let listing: { block: Block & { kind: 'code' }; left: number; last: Segment } | undefined;
    // equation numbers set at the right of a display formula's line: the formula's, as its \tag
    const numbered = new Set<Segment>();
    // a formula gathered over several lines stands at its main line, which its number may precede in the column's
    // order: such numbers are known before the column is read
    const areaNumbers = new Map<Segment, Segment>();
    for (const segment of column) {
      const number = context.formulaAt.has(segment) ? equationNumber(segment, column) : undefined;
      if (number) {
        areaNumbers.set(segment, number);
        numbered.add(number);
      }
    }
    for (const [index, segment] of column.entries()) {
      if (numbered.has(segment)) continue;
      if (code.has(segment) && !tables.has(segment) && !ruledAt.has(segment) && !notes.bySegment.has(segment)) {
        flushParagraph();
        flushList();
        const step = segment.size * 0.5;
        const joins = listing && blocks.at(-1) === listing.block && listing.last.y - segment.y < segment.size * 2.5;
        if (!joins) {
          listing = { block: { kind: 'code', page, text: '' }, left: segment.x, last: segment };
          place(listing.block, segment);
        }
        const current = listing!;
        // a piece to the right on the listing's last row (a comment set apart from its instruction) stays on that line
        if (joins && Math.abs(current.last.y - segment.y) < segment.size * 0.3 && segment.x > current.last.right) {
          const lineSoFar = current.block.text.slice(current.block.text.lastIndexOf('\n') + 1);
          const column = Math.round((segment.x - current.left) / step);
          current.block.text += `${' '.repeat(Math.max(1, column - lineSoFar.length))}${segment.text}`;
          current.last = segment;
          previous = segment;
          continue;
        }
        current.left = Math.min(current.left, segment.x);
        const indent = ' '.repeat(Math.max(0, Math.round((segment.x - current.left) / step)));
        current.block.text = current.block.text ? `${current.block.text}\n${indent}${segment.text}` : `${indent}${segment.text}`;
        current.last = segment;
        previous = segment;
        continue;
      }
      const ruledTable = ruledAt.get(segment);
      if (ruledTable) {
        flushParagraph();
        flushList();
        takeCaption(blocks, ruledTable);
        place(ruledTable, segment);
        previous = undefined;
        continue;
      }
      const area = context.formulaAt.get(segment);
      if (area) {
        flushParagraph();
        flushList();
        // its TeX is read from its glyphs and bars (readFormulaTex): its text alone runs the lines together
        const number = areaNumbers.get(segment);
        const formula: Block = { kind: 'formula', page, text: withNumber(segment.text, number), display: true, ...tagOf(number) };
        blocks.push(formula);
        anchors.set(formula, area);
        previous = segment;
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
          if (table.block.kind === 'table') takeCaption(blocks, table.block);
          place(table.block, segment);
        }
        previous = segment;
        continue;
      }
      const display = displayFormula(segment, column, previous);
      if (display) {
        const { number } = display;
        flushParagraph();
        flushList();
        // a line read as one inline formula has that formula's TeX
        const tex =
          (formulaRow(segment) ? rowTex(segment.runs) : undefined) ??
          formulaToTex(segment.runs.map((run) => ({ text: run.text, ...(run.sup ? { script: 'sup' as const } : run.sub ? { script: 'sub' as const } : {}) })));
        if (tex) {
          const tag = tagOf(number);
          if (number) numbered.add(number);
          place({ kind: 'formula', page, text: withNumber(segment.text, number), tex: withTag(tex, tag.tag), display: true, ...tag }, segment);
          previous = segment;
          continue;
        }
      }
      const gap = previous ? previous.y - segment.y : 0;
      const size = Math.max(segment.size, previous?.size ?? 0);
      // a paragraph break is a gap clearly wider than the column's usual line pitch (Korean reports set lines 1.7 apart)
      const lineGap = gapFor(size);
      const isHeading =
        !byline.has(segment) &&
        ((looksLikeHeading(segment) && !prose.has(segment) && !modestSentence(segment, body) && !runsOnSmaller(segment, column[index + 1], gapFor)) ||
          numberedHeading(segment, gap, lineGap) ||
          styledHeading(segment, column[index + 1], column, gap, lineGap, gapFor) ||
          capsHeading(segment, column[index + 1], column, gap, lineGap));
      if (isHeading) {
        flushParagraph();
        flushList();
        const last = blocks.at(-1);
        // a heading wrapped over two lines is one heading
        if (last?.kind === 'heading' && previous && Math.abs(previous.size - segment.size) < 0.5 && gap < lineGap) {
          last.content = runsToInlines([{ text: `${textOf(last.content)}\n` }, { text: segment.text }]);
        } else {
          place({ kind: 'heading', page, level: levelOf(segment.size), content: runsToInlines(segment.runs), style: styleOf(segment) }, segment);
        }
        previous = segment;
        continue;
      }
      const marker = BULLET.exec(segment.text) ?? enumeratorOf(segment.text, list?.letter);
      if (marker && !(paragraph && !list && gap >= 0 && gap < lineGap && enumeratesInline(paragraph, segment, columnWidth))) {
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
        list.letter = letterOf(marker[0]);
        list.runs = [...itemRuns];
        list.margin = undefined;
        list.last = segment;
        previous = segment;
        continue;
      }
      // continuation of the last item: under its text (a hanging indent), or back at the margin under a full line of
      // the item whose sentence runs on ("(i) “Selection bias” is a tendency to exclude one kind of" / "unit or
      // another"): the first such line in lower case, the ones after it at that margin (a short line ends the item)
      const wrapsBack =
        list !== undefined &&
        previous !== undefined &&
        gap > 0 &&
        previous.right >= columnLeft + columnWidth - segment.size * 3 &&
        !endsSentence(list.runs) &&
        (list.margin !== undefined ? Math.abs(segment.x - list.margin) < segment.size * 0.3 : /^\p{Ll}/u.test(segment.text.trim()));
      if (list && gap < lineGap && (segment.x > list.indent + 2 || wrapsBack)) {
        if (wrapsBack) list.margin ??= segment.x;
        const item = list.block.items.at(-1)!;
        list.runs.push({ text: '\n' }, ...segment.runs);
        item.content = runsToInlines(list.runs);
        previous = segment;
        continue;
      }
      flushList();
      // an entry's lines carried over from the page or column before, then the next entry out at the margin
      const outdent = paragraph ? outdentedFrom(paragraph.lefts, segment) : undefined;
      // the rest of the paragraph's last line, set apart by a gap justification opened: no indent, the same line
      const restOfLine = paragraph !== undefined && Math.abs(gap) < segment.size * 0.3 && segment.x > paragraph.last.right;
      const startsNew =
        !paragraph ||
        (!restOfLine &&
          (gap > lineGap ||
            gap < 0 ||
            (Math.abs(segment.size - paragraph.last.size) > 1 && !runsOnAcrossSizes(paragraph.last, segment, paragraph.runs, columnWidth)) ||
            // a first-line indent opens a paragraph, save the next line of an entry of a list set as the one before it
            (segment.x > paragraph.last.x + segment.size * 0.8 &&
              endsSentence(paragraph.runs) &&
              !(
                hanging &&
                paragraph.lefts.length === 1 &&
                Math.abs(paragraph.first.x - hanging.left) < segment.size * 0.3 &&
                Math.abs(segment.x - hanging.left - hanging.indent) < segment.size * 0.3
              )) ||
            // so does a line back at the first line's start where the lines after it were indented: a hanging indent, each
            // entry of a reference list its own paragraph
            hangsFrom(paragraph.lefts, segment) ||
            outdent !== undefined));
      if (startsNew) {
        flushParagraph();
        // the list's hanging indent is known from the outdented entry on
        if (outdent !== undefined) hanging = { left: segment.x, indent: outdent };
        paragraph = { runs: [...segment.runs], first: segment, last: segment, text: segment.text, sizes: [segment.size], lefts: [segment.x] };
      } else {
        const last = paragraph!.runs.at(-1);
        const first = segment.runs[0];
        // a re-read run (OCR's words in a lying font's place) opens with a space: the hyphen joins it all the same
        if (last && first && /\p{L}-$/u.test(last.text) && /^\s*\p{Ll}/u.test(first.text)) {
          last.text = last.text.slice(0, -1);
          paragraph!.runs.push({ ...first, text: first.text.trimStart() }, ...segment.runs.slice(1));
        } else {
          paragraph!.runs.push({ text: ' ', href: undefined }, ...segment.runs);
        }
        paragraph!.last = segment;
        paragraph!.sizes.push(segment.size);
        if (!restOfLine) paragraph!.lefts.push(segment.x);
        paragraph!.text = joinLines(paragraph!.text, segment.text);
      }
      // an entry of a contents page ends with its page number: the next line is the next entry
      if (CONTENTS_ENTRY.test(paragraph!.text.slice(-CONTENTS_TAIL))) flushParagraph();
      previous = segment;
    }
    flushParagraph();
    flushList();
  }
  const joined = joinAcrossColumns(blocks, columnStarts, paragraphLines, body);
  captionsBelow(joined);
  return { blocks: joined, anchors };
}

/** The lines a paragraph was made of, and where its column's text starts. */
type ParagraphLines = { first: Segment; last: Segment; text: string; columnLeft: number };

/**
 * A paragraph the foot of a column cut off goes on at the head of the next
 * column, on the rule paragraphs go on over a page (readsOn: no closing
 * punctuation, a start mid-sentence, one size), when the head sits higher on
 * the page (a column beside, not a region below) and flush with its column
 * (a first-line indent opens a paragraph). Notes, tables and captions between
 * stay where they are (besideFlow).
 */
/** The line that opens a paper's abstract or first section: "Abstract", "Abstract—We…", "1 Introduction", "Background". */
const FRONT_MATTER_END = /^(?:\d\.?\s+)?(?:abstract|summary|background|introduction|keywords|key\s*words|résumé|resumen|zusammenfassung)\s*(?:[—–:.-]|$)/i;

/**
 * A paper's byline and affiliations: on its first page, the lines between its title (the largest heading-sized
 * text) and the line that opens its abstract or first section. They are set large or bold like headings (dolma's
 * first page made nine author lines and its affiliations h1, a medical article its authors h2), but they are not
 * the paper's sections, which a screen reader's list of headings is for. A page with no such opening line has no
 * front matter: a page of headings alone keeps them all.
 */
function frontMatter(ordered: Segment[][], headingSized: (segment: Segment) => boolean): Set<Segment> {
  const lines = ordered.flat();
  const end = lines.findIndex((segment) => FRONT_MATTER_END.test(segment.text.trim()));
  const candidates = lines.slice(0, Math.max(end, 0)).filter(headingSized);
  if (candidates.length === 0) return new Set();
  const largest = Math.max(...candidates.map((segment) => segment.size));
  let after = lines.indexOf(candidates.find((segment) => segment.size === largest)!) + 1;
  // a title wrapped over lines keeps its size
  while (after < end && Math.abs(lines[after]!.size - largest) < 0.5) after++;
  return new Set(lines.slice(after, end).filter((segment) => segment.size < largest - 0.5));
}

function joinAcrossColumns(blocks: Block[], columnStarts: number[], lines: Map<Block, ParagraphLines>, body: number): Block[] {
  const out: Block[] = [];
  for (const [index, start] of columnStarts.entries()) {
    const column = blocks.slice(start, columnStarts[index + 1] ?? blocks.length);
    const tailAt = out.findLastIndex((block) => !besideFlow(block, body));
    const tail = out[tailAt];
    const headAt = column.findIndex((block) => !besideFlow(block, tail?.kind === 'paragraph' ? tail.size : body));
    const head = column[headAt];
    const foot = tail && lines.get(tail);
    const top = head && lines.get(head);
    if (tail?.kind === 'paragraph' && head?.kind === 'paragraph' && foot && top) {
      const flush = top.first.x < top.columnLeft + top.first.size * 0.8;
      // or indented as the foot's own lines are under a hanging indent: an entry of a reference list going on
      const hangingOn =
        foot.last !== foot.first &&
        foot.last.x - foot.first.x >= top.first.size * 0.8 &&
        Math.abs(top.first.x - top.columnLeft - (foot.last.x - foot.columnLeft)) < top.first.size * 0.3;
      const beside = top.first.y > foot.last.y;
      if ((flush || hangingOn) && beside && readsOn({ text: foot.text, size: tail.size }, { text: top.text, size: head.size })) {
        // changed in place: the block keeps its anchor, where figures are placed by it
        tail.content = joinInlines(tail.content, head.content);
        lines.set(tail, { ...foot, last: top.last, text: joinLines(foot.text, top.text) });
        column.splice(headAt, 1);
      }
    }
    out.push(...column);
  }
  return out;
}

/** A caption set under its table: "Table 2. text" (or its label apart, then its text), only where the table has none above. */
const TABLE_CAPTION_BELOW = /^[[(【<]?\s*(table|tabelle|tableau|tabla|tab\.|표|表)\s*[\dIVX]+[a-z]?[\])】>]?\s*[.:：]/i;

function captionsBelow(blocks: Block[]): void {
  for (let index = 0; index < blocks.length; index++) {
    const table = blocks[index]!;
    const next = blocks[index + 1];
    if (table.kind !== 'table' || table.caption?.length || next?.kind !== 'paragraph') continue;
    const text = textOf(next.content).trim();
    if (!TABLE_CAPTION_BELOW.test(text) && !TABLE_LABEL_ONLY.test(text)) continue;
    const after = blocks[index + 2];
    if (TABLE_LABEL_ONLY.test(text) && after?.kind === 'paragraph' && !TABLE_CAPTION.test(textOf(after.content))) {
      table.caption = [...next.content, { kind: 'text', text: ' ' }, ...after.content];
      blocks.splice(index + 1, 2);
    } else {
      table.caption = next.content;
      blocks.splice(index + 1, 1);
    }
  }
}

/**
 * "Table 1: …" just above a table is its one caption. A label set apart from
 * its text ("Table 1." in bold, then the text as a paragraph of its own) is
 * one caption too, not a paragraph, another paragraph and a made-up label.
 */
function takeCaption(blocks: Block[], table: Block & { kind: 'table' }): void {
  const last = blocks.at(-1);
  if (last?.kind !== 'paragraph') return;
  if (TABLE_CAPTION.test(textOf(last.content))) {
    blocks.pop();
    table.caption = last.content;
    return;
  }
  const before = blocks.at(-2);
  if (before?.kind === 'paragraph' && TABLE_LABEL_ONLY.test(textOf(before.content).trim())) {
    blocks.splice(-2, 2);
    table.caption = [...before.content, { kind: 'text', text: ' ' }, ...last.content];
  }
}

/**
 * Leaders set apart from the rest of their line by a wide space are cut into
 * segments of their own; joined again, the line reads as what it is. A
 * section number before its title ("5.1   Hyper Parameter Optimization") is
 * a numbered heading; a bullet glyph before its item's text ("•   IBM MT/ST
 * …") opens a list item instead of standing as a paragraph holding only "•".
 */
function joinLeaders(column: Segment[], tables: Map<Segment, unknown>, headingStyle: (segment: Segment) => boolean): Segment[] {
  const numbered = joinWithNext(column, tables, (segment, next) =>
    headingStyle(next) &&
    Math.abs(next.y - segment.y) < 1 &&
    next.font === segment.font &&
    next.x - segment.right < segment.size * 3 &&
    // the number alone in its piece, and with the next piece a numbered title as the document's levels read one
    !/\s/.test(segment.text) &&
    numberingDepth(`${segment.text} ${next.text}`)?.family === 'dotted'
      ? [...segment.runs, { text: ' ' }]
      : undefined,
  );
  return joinWithNext(numbered, tables, (segment, next) =>
    !tables.has(next) &&
    LONE_BULLET.test(segment.text) &&
    Math.abs(next.y - segment.y) < Math.max(segment.size, next.size) * 0.4 &&
    next.x > segment.x &&
    next.x - segment.right < next.size * 4 &&
    !BULLET.test(next.text)
      ? [{ text: `${segment.text} ` }]
      : undefined,
  );
}

/** Each segment (not a table's) that `leads` the next one, given the runs it puts before it, joined to it. */
function joinWithNext(column: Segment[], tables: Map<Segment, unknown>, leads: (segment: Segment, next: Segment) => Run[] | undefined): Segment[] {
  const out: Segment[] = [];
  for (let index = 0; index < column.length; index++) {
    const segment = column[index]!;
    const next = column[index + 1];
    const leader = next && !tables.has(segment) ? leads(segment, next) : undefined;
    if (!next || !leader) {
      out.push(segment);
      continue;
    }
    out.push({ ...next, x: segment.x, text: `${segment.text} ${next.text}`, runs: [...leader, ...next.runs] });
    index++;
  }
  return out;
}

/**
 * Lines a little bigger than the page's body that run on as a paragraph: three
 * or more of one size, one under the other at a line's pitch (an italic word
 * may set a line's main font apart, so the font is not asked). A
 * page of small print (a reference list at 8 pt) makes the document's real
 * body text (9.3 pt) look like headings by size; set as a paragraph, it is
 * not one. Big type (a title over several lines) is left to the size rule.
 */
function proseRuns(column: Segment[], body: number, candidate: (segment: Segment) => boolean): Set<Segment> {
  // the lines of a column may alternate with another column's (a page read as one column): chains are found by position
  const lines = column.filter((segment) => candidate(segment) && segment.size < body * 1.4);
  const follows = (a: Segment, b: Segment) => Math.abs(a.size - b.size) < 0.3 && Math.abs(a.x - b.x) < a.size * 2 && a.y - b.y > 0 && a.y - b.y <= a.size * 1.6;
  const prose = new Set<Segment>();
  const seen = new Set<Segment>();
  for (const start of lines) {
    if (seen.has(start)) continue;
    const chain = [start];
    seen.add(start);
    for (let index = 0; index < chain.length; index++) {
      for (const other of lines) {
        if (!seen.has(other) && (follows(chain[index]!, other) || follows(other, chain[index]!))) {
          seen.add(other);
          chain.push(other);
        }
      }
    }
    if (chain.length >= 3) for (const segment of chain) prose.add(segment);
  }
  return prose;
}

/**
 * A line whose sentence runs on into the smaller line under it, at a line's pitch, in lowercase ("… the professional
 * musician. It is" over "extremely powerful, yet …"): a paragraph's first line set or read a little big, not a heading.
 */
function runsOnSmaller(segment: Segment, next: Segment | undefined, gapFor: (size: number) => number): boolean {
  if (!next || next.size >= segment.size - 0.5 || !sentenceRunsOn(segment.runs, next)) return false;
  const below = segment.y - next.y;
  return below > 0 && below <= gapFor(segment.size);
}

/** Whether the sentence of `runs` is unfinished and goes on into `next` in lowercase. */
const sentenceRunsOn = (runs: Run[], next: Segment) => /^\p{Ll}/u.test(next.text) && !endsSentence(runs);

/**
 * Whether a paragraph's sentence runs on from its last line into a line of another size: both full lines of the column
 * (not a figure's label or a formula's piece), the sentence unfinished and the line going on in lowercase (a first line
 * OCR read a size over the rest).
 */
function runsOnAcrossSizes(last: Segment, segment: Segment, runs: Run[], columnWidth: number): boolean {
  const full = (line: Segment) => line.right - line.x >= columnWidth * 0.6;
  return full(last) && full(segment) && sentenceRunsOn(runs, segment);
}

/**
 * Whether a marker opening a line enumerates inside the paragraph's sentence rather than opening a list: the line before
 * is a full line of the column whose sentence runs on unfinished (no stop, no colon), and the marker's line starts
 * where it does ("… are to ensure" over "(i) adequate breast development, (ii) pubertal growth").
 */
function enumeratesInline(paragraph: { runs: Run[]; last: Segment }, segment: Segment, columnWidth: number): boolean {
  const { last } = paragraph;
  if (last.right - last.x < columnWidth * 0.8 || Math.abs(segment.x - last.x) >= segment.size * 0.5) return false;
  // a full line ending in a name's initial runs on into the name ("… R.A. Sherif, H." over "A. Atwater, N.H. Karam")
  return (/[\p{L}\p{N},]$/u.test(last.text) && !endsSentence(paragraph.runs)) || (INITIAL_ENDS.test(last.text) && INITIAL_OPENS.test(segment.text));
}

/** A line ending in an initial after a name's comma or another initial ("Sherif, H.", "N.H."). */
const INITIAL_ENDS = /(?:,\s*|\p{Lu}\.)\p{Lu}\.$/u;
/** A line opening with an initial and a surname's comma ("A. Atwater,"). */
const INITIAL_OPENS = /^\p{Lu}\.\s*\p{Lu}[\p{Ll}'’-]+,/u;

/** The letter of a lettered list's marker ("b." → "b"); none for a number's, a roman numeral's or a bullet's. */
const letterOf = (marker: string) => /^\(?([a-hj-uwyz])[.)]/i.exec(marker)?.[1];

/**
 * A number's or letter's list marker at the start of a line, unless it is none: a capital and a full stop other than a
 * roman numeral's opens a list only as "A." or as the letter after the list's last ("J. R. Carroway," signing a letter,
 * is a name; so is "O. B. d. A."), and three digits in parentheses before more digits are a telephone's area code
 * ("(818) 708-8131"), where "1. 1978: WordStar" stays a list's item. Lower-case letters and letters in parentheses are
 * lists' wherever they stand ("b)" after an "a)" inside a definition's first line).
 */
function enumeratorOf(text: string, lastLetter: string | undefined): RegExpExecArray | null {
  const marker = ENUMERATOR.exec(text);
  if (!marker) return null;
  // (I, V and X are roman numerals)
  const capital = /^([A-HJ-UWYZ])\.$/.exec(marker[1]!)?.[1];
  if (capital && capital !== 'A' && capital.charCodeAt(0) - 1 !== lastLetter?.toUpperCase().charCodeAt(0)) return null;
  if (/^\(\d{3}\)$/.test(marker[1]!) && /^\d/.test(text.slice(marker[0].length))) return null;
  return marker;
}

/** A sentence a little bigger than the body ("The authors have no potential conflicts of interest."): five words or more and a full stop. */
function modestSentence(segment: Segment, body: number): boolean {
  return segment.size < body * 1.4 && /[^.]\.$/.test(segment.text) && segment.text.split(/\s+/).length >= 5;
}

/** Code tokens no heading has: angle-bracket placeholders, braces, a statement's semicolon, an assignment. */
const CODE_TOKENS = /[<>{}]|;\s*$|\s=\s|\(\s*\)/;
const KEYWORDS_ONLY = /^[A-Z][A-Z0-9_]*(\s+[A-Z0-9_<>,;()]+)*;?$/;

/**
 * The share of a line's letters set in a face that is not monospaced: prose that names a function in the typewriter
 * face ("panded using asn1_create_element() .", mostly typewriter by its letters) is prose, where a listing is
 * typewriter throughout.
 */
function proseLetterShare(segment: Segment, monoFonts: Set<string>): number {
  let letters = 0;
  let prose = 0;
  for (const item of segment.items ?? []) {
    const count = (item.text.match(/\p{L}/gu) ?? []).length;
    letters += count;
    if (!monoFonts.has(item.font)) prose += count;
  }
  return letters === 0 ? 0 : prose / letters;
}

/** A contents page's entry: its title, a leader of dots and its page number (arabic or roman). */
const CONTENTS_ENTRY = /(\.\s*){4,}\s*(\d+|[ivxlc]+|[IVXLC]+)$/;
/** How much of a paragraph's end CONTENTS_ENTRY looks at: a leader's last dots and the number. */
const CONTENTS_TAIL = 40;

/** Marks of code in a line: brackets and operators prose does not use, a call's parentheses, a statement's end. */
const CODE_MARKS = /[{}<>=[\]|\\]|\w\(|;\s*$/;
/** A comment's leader opening a line. */
const COMMENT_LEADER = /^(\/\/|\/\*|\*|#|--|%|;)/;

/**
 * A typescript: a run of lines in a typewriter face that reads as prose (a letter, a filing, a report typed in
 * Courier) is text, not a listing. Its lines are long, nearly all letters, without code's marks or comment leaders,
 * and it has a sentence's end. `mono` says which lines are set monospaced; the lines of such runs are unmarked.
 */
function typescriptAsProse(column: Segment[], mono: boolean[]): boolean[] {
  const out = [...mono];
  for (let start = 0; start < column.length; start++) {
    if (!mono[start]) continue;
    let end = start;
    while (end + 1 < column.length && mono[end + 1]) end++;
    const segments = column.slice(start, end + 1);
    const run = segments.map((segment) => segment.text.trim());
    const visible = run.join('').replace(/\s/g, '');
    const letters = (visible.match(/\p{L}/gu) ?? []).length;
    // a justified line's wide gaps part it into pieces: the length is the row's
    const rows = new Set(segments.map((segment) => Math.round(segment.y))).size;
    const prose =
      rows >= 2 &&
      visible.length >= rows * 40 &&
      letters >= visible.length * 0.85 &&
      run.every((line) => !CODE_MARKS.test(line) && !COMMENT_LEADER.test(line)) &&
      /\p{Ll}[.!?]\s+\p{Lu}|\p{Ll}[.!?]$/mu.test(run.join('\n'));
    if (prose) out.fill(false, start, end + 1);
    start = end;
  }
  return out;
}

/**
 * The lines of a column that are code: set in a monospaced font, or, among
 * lines big enough to pass for headings, those with code tokens and the
 * upper-case keyword lines next to them (a syntax block: "CREATE PERMISSION
 * <name>", "ON <table>", "FOR ROWS", "ENABLE", "DISABLE;").
 */
function codeLines(column: Segment[], looksLikeHeading: (segment: Segment) => boolean, monoFonts: Set<string>): Set<Segment> {
  // monospaced lines: a listing is two lines or more, or one with code tokens; a lone address or bullet glyph in Courier is prose
  const mono = typescriptAsProse(
    column,
    column.map((segment) => monoFonts.has(segment.font) && !BULLET.test(`${segment.text} `) && proseLetterShare(segment, monoFonts) <= 0.1),
  );
  const code = new Set(
    column.filter(
      (segment, index) => mono[index] && (mono[index - 1] || mono[index + 1] || /[{}();=]/.test(segment.text)) && !/^\S+@\S+$|^https?:\/\//.test(segment.text),
    ),
  );
  const candidates = column.filter(looksLikeHeading);
  const marked = new Set(candidates.filter((segment) => CODE_TOKENS.test(segment.text)));
  if (marked.size === 0) return code;
  let grown = true;
  while (grown) {
    grown = false;
    for (const [index, segment] of candidates.entries()) {
      if (marked.has(segment) || !KEYWORDS_ONLY.test(segment.text)) continue;
      if (marked.has(candidates[index - 1]!) || marked.has(candidates[index + 1]!)) {
        marked.add(segment);
        grown = true;
      }
    }
  }
  for (const segment of marked) code.add(segment);
  return code;
}

function textOf(list: Inline[]): string {
  return list
    .map((item) => (item.kind === 'text' || item.kind === 'code' || item.kind === 'math' ? item.text : 'children' in item ? textOf(item.children) : ''))
    .join('');
}

/**
 * Whether a line opens the next entry of a list set with a hanging indent (a
 * reference list): it starts where the paragraph's first line started, and
 * every line since was indented by one and the same step of one to four
 * sizes. Lines that merely start a little apart (an OCR layer's, text wrapped
 * around a picture) are not so regular.
 */
function hangsFrom(lefts: number[], segment: Segment): boolean {
  const [first, ...rest] = lefts;
  return (
    first !== undefined &&
    rest.length > 0 &&
    Math.abs(segment.x - first) <= segment.size * 0.3 &&
    startAlike(rest, segment.size) &&
    indentStep(first, rest[0]!, segment.size) !== undefined
  );
}

/**
 * How far a line stands out to the left of a paragraph's lines, where two or
 * more of them all start at one place and the line one to four sizes left of
 * it: the next entry of a list set with a hanging indent, after an entry whose
 * first line was on the page before.
 */
function outdentedFrom(lefts: number[], segment: Segment): number | undefined {
  return lefts.length >= 2 && startAlike(lefts, segment.size) ? indentStep(segment.x, lefts[0]!, segment.size) : undefined;
}

/** Lines that start at one place, within a fifth of the size. */
const startAlike = (lefts: number[], size: number) => lefts.every((left) => Math.abs(left - lefts[0]!) <= size * 0.2);

/** The step in from `from` to `to` when it is a list's indent, one to four sizes; else undefined. */
function indentStep(from: number, to: number, size: number): number | undefined {
  const step = to - from;
  return step >= size * 0.8 && step <= size * 4 ? step : undefined;
}

/** Whether runs end a sentence, a reference's raised mark after its full stop counted with it ("… cell line.⁵˒⁶"). */
function endsSentence(runs: Segment['runs']): boolean {
  let index = runs.length - 1;
  while (index >= 0 && (runs[index]!.text.trim() === '' || (runs[index]!.sup && REFERENCE_MARK.test(runs[index]!.text.trim())))) index--;
  return index >= 0 && /[.!?:”"]\s*$/.test(runs[index]!.text);
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
 * A display formula: a line of mathematics alone on its row (but for its
 * equation number, which it returns), set off from the text (indented from
 * the column's left edge, or after a line ending in a colon). A formula line
 * flush with the text may be the end of a sentence.
 */
function displayFormula(segment: Segment, column: Segment[], previous: Segment | undefined): { number?: Segment } | undefined {
  // an enumerated line ("(i) d(A, B) = …") stays a list item
  if (
    !(isFormulaLine(segment.text, segment.mathLetters) || formulaRow(segment)) ||
    BULLET.test(segment.text) ||
    ENUMERATOR.test(segment.text) ||
    /^\(?[ivx]{1,4}\)/.test(segment.text)
  )
    return undefined;
  const number = equationNumber(segment, column);
  if (column.some((other) => other !== segment && other !== number && Math.abs(other.y - segment.y) < 1)) return undefined;
  const left = Math.min(...column.map((other) => other.x));
  return segment.x >= left + segment.size * 1.5 || (previous !== undefined && /:$/.test(previous.text)) ? { number } : undefined;
}

/**
 * A line of inline formulas (inline-math.ts read them from their glyphs) that opens with one holding a relation: the
 * rest is formulas, punctuation and at most four words of a condition ("∂tu − ∆u = f in Ω × (0, T)", CONDITION_WORDS).
 */
function formulaRow(segment: Segment): boolean {
  const runs = segment.runs.filter((run) => run.text.trim() !== '');
  return runs[0]?.math !== undefined && RELATION.test(runs[0].text) && conditionWordsOnly(runs);
}

/** Whether the runs that are no formula hold at most four words, each a condition's (CONDITION_WORDS). */
function conditionWordsOnly(runs: Run[]): boolean {
  const words = runs.filter((run) => !run.math).flatMap((run) => run.text.match(/\p{L}+/gu) ?? []);
  return words.length <= 4 && words.every((word) => CONDITION_WORDS.has(word.toLowerCase()));
}

/** TeX of a formula row: its formulas' TeX, a quad between formulas set apart, its words as text. */
function rowTex(runs: Run[]): string {
  let tex = '';
  let afterMath = false;
  for (const run of runs) {
    const text = run.text.trim();
    if (run.math) {
      tex += afterMath ? `\\qquad ${run.math}` : run.math;
      afterMath = true;
    } else if (/\p{L}/u.test(text)) {
      tex += `\\quad\\text{${text} }`;
      afterMath = false;
    } else if (text !== '') {
      tex += /[,;]$/.test(text) ? `${text}\\qquad ` : text;
      afterMath = false;
    }
  }
  return tex.replace(/\\qquad\s*\\qquad/g, '\\qquad').trim();
}

/**
 * The pieces of a display line that TeX spaces apart (\\quad, \\qquad: two equations, or an equation and its
 * condition) as one segment: a row opening with one formula holding a relation, whose next pieces are formulas or a few
 * words of a condition before one, each at most three sizes from the last.
 */
function joinFormulaRows(column: Segment[], tables: ReadonlyMap<Segment, unknown>): Segment[] {
  const piece = (segment: Segment) => segment.runs.some((run) => run.math) && conditionWordsOnly(segment.runs);
  const out: Segment[] = [];
  for (let index = 0; index < column.length; index++) {
    const first = column[index]!;
    const row = [first];
    if (!tables.has(first) && formulaRow(first))
      for (let next = column[index + 1]; next; next = column[index + row.length]) {
        const last = row.at(-1)!;
        if (tables.has(next) || Math.abs(next.y - first.y) > 1 || next.x < last.right || next.x - last.right > first.size * 3 || !piece(next)) break;
        row.push(next);
      }
    if (row.length === 1) {
      out.push(first);
      continue;
    }
    const last = row.at(-1)!;
    out.push({
      ...first,
      right: last.right,
      size: Math.max(...row.map((segment) => segment.size)),
      text: row.map((segment) => segment.text).join(' '),
      runs: row.flatMap((segment, at) => (at === 0 ? segment.runs : [{ text: ' ' }, ...segment.runs])),
      fonts: [...new Set(row.flatMap((segment) => segment.fonts ?? [segment.font]))],
    });
    index += row.length - 1;
  }
  return out;
}

/** An equation number: "(1)", "(2.3)", "(4a)", "(A.1)", "(*)". */
const EQUATION_NUMBER = /^\(\s*(?:[A-Z]\.)?\d+(?:[.-]\d+)*[a-z]?\s*\)$|^\(\s*\*+\s*\)$/;

/** The equation number on a display formula's row, set apart at its right (TeX puts it at the margin). */
function equationNumber(segment: Segment, column: Segment[]): Segment | undefined {
  return column.find(
    (other) =>
      other !== segment &&
      Math.abs(other.y - segment.y) < segment.size * 0.3 &&
      other.x >= segment.right + segment.size * 1.5 &&
      EQUATION_NUMBER.test(other.text),
  );
}

/** A formula's text as printed, its number after it (heard with it, as a reader sees it) */
const withNumber = (text: string, number: Segment | undefined) => (number ? `${text} ${number.text}` : text);

/** A formula's tag from its number: "(2.3)" tags it 2.3. */
const tagOf = (number: Segment | undefined): { tag?: string } => (number ? { tag: number.text.replace(/^\(\s*|\s*\)$/g, '') } : {});
