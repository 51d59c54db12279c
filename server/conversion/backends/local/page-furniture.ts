import { edgeKey, type EdgeLines } from './running-heads.ts';
import type { Segment } from './segments.ts';

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
  if (drop.size === 0) return { kept: segments, dropped: [] };
  return split(segments, (segment) => drop.has(Math.round(segment.y)));
}

const PAGE_NUMBER = /^(page\s+)?[-–]?\s*(\d{1,4}|[ivxlc]{1,6})\s*[-–]?(\s*(of|\/)\s*\d+)?$/i;

/** Bare page numbers on the top or bottom line. */
export function dropPageNumbers(segments: Segment[]): Furniture {
  if (segments.length <= 1) return { kept: segments, dropped: [] };
  const top = Math.max(...segments.map((segment) => segment.y));
  const bottom = Math.min(...segments.map((segment) => segment.y));
  return split(segments, (segment) => (segment.y <= bottom + 1 || segment.y >= top - 1) && PAGE_NUMBER.test(segment.text));
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

export function dropMarginLines(segments: Segment[], pageHeight: number): Furniture {
  if (segments.length <= 4 || !Number.isFinite(pageHeight)) return { kept: segments, dropped: [] };
  const rows = [...new Set(segments.map((segment) => Math.round(segment.y)))].sort((a, b) => b - a);
  const edge = new Set([...rows.slice(0, 2).filter((y) => y > pageHeight * 0.9), ...rows.slice(-2).filter((y) => y < pageHeight * 0.1)]);
  const rowText = (y: number) =>
    segments
      .filter((segment) => Math.round(segment.y) === y)
      .map((segment) => segment.text)
      .join(' ');
  const drop = new Set([...edge].filter((y) => rowText(y).length <= 200 && SAYS_FURNITURE.some((pattern) => pattern.test(rowText(y)))));
  if (drop.size === 0) return { kept: segments, dropped: [] };
  return split(segments, (segment) => drop.has(Math.round(segment.y)));
}
