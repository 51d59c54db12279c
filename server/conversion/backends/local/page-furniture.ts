import { edgeKey, type EdgeLines } from './running-heads.ts';
import { bodySize, median, type Segment } from './segments.ts';

/**
 * Page furniture of an untagged page: lines that belong to the page, not to
 * the text (running heads and feet, page numbers). They become artifacts:
 * out of the reading flow.
 */

export type Furniture = { kept: Segment[]; dropped: Segment[] };

/** Running heads and feet: a top or bottom line that recurs at the same edge of a nearby page. */
export function dropRunningHeads(segments: Segment[], neighbours: EdgeLines[] | undefined): Furniture {
  if (!neighbours || neighbours.length === 0 || segments.length <= 4) return { kept: segments, dropped: [] };
  const tops = new Set(neighbours.flatMap((edges) => edges.top));
  const bottoms = new Set(neighbours.flatMap((edges) => edges.bottom));
  const byRow = rowsOf(segments);
  const ys = [...byRow.keys()].sort((a, b) => b - a);
  const lineKey = (y: number) => edgeKey(rowText(byRow.get(y)!, true));
  const drop = new Set<number>();
  for (const y of ys.slice(0, 2)) if (tops.has(lineKey(y))) drop.add(y);
  for (const y of ys.slice(-2)) if (bottoms.has(lineKey(y))) drop.add(y);
  if (drop.size === 0) return { kept: segments, dropped: [] };
  return split(segments, (segment) => drop.has(Math.round(segment.y)));
}

/**
 * A page number as it stands alone: "12", "- 12 -", "xiv", "Page 12 of 40", "12/40", a word processor's "12 | P a g e"
 * (its "Page" spaced out), "Seite 12", "Página 12 de 40".
 */
const PAGE_NUMBER =
  /^((page|seite|página|pagina)\s+)?[-–]?\s*(\d{1,5}|(?=[ivxlc])c{0,3}(xc|xl|l?x{0,3})(ix|iv|v?i{0,3}))\s*[-–]?(\s*(of|von|de|sur|di|\/)\s*\d+)?$|^\d{1,5}\s*\|\s*p\s?a\s?g\s?e$|^p\s?a\s?g\s?e\s*\|\s*\d{1,5}$/i;

/** How far into the page (a share of its height) a page number stands, from the top or the bottom edge. */
const PAGE_NUMBER_BAND = 0.3;

/**
 * Bare page numbers on the top line, in the page's upper band, or on the bottom line, in its lower band: a page that
 * ends early (a table's last row, its count the lowest line, high on the page) has no page number there.
 */
export function dropPageNumbers(segments: Segment[], pageHeight: number): Furniture {
  if (segments.length <= 1) return { kept: segments, dropped: [] };
  const top = Math.max(...segments.map((segment) => segment.y));
  const bottom = Math.min(...segments.map((segment) => segment.y));
  // set apart from the text by a margin: a lone "x" just under a sum is the sum's limit, not page ten
  const apart = (segment: Segment) =>
    !segments.some(
      (other) => other !== segment && Math.abs(other.y - segment.y) > 1 && Math.abs(other.y - segment.y) < Math.max(other.size, segment.size) * 1.5,
    );
  const band = pageHeight * PAGE_NUMBER_BAND;
  const atEdge = (segment: Segment) => (segment.y <= bottom + 1 && segment.y < band) || (segment.y >= top - 1 && segment.y > pageHeight - band);
  return split(segments, (segment) => atEdge(segment) && PAGE_NUMBER.test(segment.text) && apart(segment));
}

/**
 * A watermark: type twice the body's size or more, set over the body's lines ("DRAFT", "CONFIDENTIAL" across a page,
 * at an angle or not): lines of the body run through its letters, their baselines between a tenth and six tenths of its
 * size over its own. Left in, it stands in the reading order between two of the lines it covers and cuts their
 * paragraph in two. A big title has no line through it, and a drop cap stands beside the lines it spans, not over them.
 * Big type at a slant is a watermark wherever it lies (across the blank half of a page a short table leaves): no
 * heading or title is set at an angle to the page's lines.
 */
export function dropWatermarks(segments: Segment[], body: number): Furniture {
  if (!segments.some((segment) => segment.size >= body * 2)) return { kept: segments, dropped: [] };
  const lines = segments.filter((segment) => !segment.rotated && segment.size < body * 1.5);
  const covers = (mark: Segment) =>
    lines.filter((line) => line.x < mark.right && line.right > mark.x && line.y > mark.y + mark.size * 0.1 && line.y < mark.y + mark.size * 0.6).length;
  return split(segments, (segment) => segment.size >= body * 2 && (segment.slanted === true || covers(segment) >= 2));
}

/** Line numbers down a margin, at least this many: a manuscript's, a pleading's, a review copy's. */
const MIN_LINE_NUMBERS = 8;

/**
 * Line numbers in a page's margin (a manuscript under review, a court pleading, a conference's review copy): bare
 * numbers, one over another at one left or right edge, outside the text beside them, rising down the page by one step
 * (1, 2, 3 or 5, 10, 15), most on the baseline of a line of text and most lines of the stretch numbered. Left in, each
 * number parts its line from the next and the page reads as one paragraph per line. A contents page's chapter numbers
 * stand between entries that have none, at more than a line apart, and stay.
 */
export function dropLineNumbers(segments: Segment[]): { kept: Segment[]; dropped: Segment[]; label?: string } {
  const numbers = segments.filter((segment) => /^\d{1,4}$/.test(segment.text) && !segment.rotated);
  if (numbers.length < MIN_LINE_NUMBERS) return { kept: segments, dropped: [] };
  const isNumber = new Set(numbers);
  const text = segments.filter((segment) => !isNumber.has(segment));
  if (text.length === 0) return { kept: segments, dropped: [] };
  const textLeft = Math.min(...text.map((segment) => segment.x));
  const textRight = Math.max(...text.map((segment) => segment.right));
  const found = new Set<Segment>();
  for (const side of [numbers.filter((segment) => segment.right < textLeft - 4), numbers.filter((segment) => segment.x > textRight + 4)]) {
    const run = numberRun(side, text);
    if (run) for (const segment of run) found.add(segment);
  }
  if (found.size === 0) return { kept: segments, dropped: [] };
  const values = [...found].map((segment) => Number(segment.text));
  return {
    ...split(segments, (segment) => found.has(segment)),
    label: `line numbers ${Math.min(...values)}–${Math.max(...values)}`,
  };
}

/** The numbers of one margin that count its lines, top to bottom, or none. */
function numberRun(side: Segment[], text: Segment[]): Segment[] | undefined {
  if (side.length < MIN_LINE_NUMBERS) return undefined;
  const ordered = [...side].sort((a, b) => b.y - a.y);
  // one over another: their right edges (or left edges) line up
  const lined = (edge: (segment: Segment) => number) => {
    const sorted = ordered.map(edge).sort((a, b) => a - b);
    return sorted[sorted.length - 1]! - sorted[0]! <= 3;
  };
  if (!lined((segment) => segment.right) && !lined((segment) => segment.x)) return undefined;
  const values = ordered.map((segment) => Number(segment.text));
  const steps = values.slice(1).map((value, index) => value - values[index]!);
  const step = mode(steps);
  if (step === undefined || step <= 0 || steps.filter((each) => each === step).length < steps.length * 0.8) return undefined;
  // a line of text on (nearly) each number's baseline, and the numbers a line pitch apart for each step (every fifth line
  // numbered 5, 10, 15), not entries' spacing
  const size = median(text.map((segment) => segment.size));
  const onLine = ordered.filter((number) => text.some((segment) => Math.abs(segment.y - number.y) <= size * 0.4));
  const pitches = ordered.slice(1).map((number, index) => ordered[index]!.y - number.y);
  if (onLine.length < ordered.length * 0.7 || median(pitches) > size * 2.6 * step) return undefined;
  return ordered;
}

function mode(values: number[]): number | undefined {
  const counts = new Map<number, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  let best: number | undefined;
  for (const [value, count] of counts) if (best === undefined || count > counts.get(best)!) best = value;
  return best;
}

function split(segments: Segment[], isFurniture: (segment: Segment) => boolean): Furniture {
  const kept: Segment[] = [];
  const dropped: Segment[] = [];
  for (const segment of segments) (isFurniture(segment) ? dropped : kept).push(segment);
  return { kept, dropped };
}

/**
 * Lines that say what they are, on a page that stands alone (the first page
 * of an article, a one-page document, a sampled page): a copyright or
 * licence line, a DOI, "Downloaded from …", a journal's volume and issue
 * line. Position decides with the pattern: only the two top or bottom rows of
 * the page, in its top or bottom tenth; a line of the body that cites a DOI
 * stays.
 */
const SAYS_FURNITURE = [
  /©|\bcopyright\b|\ball rights reserved\b/i,
  /\bdownloaded (from|by|on)\b/i,
  /\bdoi\s*:?\s*10\.\d{4,9}\/|\bdoi\.org\/10\./i,
  /\blicen[cs]ed under\b|\bcreative commons\b|\bCC[- ]BY\b/i,
  /\b(vol\.?|volume)\s*\d+\b.*\b(no\.?|issue|pp\.?)\s*\d+/i,
];

/**
 * Shapes that say less on their own (a body line may cite a URL, a reference
 * may end "pages 101–112"): a proceedings line or its page range, a journal
 * line with its year and volume, a URL, "Advance Access", an arXiv
 * identifier. They count only in rows of the margin band cut off from the
 * body by a gap, that open with no footnote's marker.
 */
const SUGGESTS_FURNITURE = [
  /\bproceedings of\b|\b(pages|pp\.?)\s*\d+\s*[-–—]\s*\d+/i,
  /\b(19|20)\d{2}\b.*\bvol\.?\s*\d+|\bvol\.?\s*\d+.*\b(19|20)\d{2}\b/i,
  /(https?:\/\/|www\.)\S+/i,
  /\badvance access\b|\bpublished online\b|\barxiv:\s*\d{4}\.\d{4,5}/i,
  // a venue's line over every page of a paper: "Published as a conference paper at ICLR 2024", "Under review as a
  // workshop paper at …", NeurIPS's "Preprint. Under review." at the foot
  /\b(published|accepted|under review|submitted)\b.{0,12}\b(conference|workshop|journal)\s+paper\b|^preprint\.?\s+(under review|work in progress)\b/i,
];

export function dropMarginLines(segments: Segment[], pageHeight: number): Furniture {
  if (segments.length <= 4 || !Number.isFinite(pageHeight)) return { kept: segments, dropped: [] };
  const byRow = rowsOf(segments);
  const rows = [...byRow.keys()].sort((a, b) => b - a);
  const edge = new Set([...rows.slice(0, 2).filter((y) => y > pageHeight * 0.9), ...rows.slice(-2).filter((y) => y < pageHeight * 0.1)]);
  const drop = new Set(
    [...edge].filter((y) => {
      const text = rowText(byRow.get(y)!, false);
      return text.length <= 200 && SAYS_FURNITURE.some((pattern) => pattern.test(text));
    }),
  );
  // walking in from each edge: a row that suggests furniture goes when a gap cuts it off from the body or every row
  // outside it went (a proceedings line over a copyright line)
  const setOff = setOffEdgeRows(rows, pageHeight, bodySize(segments));
  const walk = (ordered: number[], inBand: (y: number) => boolean) => {
    for (let index = 0; index < Math.min(3, ordered.length - 1); index++) {
      const y = ordered[index]!;
      if (!inBand(y)) return;
      if (drop.has(y)) continue;
      const row = byRow.get(y)!;
      const text = rowText(row, false);
      const suggests = text.length <= 200 && !row.some(opensNote) && SUGGESTS_FURNITURE.some((pattern) => pattern.test(text));
      if (!suggests || !(setOff.has(y) || (index > 0 && ordered.slice(0, index).every((outer) => drop.has(outer))))) return;
      drop.add(y);
    }
  };
  walk(rows, (y) => y > pageHeight * 0.9);
  walk([...rows].reverse(), (y) => y < pageHeight * 0.1);
  if (drop.size === 0) return { kept: segments, dropped: [] };
  return split(segments, (segment) => drop.has(Math.round(segment.y)));
}

/**
 * Running heads and feet on a page that stands alone, found by look rather
 * than by words: the rows at the top or bottom edge (its outer 15%), set
 * smaller than the body and cut off from the rows toward the body by more
 * than one and a half of the body's line pitch. Repetition across pages is
 * not needed (a sampled page, an article's first page), nor a pattern
 * ("Optimized Table Tokenization … 9", a two-line "Proceedings of …" foot).
 * A row that carried the page number is a head or foot at any size, when a
 * wider gap (2.5 pitches) sets it off ("208 Global Study … Annex 209"), and a
 * top row at the body's size when headAtBodySize says it is a running head.
 * An edge gives up to two groups of at most two rows (each group's rows
 * close together, the group set off). What must stay:
 * - a heading: it is set larger than the body, never smaller (judged by its
 *   letters' width as well as the size pdf.js reports);
 * - a caption under a figure at the page's top: it says "Figure 2" or "Table 1";
 * - a footnote at the foot: it starts with a marker in its own piece of text
 *   ("1 https://…", a raised "²"), where a page foot's number stands apart;
 *   a note's line carried from the page before is one piece at the body's left edge;
 * - a table's rows: pieces that line up with the next row's, at the same size;
 * - a drawing's labels and a ruled table's cells: this pass runs after they leave the flow.
 */
export function dropSetOffEdgeLines(segments: Segment[], pageHeight: number, body: number, numbered: Set<number>): Furniture {
  if (segments.length <= 4 || !Number.isFinite(pageHeight)) return { kept: segments, dropped: [] };
  const byRow = rowsOf(segments);
  const rows = [...byRow.keys()].sort((a, b) => b - a);
  const pitch = bodyPitch(rows, byRow, body);
  const atBody = segments.filter((segment) => Math.abs(segment.size - body) < 0.5);
  const bodyLeft = Math.min(...atBody.map((segment) => segment.x));
  const frame = { left: bodyLeft, right: Math.max(...atBody.map((segment) => segment.right)), body, numbered: numbered.size > 0 };
  const emPerChar = widthPerChar(atBody) / body;
  const drop = new Set<number>();
  const peel = (ordered: number[], atTop: boolean) => {
    let at = 0;
    for (let group = 0; group < 2; group++) {
      let end = at + 1;
      while (end < ordered.length && end - at < 2 && Math.abs(ordered[end - 1]! - ordered[end]!) <= pitch * 1.5) end++;
      if (end >= ordered.length) return;
      const gap = Math.abs(ordered[end - 1]! - ordered[end]!);
      const members = ordered.slice(at, end);
      const inBand = (y: number) => (atTop ? y >= pageHeight * 0.85 : y <= pageHeight * 0.15);
      const furniture = members.every((y, index) => {
        const row = byRow.get(y)!;
        const next = byRow.get(ordered[at + index + 1]!)!;
        if (!inBand(y) || gap <= pitch * 1.5 || tableRow(row, next) || !looksLikeFurniture(row, atTop, bodyLeft, body)) return false;
        // the page number beside it vouches for the size pdf.js reports: no misleading font matrix to check by width
        const small = row.every((segment) => segment.size <= body * 0.93 && (numbered.has(y) || drawnSize(segment, emPerChar) <= body * 0.93));
        return small || (members.length === 1 && ((numbered.has(y) && gap > pitch * 2.5) || (atTop && headAtBodySize(row, frame))));
      });
      if (!furniture) return;
      for (const y of members) drop.add(y);
      at = end;
    }
  };
  peel(rows, true);
  peel([...rows].reverse(), false);
  // the body must remain: a page of a few small lines far apart is not furniture around nothing
  if (drop.size === 0 || rows.length - drop.size < 3) return { kept: segments, dropped: [] };
  return split(segments, (segment) => drop.has(Math.round(segment.y)));
}

/**
 * A top row alone, at the body's size, that is a running head all the same: set flush right, clear of the body's left
 * edge, on a page that numbers itself elsewhere ("Shared MIME-info Database" over a specification's pages); or in
 * capitals, centred or flush right, no larger than the body, whose page number OCR may have left unread beside it
 * ("1.2. METRISCHE RÄUME", "THE HISTORY OF ROME."). A chapter's title is larger; a letter's date has no page number.
 */
function headAtBodySize(row: Segment[], frame: { left: number; right: number; body: number; numbered: boolean }): boolean {
  const { left, right, body, numbered } = frame;
  const x = Math.min(...row.map((segment) => segment.x));
  if (x - left <= body * 4) return false;
  if (numbered && row.length === 1 && Math.abs(row[0]!.right - right) < body * 0.5) return true;
  const text = rowText(row, true);
  const letters = text.match(/\p{L}/gu) ?? [];
  return (
    letters.length >= 4 &&
    letters.filter((letter) => /\p{Lu}/u.test(letter)).length >= letters.length * 0.8 &&
    text.split(/\s+/).length <= 8 &&
    row.every((segment) => segment.size <= body * 1.05)
  );
}

const CAPTION = /^\s*(fig(ure)?|table|tab|chart|plate|exhibit|listing|algorithm)\.?\s*[\dIVX]/i;

function looksLikeFurniture(row: Segment[], atTop: boolean, bodyLeft: number, body: number): boolean {
  const ordered = [...row].sort((a, b) => a.x - b.x);
  const text = ordered.map((segment) => segment.text).join(' ');
  // a lone number or symbol is a page number's business (dropPageNumbers) or a formula's index, not a head
  if ((text.match(/\p{L}/gu) ?? []).length < 3 || text.split(/\s+/).length > 20 || CAPTION.test(text)) return false;
  if (atTop) return true;
  if (row.some(opensNote)) return false;
  return row.length > 1 || Math.abs(row[0]!.x - bodyLeft) > body;
}

/** A footnote's first piece: a raised marker, or a number, symbol or superscript digit before its text (not a number alone). */
function opensNote(segment: Segment): boolean {
  const first = segment.runs.find((run) => run.text.trim() !== '');
  return Boolean(first?.sup) || (/^\s*(\d{1,3}\)?|[*†‡§¶]{1,3}|[¹²³⁴⁵⁶⁷⁸⁹⁰]{1,3})\s*\S/u.test(segment.text) && !/^\s*\d+\s*$/.test(segment.text));
}

/**
 * The rows of the page's top and bottom tenth that a gap cuts off from the
 * body: up to three rows at each edge, above (below) a step between rows of
 * more than twice the page's usual step, and of the body's line (two
 * columns' rows interleave at less than a line).
 */
function setOffEdgeRows(rows: number[], pageHeight: number, body: number): Set<number> {
  const steps = rows.slice(1).map((y, index) => rows[index]! - y);
  const usual = Math.max(body * 1.2, [...steps].sort((a, b) => a - b)[Math.floor(steps.length / 2)] ?? 0);
  const out = new Set<number>();
  const peel = (ordered: number[], inBand: (y: number) => boolean) => {
    for (let count = 1; count <= 3 && count < ordered.length; count++) {
      if (!inBand(ordered[count - 1]!)) return;
      if (Math.abs(ordered[count - 1]! - ordered[count]!) > usual * 2) {
        for (const y of ordered.slice(0, count)) out.add(y);
        return;
      }
    }
  };
  peel(rows, (y) => y > pageHeight * 0.9);
  peel([...rows].reverse(), (y) => y < pageHeight * 0.1);
  return out;
}

/**
 * The size a piece of text is drawn at, judged by its width: a font whose
 * matrix misleads pdf.js reports a big title as 7 pt, but its letters take
 * the room of big ones.
 */
function drawnSize(segment: Segment, emPerChar: number): number {
  const width = widthPerChar([segment]);
  return Number.isFinite(width) && emPerChar > 0 && segment.text.length >= 8 ? Math.max(segment.size, width / emPerChar) : segment.size;
}

/** A capital is drawn about a third wider than the average letter of running text. */
const CAPITAL_WIDTH = 1.35;

/**
 * The room a piece's characters take, in average letters of running text: a running head set in capitals
 * ("1.2. METRISCHE RÄUME" at 9 pt over an 11 pt body) is as wide as body text, letter for letter, without being larger.
 */
function widthPerChar(segments: Segment[]): number {
  const chars = segments.reduce((sum, segment) => sum + segment.text.length + (CAPITAL_WIDTH - 1) * (segment.text.match(/\p{Lu}/gu) ?? []).length, 0);
  return chars === 0 ? Number.NaN : segments.reduce((sum, segment) => sum + segment.right - segment.x, 0) / chars;
}

/** A table's row: two or more of its pieces start or end where pieces of the next row, at the same size, do. */
function tableRow(row: Segment[], next: Segment[]): boolean {
  const lined = row.filter((segment) =>
    next.some((other) => Math.abs(other.size - segment.size) < 0.5 && (Math.abs(other.x - segment.x) < 2 || Math.abs(other.right - segment.right) < 2)),
  );
  return lined.length >= 2;
}

/** The body's baseline-to-baseline distance: the smallest step between neighbouring rows of body-size text that recurs. */
function bodyPitch(rows: number[], byRow: Map<number, Segment[]>, body: number): number {
  const atBody = (y: number) => byRow.get(y)!.some((segment) => Math.abs(segment.size - body) < 0.5);
  const steps: number[] = [];
  for (let index = 0; index + 1 < rows.length; index++) {
    const step = rows[index]! - rows[index + 1]!;
    if (atBody(rows[index]!) && atBody(rows[index + 1]!) && step >= body * 0.8 && step <= body * 2.5) steps.push(step);
  }
  // the smallest step the page keeps coming back to: the other steps part paragraphs, list items or display lines,
  // and a page of spaced-out definitions steps 24 more often than its paragraphs' 13.5 (read as 13 and 14: rows are
  // whole points, hence the point either way)
  for (const step of [...new Set(steps)].sort((a, b) => a - b)) {
    const near = steps.filter((other) => Math.abs(other - step) <= 1);
    if (near.length >= Math.max(2, steps.length / 5)) return near.reduce((sum, other) => sum + other, 0) / near.length;
  }
  return body * 1.2;
}

/**
 * A line set at an angle in the page's left or right margin (its outer
 * tenth): "Downloaded from … on …" up the side of a journal page, an arXiv
 * identifier. It is furniture wherever it falls along the edge; a page whose
 * text is mostly at an angle (a landscape table drawn turned) keeps it.
 */
export function dropRotatedMarginLines(segments: Segment[], pageWidth: number): Furniture {
  const rotated = segments.filter((segment) => segment.rotated);
  if (rotated.length === 0 || rotated.length * 5 > segments.length || !Number.isFinite(pageWidth)) return { kept: segments, dropped: [] };
  return split(segments, (segment) => segment.rotated === true && (segment.x < pageWidth * 0.1 || segment.x > pageWidth * 0.9));
}

/** Segments by their rounded baseline, each row in the order the segments came. */
export function rowsOf(segments: Segment[]): Map<number, Segment[]> {
  const rows = new Map<number, Segment[]>();
  for (const segment of segments) {
    const y = Math.round(segment.y);
    const row = rows.get(y);
    if (row) row.push(segment);
    else rows.set(y, [segment]);
  }
  return rows;
}

/** A row's text, its segments left to right when `sorted`, else in the order they came. */
export function rowText(row: Segment[], sorted: boolean): string {
  return (sorted ? [...row].sort((a, b) => a.x - b.x) : row).map((segment) => segment.text).join(' ');
}
