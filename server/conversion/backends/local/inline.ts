import type { Inline } from '../../model.ts';

/**
 * Building inline content from runs of text: adjacent runs with the same link
 * (or none) merge, whitespace collapses, and a line-end hyphen before a
 * lower-case continuation is repaired ("exam-" + "ple" → "example").
 */

export type Run = { text: string; href?: string; lang?: string };

export function joinLines(previous: string, next: string): string {
  if (previous === '') return next;
  if (/\p{L}-$/u.test(previous) && /^\p{Ll}/u.test(next)) return previous.slice(0, -1) + next;
  if (/\s$/.test(previous) || /^\s/.test(next)) return previous + next;
  // CJK lines join without a space; other scripts with one.
  if (/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]$/u.test(previous) && /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u.test(next)) return previous + next;
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
    if (last && last.href === run.href && last.lang === run.lang) append(last, run.text);
    else {
      if (last && last.text.endsWith('\n')) {
        last.text = last.text.slice(0, -1);
        if (!/\s$/.test(last.text) && !/^\s/.test(run.text)) last.text += ' ';
      }
      merged.push({ ...run });
    }
  }
  const out: Inline[] = [];
  for (const [index, run] of merged.entries()) {
    let text = run.text.replace(/(\p{L})-\n(?=\p{Ll})/gu, '$1').replace(/\s+/g, ' ');
    if (index === 0) text = text.trimStart();
    if (index === merged.length - 1) text = text.trimEnd();
    if (text === '') continue;
    let node: Inline = { kind: 'text', text };
    if (run.lang) node = { kind: 'lang', lang: run.lang, children: [node] };
    if (run.href) node = { kind: 'link', href: run.href, children: [node] };
    out.push(node);
  }
  return out;
}

export function inlineText(list: Inline[]): string {
  return list
    .map((item) => {
      if (item.kind === 'text' || item.kind === 'code') return item.text;
      if (item.kind === 'lineBreak') return ' ';
      if (item.kind === 'footnoteRef') return item.label;
      return inlineText(item.children);
    })
    .join('');
}

/** Only links a reader can safely follow reach the model. */
export function safeHref(url: string | undefined): string | undefined {
  if (!url) return undefined;
  return /^(https?:|mailto:)/i.test(url) ? url : undefined;
}
