import type { Inline } from '../../model.ts';

/**
 * Building inline content from runs of text: adjacent runs with the same link
 * (or none) merge, whitespace collapses, and a line-end hyphen before a
 * lower-case continuation is repaired ("exam-" + "ple" → "example").
 */

export type Run = {
  text: string;
  href?: string;
  lang?: string;
  /** raised and smaller than its line (a footnote marker, an exponent) */
  sup?: boolean;
  /** lowered and smaller than its line (an index) */
  sub?: boolean;
  /** this run is the marker of a footnote on the page: it becomes a footnoteRef */
  note?: { id: string; label: string };
  /** mathematics set in the line (inline-math.ts): its TeX */
  math?: string;
};

export function joinLines(previous: string, next: string): string {
  if (previous === '') return next;
  if (/\p{L}-$/u.test(previous) && /^\p{Ll}/u.test(next)) return previous.slice(0, -1) + next;
  if (/\s$/.test(previous) || /^\s/.test(next)) return previous + next;
  // CJK lines join without a space; other scripts with one.
  if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]$/u.test(previous) && /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(next))
    return previous + next;
  return `${previous} ${next}`;
}

/**
 * Runs are concatenated as given (callers put the spaces they mean); a run
 * ending in a line end joins the next one as lines join.
 */
export function runsToInlines(runs: Run[]): Inline[] {
  const merged: Run[] = [];
  const append = (target: Run, text: string) => {
    target.text = target.text.endsWith('\n') ? joinLines(target.text.slice(0, -1), text) : target.text + text;
  };
  for (const run of runs) {
    const last = merged.at(-1);
    if (last && !last.note && !run.note && !last.math && !run.math && last.href === run.href && last.lang === run.lang) append(last, run.text);
    else {
      if (last?.text.endsWith('\n')) {
        last.text = last.text.slice(0, -1);
        if (!/\s$/.test(last.text) && !/^\s/.test(run.text)) last.text += ' ';
      }
      merged.push({ ...run });
    }
  }
  const out: Inline[] = [];
  for (const [index, run] of merged.entries()) {
    if (run.note) {
      // the marker's own spacing stays around the reference; adjacent text nodes merge below
      if (/^\s/.test(run.text) && index > 0) out.push({ kind: 'text', text: ' ' });
      out.push({ kind: 'footnoteRef', id: run.note.id, label: run.note.label });
      if (/\s$/.test(run.text) && index < merged.length - 1) out.push({ kind: 'text', text: ' ' });
      continue;
    }
    let text = run.text.replace(/(\p{L})-\n(?=\p{Ll})/gu, '$1').replace(/\s+/g, ' ');
    if (index === 0) text = text.trimStart();
    if (index === merged.length - 1) text = text.trimEnd();
    if (text === '') continue;
    let node: Inline = run.math ? { kind: 'math', tex: run.math, text: text.trim() } : { kind: 'text', text };
    if (run.lang) node = { kind: 'lang', lang: run.lang, children: [node] };
    if (run.href) node = { kind: 'link', href: run.href, children: [node] };
    out.push(node);
  }
  if (!merged.some((run) => run.note)) return out;
  // spaces around a reference merge with the text beside them, so no double space appears
  const joined: Inline[] = [];
  for (const node of out) {
    const last = joined.at(-1);
    if (node.kind === 'text' && last?.kind === 'text') last.text = (last.text + node.text).replace(/\s+/g, ' ');
    else joined.push(node.kind === 'text' ? { ...node } : node);
  }
  return joined;
}

export function inlineText(list: Inline[]): string {
  return list
    .map((item) => {
      if (item.kind === 'text' || item.kind === 'code' || item.kind === 'math') return item.text;
      if (item.kind === 'lineBreak') return ' ';
      if (item.kind === 'footnoteRef') return item.label;
      if (item.kind === 'pageBreak') return '';
      return inlineText(item.children);
    })
    .join('');
}

/** The runs without their first `length` characters (a list marker, a footnote marker). */
export function stripPrefix(runs: Run[], length: number): Run[] {
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
