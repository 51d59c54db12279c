import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DomainError, isDomainError } from '../../errors.ts';
import type { ConversionEngine } from '../engine.ts';
import { descriptionsFromAltFile, type FigureDescriptions } from '../figures.ts';
import type { Backend, PageResult } from '../model.ts';

/** `folio convert` as a library: argument parsing and the per-file pipeline, no terminal handling. */

export const USAGE = `Usage: folio convert <file.pdf|folder>... [-o out] [--backend local|vision|parser] [--pages 1-20] [--alt alt.json] [--no-pdf]

Converts each PDF to out/<name>.html, out/<name>.accessible.pdf,
out/<name>.report.json and out/<name>.report.html.

Options:
  -o, --out <dir>        output folder (default: the current folder; created if missing)
  -b, --backend <name>   local (default, offline), vision (Amazon Bedrock) or parser (external API)
  -p, --pages <ranges>   pages to convert, e.g. 1-20 or 1,3,5-7 (default: all)
  -a, --alt <file.json>  descriptions of figures by id, as the report's figuresNeedingAlt
                         lists them: {"p3-1": "A bar chart of…", "p4-2": {"decorative": true}}
      --no-pdf           HTML and report only: skip the tagged PDF (faster; the report says it was skipped)
  -h, --help             show this help

Exit status: 0 when every file converted, 1 when any failed, 2 on a usage error.`;

export class UsageError extends Error {
  override name = 'UsageError';
}

export type PageRange = { first: number; last: number };

type ConvertCommand = {
  command: 'convert';
  inputs: string[];
  outDir: string;
  backend: Backend;
  pages?: PageRange[];
  /** the --alt file's path, read and checked by readAltFile */
  alt?: string;
  /** --no-pdf */
  withoutTaggedPdf?: boolean;
};

export type CliCommand = { command: 'help' } | ConvertCommand;

const BACKENDS: Record<string, Backend> = { local: 'local', vision: 'chunked-vision', parser: 'parser' };

/** Parses argv (without node and the script); throws UsageError with a one-line reason. */
export function parseCliArgs(argv: string[], cwd = process.cwd()): CliCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        out: { type: 'string', short: 'o' },
        backend: { type: 'string', short: 'b' },
        pages: { type: 'string', short: 'p' },
        alt: { type: 'string', short: 'a' },
        'no-pdf': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    // node's messages go on with advice about '--' that does not apply here
    throw new UsageError((error as Error).message.split('. To specify')[0]!);
  }
  const { values, positionals } = parsed;
  if (values.help) return { command: 'help' };
  const [command, ...inputs] = positionals;
  if (command === undefined) throw new UsageError('missing command (convert)');
  if (command === 'help') return { command: 'help' };
  if (command !== 'convert') throw new UsageError(`unknown command '${command}'`);
  if (inputs.length === 0) throw new UsageError('convert needs a PDF file or a folder');
  const backendName = values.backend ?? 'local';
  const backend = BACKENDS[backendName];
  if (!backend) throw new UsageError(`unknown backend '${backendName}' (local, vision or parser)`);
  return {
    command: 'convert',
    inputs: inputs.map((input) => path.resolve(cwd, input)),
    outDir: path.resolve(cwd, values.out ?? '.'),
    backend,
    pages: values.pages === undefined ? undefined : parsePageRanges(values.pages),
    ...(values.alt === undefined ? {} : { alt: path.resolve(cwd, values.alt) }),
    ...(values['no-pdf'] ? { withoutTaggedPdf: true } : {}),
  };
}

/** Largest --alt file read: ten thousand long descriptions fit well under it. */
const MAX_ALT_FILE_BYTES = 4 * 1024 * 1024;

/** The --alt file as figure descriptions; a UsageError names what is wrong with it. */
export async function readAltFile(file: string): Promise<FigureDescriptions> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) throw new UsageError(`--alt: no file ${file}`);
  if (info.size > MAX_ALT_FILE_BYTES) throw new UsageError(`--alt: ${file} is larger than ${MAX_ALT_FILE_BYTES / 1024 / 1024} MB`);
  let json: unknown;
  try {
    json = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    throw new UsageError(`--alt: ${file} is not JSON`);
  }
  try {
    return descriptionsFromAltFile(json);
  } catch (error) {
    const issue = (error as { issues?: { path: PropertyKey[]; message: string }[] }).issues?.[0];
    throw new UsageError(`--alt: ${issue ? `${issue.path.join('.') || 'the file'}: ${issue.message}` : 'not a map of figure ids to descriptions'}`);
  }
}

/** "1-20", "3", "1,3,5-7" → ranges; throws UsageError on anything else. */
export function parsePageRanges(text: string): PageRange[] {
  const ranges: PageRange[] = [];
  for (const part of text.split(',')) {
    const match = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(part);
    if (!match) throw new UsageError(`bad --pages '${text}' (use e.g. 1-20 or 1,3,5-7)`);
    const first = Number(match[1]);
    const last = match[2] === undefined ? first : Number(match[2]);
    if (first < 1 || last < first) throw new UsageError(`bad --pages '${text}': pages start at 1 and ranges go upwards`);
    ranges.push({ first, last });
  }
  return ranges;
}

/** The page numbers a range list selects in a document of pageCount pages, ascending, without repeats. */
export function selectPages(ranges: PageRange[] | undefined, pageCount: number): number[] {
  if (!ranges) return Array.from({ length: pageCount }, (_, i) => i + 1);
  const pages = new Set<number>();
  for (const range of ranges) {
    for (let page = range.first; page <= Math.min(range.last, pageCount); page++) pages.add(page);
  }
  return [...pages].sort((a, b) => a - b);
}

/**
 * Runs work over the items, at most `concurrency` at once; the results come in the items' order, and
 * `inOrder` sees each as soon as it and every one before it are done (messages read in input order).
 */
export async function mapConcurrently<T, R>(
  items: T[],
  concurrency: number,
  work: (item: T) => Promise<R>,
  inOrder: (result: R) => void = () => undefined,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  const done: boolean[] = new Array(items.length).fill(false);
  let next = 0;
  let told = 0;
  const runner = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
      done[index] = true;
      while (told < items.length && done[told]) inOrder(results[told++]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, runner));
  return results;
}

/** Expands folders to the PDFs directly inside them (by extension, sorted); files are taken as given. */
export async function listInputs(inputs: string[]): Promise<string[]> {
  const files: string[] = [];
  for (const input of inputs) {
    const info = await stat(input).catch(() => null);
    if (info?.isDirectory()) {
      const names = (await readdir(input)).filter((name) => name.toLowerCase().endsWith('.pdf')).sort();
      files.push(...names.map((name) => path.join(input, name)));
    } else {
      // a missing file still gets its own error line from convertFile
      files.push(input);
    }
  }
  return files;
}

export type FileSummary = {
  file: string;
  ok: boolean;
  pages: number;
  standardPages: number;
  complexPages: number;
  wcagStatus?: 'passed' | 'failed';
  /** ids of the figures still without a description (what --alt takes) */
  figuresNeedingAlt?: string[];
  /** labels of the pages that could not be read reliably, shown as pictures (for --backend vision) */
  unreadablePages?: string[];
  ms: number;
  outputs?: string[];
  error?: { code: string; message: string };
};

export type ProgressEvents = {
  /** pages to convert are known */
  start?: (file: string, totalPages: number) => void;
  page?: (file: string, done: number, totalPages: number) => void;
  /** rendering and the audit run after the last page */
  rendering?: (file: string) => void;
};

/**
 * Pages per convertPages call. The call returns its pages as well as streaming them, so this many
 * results are held at once; and each call ends with one worker waiting for the other's last page.
 * 16 pages per call converted the 117-page corpus book at 40 ms/page, 64 at 34 (one call: 34).
 */
export const PAGES_PER_CALL = 64;

/**
 * Converts one file and writes its four outputs. Never throws: a failure
 * becomes the summary's error (code + one-line message) so the other files go on.
 */
export async function convertFile(
  deps: { engine: ConversionEngine; maxPages: number },
  input: { file: string; outDir: string; backend: Backend; pages?: PageRange[]; figures?: FigureDescriptions; withoutTaggedPdf?: boolean },
  progress: ProgressEvents = {},
): Promise<FileSummary> {
  const started = performance.now();
  const name = path.basename(input.file);
  const summary: FileSummary = { file: name, ok: false, pages: 0, standardPages: 0, complexPages: 0, ms: 0 };
  try {
    const bytes = await readFile(input.file).catch((error: NodeJS.ErrnoException) => {
      throw new DomainError('NOT_FOUND', error.code === 'ENOENT' ? 'file not found' : `cannot read the file (${error.code ?? error.message})`);
    });
    // the engine never hands these bytes to pdf.js itself (workers get a copy), so every call can share them
    const meta = await deps.engine.inspect(bytes, { sourceName: name });
    if (meta.pageCount > deps.maxPages) {
      throw new DomainError('PDF_TOO_MANY_PAGES', `${meta.pageCount} pages, more than the limit of ${deps.maxPages}`);
    }
    const pages = selectPages(input.pages, meta.pageCount);
    if (pages.length === 0) {
      throw new DomainError('BAD_REQUEST', `--pages selects no page of this ${meta.pageCount}-page document`);
    }
    progress.start?.(name, pages.length);
    // pages go to the renderer as they finish: it spools them to disk, so a long document never sits in memory
    const render = deps.engine.openRender(
      meta,
      { dir: input.outDir, baseName: name.replace(/\.pdf$/i, '') },
      {
        figures: input.figures,
        withoutTaggedPdf: input.withoutTaggedPdf,
      },
    );
    const counts = { pages: 0, standardPages: 0, complexPages: 0 };
    let outputs;
    try {
      for (let offset = 0; offset < pages.length; offset += PAGES_PER_CALL) {
        await deps.engine.convertPages(bytes, {
          pages: pages.slice(offset, offset + PAGES_PER_CALL),
          backend: input.backend,
          sourceName: name,
          onPage: async (page: PageResult) => {
            await render.add(page);
            counts.pages++;
            counts[page.classification === 'standard' ? 'standardPages' : 'complexPages']++;
            progress.page?.(name, counts.pages, pages.length);
          },
        });
      }
      progress.rendering?.(name);
      outputs = await render.finish();
    } catch (error) {
      await render.abort();
      throw error;
    }
    Object.assign(summary, {
      ok: true,
      ...counts,
      wcagStatus: outputs.report.wcagStatus,
      figuresNeedingAlt: (outputs.report.figuresNeedingAlt ?? []).map((figure) => figure.id),
      unreadablePages: (outputs.report.unreadablePages ?? []).map((page) => page.label),
      outputs: [outputs.html, outputs.taggedPdf, outputs.reportJson, outputs.reportHtml].filter((file) => file !== undefined),
    });
  } catch (error) {
    summary.error = describeError(error);
  } finally {
    summary.ms = performance.now() - started;
  }
  return summary;
}

/** One line, no stack: the code when we know it, the message trimmed to its first line. */
function describeError(error: unknown): { code: string; message: string } {
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]!.trim() || 'unknown error';
  return { code: isDomainError(error) ? error.code : 'INTERNAL', message };
}
