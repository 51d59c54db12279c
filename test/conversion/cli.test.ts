import { execFile } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePageRanges, parseCliArgs, selectPages, UsageError } from '../../server/conversion/cli/convert-files.ts';
import { CORPUS_DIR } from '../helpers/corpus.ts';

/** `folio convert` as a user runs it: a child process on a temp folder, judged by files, stderr lines and exit status. */

const ROOT = path.resolve(import.meta.dirname, '../..');
const GOOD = ['verapdf-ua1-7.4.2-headings.pdf', 'libreoffice-tagged-toc-table.pdf'];
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'folio-cli-'));
  await mkdir(path.join(dir, 'in'));
  for (const file of GOOD) await copyFile(path.join(CORPUS_DIR, file), path.join(dir, 'in', file));
  await copyFile(path.join(CORPUS_DIR, 'encrypted-user-password.pdf'), path.join(dir, 'in', 'encrypted-user-password.pdf'));
  await writeFile(path.join(dir, 'in', 'not-a-pdf.pdf'), 'Just some notes, saved with the wrong name.\n');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

type Run = { code: number | null; stdout: string; stderr: string };

function folio(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'bin/folio.ts'), ...args],
      {
        cwd: dir,
        env: { ...process.env, CONVERSION_POOL_SIZE: '2', LOG_LEVEL: 'error', ...env },
        timeout: 120_000,
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
      },
    );
  });
}

/** The CLI's own error lines (the engine may log JSON warnings on stderr too). */
const errorLines = (stderr: string) => stderr.split('\n').filter((line) => line.startsWith('folio: '));

describe('folio convert', () => {
  it('converts a folder: four outputs per good PDF, one error line per bad file, non-zero exit', { timeout: 150_000 }, async () => {
    const run = await folio(['convert', 'in', '-o', 'out']);
    expect(run.code, run.stderr).toBe(1);
    const outputs = (await readdir(path.join(dir, 'out'))).sort();
    const expected = GOOD.flatMap((file) => {
      const base = file.replace(/\.pdf$/, '');
      return [`${base}.accessible.pdf`, `${base}.html`, `${base}.report.html`, `${base}.report.json`];
    }).sort();
    expect(outputs).toEqual(expected);

    const lines = errorLines(run.stderr);
    expect(lines).toHaveLength(2);
    expect(lines.find((line) => line.includes('encrypted-user-password.pdf'))).toMatch(/^folio: encrypted-user-password\.pdf: PDF_ENCRYPTED: \S.*$/);
    expect(lines.find((line) => line.includes('not-a-pdf.pdf'))).toMatch(/^folio: not-a-pdf\.pdf: NOT_A_PDF: \S.*$/);

    const report = JSON.parse(await readFile(path.join(dir, 'out', 'libreoffice-tagged-toc-table.report.json'), 'utf8')) as { pages: number };
    expect(report.pages).toBe(2);
    // audit quality per file is the corpus test's business; here: the report carries the verdict the summary shows
    const simple = JSON.parse(await readFile(path.join(dir, 'out', 'verapdf-ua1-7.4.2-headings.report.json'), 'utf8')) as { wcagStatus: string };
    expect(simple.wcagStatus).toBe('passed');
    const html = await readFile(path.join(dir, 'out', 'verapdf-ua1-7.4.2-headings.html'), 'utf8');
    expect(html).toContain('Heading level 3');
    const pdf = await readFile(path.join(dir, 'out', 'verapdf-ua1-7.4.2-headings.accessible.pdf'));
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');

    // the summary table: one row per file, plain lines because stdout is not a TTY
    expect(run.stdout).toMatch(/libreoffice-tagged-toc-table\.pdf\s+2\s+\d+\s+\d+\s+(passed|failed)\s+[\d.]+s\s+ok/);
    expect(run.stdout).toMatch(/verapdf-ua1-7\.4\.2-headings\.pdf\s+1\s+1\s+0\s+passed\s+[\d.]+s\s+ok/);
    expect(run.stdout).toMatch(/not-a-pdf\.pdf\s+0\s+0\s+0\s+-\s+[\d.]+s\s+error NOT_A_PDF/);
    expect(run.stdout).toContain('2 of 4 file(s) converted');
    expect(run.stdout).toMatch(/libreoffice-tagged-toc-table\.pdf: 2\/2 pages, [\d.]+ pages\/s/);
  });

  it('honours --pages and exits 0 when every file converted', { timeout: 60_000 }, async () => {
    const run = await folio(['convert', path.join('in', 'libreoffice-tagged-toc-table.pdf'), '--pages', '2', '-o', 'pages-out']);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(await readFile(path.join(dir, 'pages-out', 'libreoffice-tagged-toc-table.report.json'), 'utf8')) as { pages: number };
    expect(report.pages).toBe(1);
    const html = await readFile(path.join(dir, 'pages-out', 'libreoffice-tagged-toc-table.html'), 'utf8');
    expect(html).toContain('Page 2 Heading');
    expect(html).not.toMatch(/>\s*Heading\s*</);
  });

  it('--no-pdf writes the HTML and the report only, and the report says the tagged PDF was skipped', { timeout: 60_000 }, async () => {
    const run = await folio(['convert', path.join('in', 'libreoffice-tagged-toc-table.pdf'), '--no-pdf', '-o', 'html-out']);
    expect(run.code, run.stderr).toBe(0);
    expect((await readdir(path.join(dir, 'html-out'))).sort()).toEqual([
      'libreoffice-tagged-toc-table.html',
      'libreoffice-tagged-toc-table.report.html',
      'libreoffice-tagged-toc-table.report.json',
    ]);
    const report = JSON.parse(await readFile(path.join(dir, 'html-out', 'libreoffice-tagged-toc-table.report.json'), 'utf8')) as { skippedOutputs: string[] };
    expect(report.skippedOutputs).toEqual(['taggedPdf']);
    expect(await readFile(path.join(dir, 'html-out', 'libreoffice-tagged-toc-table.report.html'), 'utf8')).toContain('Not made: HTML only was asked for');
  });

  it('refuses a document over the page limit, and a missing file, with one line each', { timeout: 60_000 }, async () => {
    const run = await folio(['convert', path.join('in', 'libreoffice-tagged-toc-table.pdf'), 'missing.pdf', '-o', 'limit-out'], { UPLOAD_MAX_PAGES: '1' });
    expect(run.code).toBe(1);
    expect(errorLines(run.stderr)).toEqual([
      expect.stringMatching(/^folio: libreoffice-tagged-toc-table\.pdf: PDF_TOO_MANY_PAGES: 2 pages, more than the limit of 1$/),
      'folio: missing.pdf: NOT_FOUND: file not found',
    ]);
  });

  it('gives a usage error (exit 2) for bad flags and prints usage for --help', { timeout: 60_000 }, async () => {
    const [badFlag, badBackend, badPages, noInput, help] = await Promise.all([
      folio(['convert', 'in', '--frobnicate']),
      folio(['convert', 'in', '--backend', 'magic']),
      folio(['convert', 'in', '--pages', '5-2']),
      folio(['convert']),
      folio(['--help']),
    ]);
    for (const run of [badFlag, badBackend, badPages, noInput]) {
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('Usage: folio convert');
    }
    expect(badFlag.stderr).toMatch(/^folio: Unknown option '--frobnicate'/);
    expect(badBackend.stderr).toMatch(/^folio: unknown backend 'magic'/);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: folio convert <file\.pdf\|folder>/);
  });
});

describe('argument parsing', () => {
  it('reads page ranges and selects pages within the document', () => {
    expect(parsePageRanges('1-3,7,5-6')).toEqual([
      { first: 1, last: 3 },
      { first: 7, last: 7 },
      { first: 5, last: 6 },
    ]);
    expect(selectPages(parsePageRanges('2-20,1'), 4)).toEqual([1, 2, 3, 4]);
    expect(selectPages(parsePageRanges('9-10'), 4)).toEqual([]);
    expect(selectPages(undefined, 3)).toEqual([1, 2, 3]);
    for (const bad of ['0', '3-1', 'a', '1-', '']) expect(() => parsePageRanges(bad)).toThrow(UsageError);
  });

  it('maps backends and resolves paths against the working folder', () => {
    expect(parseCliArgs(['convert', 'a.pdf', '-o', 'out', '--backend', 'vision'], '/home/reader')).toEqual({
      command: 'convert',
      inputs: ['/home/reader/a.pdf'],
      outDir: '/home/reader/out',
      backend: 'chunked-vision',
      pages: undefined,
    });
    expect(parseCliArgs(['convert', 'a.pdf'], '/home/reader')).toMatchObject({ outDir: '/home/reader', backend: 'local' });
    expect(() => parseCliArgs(['export', 'a.pdf'])).toThrow(UsageError);
  });
});
