import type { Block } from '../../model.ts';
import type { Rule } from './drawing.ts';
import { runsToInlines, stripPrefix, type Run } from './inline.ts';
import type { Segment } from './segments.ts';

/** A footnote marker at the start of a line: "1)", "*", "†", "¹", or a number before a word. */
export const NOTE_MARKER = /^\s*(\d{1,3}\)|[*†‡§¶]{1,3}|[¹²³⁴⁵⁶⁷⁸⁹⁰]{1,3}|\d{1,3}(?=\s+\p{L}))\s*/u;
const SUPERSCRIPT_DIGITS = '⁰¹²³⁴⁵⁶⁷⁸⁹';

/** The label a marker stands for: "1)" and "¹" both mean note 1. */
function noteLabel(marker: string): string {
  return marker
    .trim()
    .replace(/\)$/, '')
    .replace(/[⁰¹²³⁴⁵⁶⁷⁸⁹]/g, (digit) => String(SUPERSCRIPT_DIGITS.indexOf(digit)));
}

export type Footnotes = { bySegment: Map<Segment, { block?: Block }>; idByLabel: Map<string, string> };

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
export function findFootnotes(columns: Segment[][], tables: Map<Segment, unknown>[], body: number, page: number, pageHeight: number, rules: Rule[]): Footnotes {
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
export function linkReferences(runs: Run[], idByLabel: Map<string, string>): Run[] {
  if (idByLabel.size === 0 || !runs.some((run) => run.sup)) return runs;
  return runs.flatMap((run, index) => {
    if (!run.sup || index === 0) return [run];
    // a marker follows a word or closing punctuation; after a lone Latin letter or a digit it is an exponent (R², x², 10²)
    const before = runs
      .slice(0, index)
      .map((other) => other.text)
      .join('');
    if (!/(\p{L}\p{L}|[\p{Script=Hangul}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]|[)\]”"'’.,;:」』》〉）])$/u.test(before)) return [run];
    const label = noteLabel(run.text);
    const id = idByLabel.get(label);
    if (!id) return [run];
    // the marker's own closing parenthesis ("법칙8)이나") stays on the page: without it the reference runs into the next word
    const end = run.text.trimStart().startsWith(label) ? run.text.indexOf(label) + label.length : run.text.length;
    const rest = run.text.slice(end);
    if (rest.trim() === '') return [{ ...run, note: { id, label } }];
    return [
      { ...run, text: run.text.slice(0, end), note: { id, label } },
      { text: rest, sup: true },
    ];
  });
}
