import { readFileSync } from 'node:fs';
import path from 'node:path';
import { JSDOM } from 'jsdom';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';

/** The shared corpus: real PDFs nobody on the team wrote, described by ../shared/corpus/MANIFEST.md. */
export const CORPUS_DIR = path.resolve(import.meta.dirname, '../../../shared/corpus');

export type CorpusHeading = { level: number; text: string };

export type CorpusEntry = {
  file: string;
  path: string;
  /** null when the manifest says n/a (unreadable file) */
  pages: number | null;
  tagged: boolean | null;
  exercises: string;
  /** "Headings in order" from the file's own structure tree; empty when the manifest lists none */
  headings: CorpusHeading[];
  /** element counts from the structure tree (H1, Table, L, TH, ...) */
  elementCounts: Record<string, number>;
  /** pdftotext's non-whitespace character count, when the manifest has one */
  pdftotextChars: number | null;
};

/** Reads the manifest's table and per-file records; the manifest is the source of truth for what each file is. */
export function readCorpus(dir = CORPUS_DIR): CorpusEntry[] {
  const manifest = readFileSync(path.join(dir, 'MANIFEST.md'), 'utf8');
  const entries: CorpusEntry[] = [];
  for (const line of manifest.split('\n')) {
    const match = /^\|\s*(\d+)\s*\|\s*`([^`]+)`\s*\|[^|]*\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|\s*(.*?)\s*\|$/.exec(line);
    if (!match) continue;
    const [, , file, pages, tagged, exercises] = match as unknown as [string, string, string, string, string, string];
    entries.push({
      file,
      path: path.join(dir, file),
      pages: /^\d+$/.test(pages) ? Number(pages) : null,
      tagged: tagged === 'yes' ? true : tagged === 'no' ? false : null,
      exercises,
      headings: [],
      elementCounts: {},
      pdftotextChars: null,
    });
  }
  // Per-file records: "### N. `file`" followed by bullet lines.
  const sections = manifest.split(/^### \d+\. /m).slice(1);
  for (const section of sections) {
    const file = /^`([^`]+)`/.exec(section)?.[1];
    const entry = entries.find((candidate) => candidate.file === file);
    if (!entry) continue;
    const headingsLine = /^- Headings in order: (.*)$/m.exec(section)?.[1];
    if (headingsLine) {
      for (const heading of headingsLine.matchAll(/H(\d) “([^”]*)”/g)) {
        entry.headings.push({ level: Number(heading[1]), text: heading[2]! });
      }
    }
    const counts = /Element counts: (.*?)\.?$/m.exec(section)?.[1];
    if (counts) {
      for (const count of counts.matchAll(/([A-Za-z0-9]+) (\d+)/g)) entry.elementCounts[count[1]!] = Number(count[2]);
    }
    const chars = /pdftotext [\d.]+ non-whitespace characters: (\d+)/.exec(section)?.[1];
    if (chars) entry.pdftotextChars = Number(chars);
  }
  return entries;
}

/** Block-level tags get a space on each side before parsing, so "<p>a</p><p>b</p>" reads as two words. */
const BLOCK_TAG =
  /<(\/?)(p|div|li|h[1-6]|td|th|tr|caption|figcaption|section|article|nav|header|footer|main|aside|ul|ol|dl|dt|dd|table|br|hr|figure|pre|blockquote|math|mrow|mi|mn|mo|annotation|details|summary)\b/gi;

/**
 * The visible text of an HTML document's body (no style, script or title).
 * `sourceOnly` also leaves out the words our renderer adds of its own (the
 * note on a figure nobody described, the label of a figure's folded text),
 * which no other extractor can have, and reads each formula as the page
 * prints it (its alttext) rather than as its MathML's tokens: for comparing
 * the order of the source's words.
 */
export function htmlText(html: string, options: { sourceOnly?: boolean } = {}): string {
  const dom = new JSDOM(html.replace(BLOCK_TAG, ' <$1$2'));
  try {
    const body = dom.window.document.body;
    // a MathML annotation (the formula's TeX) is markup for tools, not text a reader hears or sees
    for (const element of body.querySelectorAll('style, script, template, annotation, annotation-xml')) element.remove();
    if (options.sourceOnly) {
      for (const element of body.querySelectorAll('p.needs-alt, figure summary')) element.remove();
      // a formula's words as the page prints them (its alttext), not its MathML's tokens: x_{n} laid out is "x" "n"
      for (const math of body.querySelectorAll('math[alttext]')) math.replaceWith(dom.window.document.createTextNode(` ${math.getAttribute('alttext')} `));
    }
    return body.textContent ?? '';
  } finally {
    dom.window.close();
  }
}

export function normaliseHeading(text: string): string {
  return text.normalize('NFKC').replace(/\s+/g, ' ').trim().toLowerCase();
}

/** Headings of an HTML document as level + normalised text, in document order. */
export function htmlHeadings(html: string): CorpusHeading[] {
  const dom = new JSDOM(html);
  try {
    return [...dom.window.document.querySelectorAll('h1, h2, h3, h4, h5, h6')].map((element) => ({
      level: Number(element.tagName.slice(1)),
      text: normaliseHeading(element.textContent ?? ''),
    }));
  } finally {
    dom.window.close();
  }
}

/** Element names present in an HTML document (lower case), for list/table presence checks. */
export function htmlElements(html: string, selector: string): number {
  const dom = new JSDOM(html);
  try {
    return dom.window.document.querySelectorAll(selector).length;
  } finally {
    dom.window.close();
  }
}

/** pdf.js's raw text of every page (content-stream order), as a second oracle beside pdftotext. */
export async function pdfjsRawText(file: string): Promise<string> {
  const task = getDocument({ data: new Uint8Array(readFileSync(file)), verbosity: 0 });
  try {
    const document = await task.promise;
    let text = '';
    for (let number = 1; number <= document.numPages; number++) {
      const page = await document.getPage(number);
      const content = await page.getTextContent();
      text += `${content.items.map((item) => ('str' in item ? `${item.str}${item.hasEOL ? '\n' : ''}` : '')).join(' ')}\n`;
      page.cleanup();
    }
    return text;
  } finally {
    await task.destroy();
  }
}
