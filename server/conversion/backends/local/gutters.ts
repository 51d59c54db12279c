import type { TextItem } from './text-layer.ts';

/**
 * Column gutters narrower than a word space. A scanned newspaper's OCR text
 * layer places each word by its own box: the columns' gaps are as narrow as
 * the gaps between words (5 pt at 10 pt type), and each column's lines sit on
 * baselines of their own, a few points off the next column's. Read by
 * baseline and gap, lines join words across the gutter, and the columns come
 * out interleaved. What tells a gutter from word spaces is that it runs down
 * the column: dozens of lines one over another leave a gap at the same x, and
 * almost none puts a word across it, where the gaps between words fall
 * anywhere. Each run of such lines is a gutter, a vertical wall between them.
 */

export type Gutter = { x: number; top: number; bottom: number };
type Line = { y: number; size: number; items: TextItem[] };

/** A gutter is left open by this many lines at least, */
const MIN_LINES = 10;
/** …or, between OCR's words, this many: a section's columns under their own headings may wander from the next section's. */
const MIN_OCR_LINES = 6;
/** and crossed by at most this share of them (OCR boxes are loose: a word may reach over it). */
const MAX_CROSSING = 0.1;
/** Lines without text at the gutter's x for this many of their sizes end it (a picture, a headline's white). */
const MAX_BLANK = 3;

/**
 * Gutters narrower than a word space (wider ones already part a line), with the stretch of page each runs down;
 * `anyWidth` for lines whose words nothing parted yet (OCR reads two columns' lines as one line).
 */
export function narrowGutters(lines: Line[], anyWidth = false): Gutter[] {
  const least = anyWidth ? MIN_OCR_LINES : MIN_LINES;
  if (lines.length < least * 2) return [];
  const words = lines.map((line) => line.items.filter((item) => item.text.trim() !== '' && !item.rotated).sort((a, b) => a.x - b.x));
  const width = Math.ceil(Math.max(0, ...words.flat().map((item) => item.x + item.width)));
  if (width === 0 || width > 20_000) return [];
  // how many lines leave a gap over each point of x, and how many put a word over it
  const gaps = new Uint32Array(width + 1);
  const crossings = new Uint32Array(width + 1);
  for (const list of words) {
    for (const item of list) for (let x = Math.max(0, Math.floor(item.x)); x < Math.min(width, item.x + item.width); x++) crossings[x]!++;
    for (let index = 1; index < list.length; index++) {
      const right = list[index - 1]!.x + list[index - 1]!.width;
      for (let x = Math.max(0, Math.ceil(right)); x < Math.min(width, list[index]!.x); x++) gaps[x]!++;
    }
  }
  // a candidate is the best point of each stretch of x that lines leave open far more often than they cross
  // (over the whole page: a headline across the columns crosses what runs open under it); between OCR's words, more
  // often than they cross (a scan's top half may be one column over a bottom half of two)
  const open = (x: number) => gaps[x]! >= least && crossings[x]! * (anyWidth ? 1 : 4) <= gaps[x]!;
  const score = (x: number) => gaps[x]! - crossings[x]! * 4;
  const candidates: number[] = [];
  for (let x = 0; x <= width; x++) {
    if (!open(x)) continue;
    let best = x;
    for (; x + 1 <= width && open(x + 1); x++) if (score(x + 1) > score(best)) best = x + 1;
    // two stretches a few points apart are one gutter whose middle a word reaches into
    const last = candidates.at(-1);
    if (last !== undefined && best - last < 8) {
      if (score(best) > score(last)) candidates[candidates.length - 1] = best;
    } else candidates.push(best);
  }
  const out: Gutter[] = [];
  for (const x of candidates) out.push(...runsAt(x, lines, words, least, anyWidth));
  return out;
}

/** The stretches down the page where lines leave a narrow gap at x, crossed by few words. */
function runsAt(x: number, lines: Line[], words: TextItem[][], least: number, anyWidth: boolean): Gutter[] {
  const out: Gutter[] = [];
  let run: { top: number; bottom: number; open: number; crossed: number; widths: number[]; sizes: number[] } | undefined;
  let crossedInARow = 0;
  const close = () => {
    if (run && run.open >= least && run.crossed <= run.open * MAX_CROSSING && (anyWidth || narrow(run.widths, run.sizes)))
      out.push({ x, top: run.top, bottom: run.bottom });
    run = undefined;
  };
  for (const [index, line] of lines.entries()) {
    const list = words[index]!;
    const crossing = list.some((item) => item.x < x && item.x + item.width > x);
    const gapIndex = list.findIndex((item, at) => at > 0 && list[at - 1]!.x + list[at - 1]!.width <= x && item.x >= x);
    if (run && run.bottom - line.y > line.size * MAX_BLANK && !crossing && gapIndex < 0) close();
    if (crossing) {
      crossedInARow++;
      // a headline or a picture's caption across the columns ends the gutter; one loose word box does not
      if (crossedInARow >= 2) close();
      else if (run) run.crossed++;
      continue;
    }
    crossedInARow = 0;
    if (gapIndex < 0) continue;
    // a gap wider than two sizes is white beside a picture or a short line, not the gutter between two lines' words
    const gap = list[gapIndex]!.x - (list[gapIndex - 1]!.x + list[gapIndex - 1]!.width);
    if (gap > line.size * 2) continue;
    run ??= { top: line.y + line.size, bottom: line.y, open: 0, crossed: 0, widths: [], sizes: [] };
    run.open++;
    run.bottom = line.y - line.size * 0.3;
    run.widths.push(gap);
    run.sizes.push(line.size);
  }
  close();
  return out;
}

/** Most of the run's gaps are narrower than a word space may be (a wider gutter already parts its lines). */
function narrow(widths: number[], sizes: number[]): boolean {
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
  return median(widths) < median(sizes);
}

/** Which side of each gutter an item is on, as a key: items with one key are in one column's stretch. */
export function stripOf(item: TextItem, gutters: Gutter[]): string {
  const middle = item.x + item.width / 2;
  let key = '';
  for (const [index, gutter] of gutters.entries()) if (item.y <= gutter.top && item.y >= gutter.bottom && middle > gutter.x) key += `${index},`;
  return key;
}
