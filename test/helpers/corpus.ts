import { readFileSync } from 'node:fs';
import path from 'node:path';

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
