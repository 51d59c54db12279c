import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import axe from 'axe-core';
import { JSDOM } from 'jsdom';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { loadConfig } from '../server/config.ts';
import type { ConversionEngine } from '../server/conversion/engine.ts';
import { mapConcurrently, PAGES_PER_CALL } from '../server/conversion/cli/convert-files.ts';
import { createConversionEngine } from '../server/conversion/create-conversion-engine.ts';
import type { PageResult } from '../server/conversion/model.ts';
import { silentLog } from '../server/log.ts';
import { CORPUS_DIR, htmlHeadings, normaliseHeading, readCorpus, type CorpusEntry } from '../test/helpers/corpus.ts';
import { report } from './report.ts';

const run_ = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const BIG_PAGES = Number(process.env.BENCH_BIG_PAGES ?? 1000);

/**
 * The conversion engine on the shared corpus, beside two floors/peers:
 * bare pdfjs-dist text extraction (what the local backend cannot beat) and
 * poppler's pdftohtml (a structure-free converter). Audit figures run the
 * same axe rules over our HTML and pdftohtml's, so the comparison is fair.
 */
export async function run() {
  const corpus = readCorpus().filter((entry) => entry.pages !== null && !/\bencrypted\b/i.test(entry.exercises));
  const bytes = new Map<string, Uint8Array>();
  for (const entry of corpus) bytes.set(entry.file, new Uint8Array(await readFile(entry.path)));

  await benchPdfjsFloor(corpus, bytes);
  const pdftohtml = await benchPdftohtml(corpus);
  await benchEngine(corpus, bytes, pdftohtml);
  await benchThroughput(corpus, bytes);
  await benchCliStart();
}

/**
 * The corpus as `folio convert` runs a folder (as many documents at once as the pool has workers, each
 * converted, rendered and audited) on one worker and on two: the second worker's gain is the ratio.
 * Documents with OCR pages are left out, as in the engine figures.
 */
async function benchThroughput(corpus: CorpusEntry[], bytes: Map<string, Uint8Array>) {
  const config = loadConfig();
  const rates: Record<number, number> = {};
  const cpuPerPage: Record<number, number> = {};
  for (const poolSize of [1, 2]) {
    const engine = createConversionEngine({ conversion: config.conversion, log: silentLog, poolSize });
    try {
      await convertWhole(engine, bytes.get('verapdf-ua1-7.4.2-headings.pdf') ?? bytes.values().next().value!, 'warm-up.pdf');
      const files = corpus.filter((entry) => !ocrFiles.has(entry.file));
      const started = performance.now();
      // the whole process's CPU, worker threads included: what the second worker costs beside what it gains
      const cpuAtStart = process.cpuUsage();
      const done = await mapConcurrently(files, engine.concurrency, (entry) =>
        convertWhole(engine, bytes.get(entry.file)!, entry.file).then(
          (result) => result.pages.length,
          () => 0,
        ),
      );
      const pages = done.reduce((sum, count) => sum + count, 0);
      rates[poolSize] = pages / ((performance.now() - started) / 1000);
      const cpu = process.cpuUsage(cpuAtStart);
      cpuPerPage[poolSize] = (cpu.user + cpu.system) / 1000 / pages;
      report('conversion', `engine_pages_per_s_pool_${poolSize}`, rates[poolSize]!, 'pages/s', { pages, documentsAtOnce: engine.concurrency });
      report('conversion', `engine_cpu_ms_per_page_pool_${poolSize}`, cpuPerPage[poolSize]!, 'ms/page', { pages });
    } finally {
      await engine.close();
    }
  }
  report('conversion', 'engine_two_workers_vs_one', rates[2]! / rates[1]!, 'ratio', { aim: 1.7 });
  // CPU per page with two workers against one: documents parsed twice, lanes waiting on each other
  report('conversion', 'engine_second_worker_cpu_overhead', cpuPerPage[2]! / cpuPerPage[1]! - 1, 'ratio', { aim: 0 });
  report('conversion', 'engine_vs_pdfjs_text_ratio_two_workers', rates[2]! / floor.pagesPerSecond, 'ratio', { aim: 0.3 });
}

/**
 * A one-page conversion through the CLI, from process start to exit, beside pdftohtml on the same page:
 * hyperfine (a Debian package) when it is installed, else a plain loop of runs.
 */
async function benchCliStart() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'folio-bench-cli-'));
  const onePage = path.join(CORPUS_DIR, 'faa-amt-handbook-page.pdf');
  const plainPage = path.join(CORPUS_DIR, 'verapdf-ua1-7.4.2-headings.pdf');
  try {
    for (const [label, file] of [
      ['figures', onePage],
      ['text', plainPage],
    ] as const) {
      const folio = `${JSON.stringify(process.execPath)} ${JSON.stringify(path.join(ROOT, 'bin/folio.cjs'))} convert ${JSON.stringify(file)} -o ${JSON.stringify(dir)}`;
      const peer = `pdftohtml -q -s -i ${JSON.stringify(file)} ${JSON.stringify(path.join(dir, 'peer.html'))}`;
      const [ours, theirs] = await wallSeconds([folio, peer]);
      if (ours === undefined) continue;
      report('conversion', `cli_one_page_seconds_${label}`, ours, 's', { file: path.basename(file), aim: 1.0, pdftohtmlSeconds: theirs });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Mean wall seconds of each shell command (after one warm-up run that fills the compile cache). */
async function wallSeconds(commands: string[]): Promise<(number | undefined)[]> {
  const hasHyperfine = await run_('hyperfine', ['--version']).then(
    () => true,
    () => false,
  );
  if (hasHyperfine) {
    const json = path.join(os.tmpdir(), `folio-hyperfine-${process.pid}.json`);
    await run_('hyperfine', ['-N', '--warmup', '1', '--runs', '5', '--export-json', json, ...commands]).catch(() => null);
    const results = JSON.parse(await readFile(json, 'utf8').catch(() => '{"results":[]}')) as { results: { mean: number }[] };
    await rm(json, { force: true });
    return commands.map((_, index) => results.results[index]?.mean);
  }
  const means: (number | undefined)[] = [];
  for (const command of commands) {
    const times: number[] = [];
    for (let runIndex = 0; runIndex < 6; runIndex++) {
      const started = performance.now();
      const ok = await run_('sh', ['-c', command]).then(
        () => true,
        () => false,
      );
      if (runIndex > 0 && ok) times.push((performance.now() - started) / 1000);
    }
    means.push(times.length > 0 ? times.reduce((a, b) => a + b, 0) / times.length : undefined);
  }
  return means;
}

/** Seconds and pages of pdf.js getTextContent over every page of every file: the floor for our local backend. */
async function benchPdfjsFloor(corpus: CorpusEntry[], bytes: Map<string, Uint8Array>) {
  let pages = 0;
  const started = performance.now();
  for (const entry of corpus) {
    const task = getDocument({ data: bytes.get(entry.file)!.slice(), verbosity: 0 });
    const document = await task.promise.catch(() => null);
    if (!document) {
      await task.destroy();
      continue;
    }
    for (let number = 1; number <= document.numPages; number++) {
      const page = await document.getPage(number);
      await page.getTextContent();
      page.cleanup();
      pages++;
    }
    await task.destroy();
  }
  const seconds = (performance.now() - started) / 1000;
  floor.pagesPerSecond = pages / seconds;
  report('conversion', 'pdfjs_text_pages_per_s', floor.pagesPerSecond, 'pages/s', { pages, files: corpus.length });
}
const floor = { pagesPerSecond: 0 };
/** documents with OCR pages, found by the engine pass: the throughput pass leaves them out too */
const ocrFiles = new Set<string>();

type PeerResult = { html: Map<string, string> };

/** pdftohtml -s -i -noframes per file: pages/s, and its HTML kept for the audit comparison. */
async function benchPdftohtml(corpus: CorpusEntry[]): Promise<PeerResult> {
  const html = new Map<string, string>();
  const hasPoppler = await run_('pdftohtml', ['-v']).then(
    () => true,
    () => false,
  );
  if (!hasPoppler) {
    console.error('conversion bench: pdftohtml missing (apt-get install poppler-utils); peer figures skipped');
    return { html };
  }
  let pages = 0;
  const started = performance.now();
  for (const entry of corpus) {
    const result = await run_('pdftohtml', ['-s', '-i', '-noframes', '-stdout', '-q', entry.path], { maxBuffer: 512 * 1024 * 1024 }).catch(() => null);
    if (!result) continue;
    html.set(entry.file, result.stdout);
    pages += entry.pages ?? 0;
  }
  const seconds = (performance.now() - started) / 1000;
  report('conversion', 'pdftohtml_pages_per_s', pages / seconds, 'pages/s', { pages });
  const violations = await Promise.all([...html].map(async ([file, text]) => ({ file, ...(await axeViolations(text)) })));
  reportViolations('pdftohtml', violations);
  reportHeadingRecall('pdftohtml', corpus, html);
  return { html };
}

async function benchEngine(corpus: CorpusEntry[], bytes: Map<string, Uint8Array>, _peer: PeerResult) {
  const config = loadConfig();
  const engine = createConversionEngine({ conversion: config.conversion, log: silentLog });
  const ours = new Map<string, string>();
  const perDocument: { file: string; pages: number; convertMs: number; renderMs: number; ocr: boolean }[] = [];
  const text = { pages: 0, ms: 0, convertMs: 0 };
  const ocr = { pages: 0, ms: 0, convertMs: 0 };
  try {
    // warm-up: workers start and pdf.js compiles once, outside the timing
    await convertWhole(engine, bytes.get('verapdf-ua1-7.4.2-headings.pdf') ?? bytes.values().next().value!, 'warm-up.pdf');
    for (const entry of corpus) {
      const started = performance.now();
      const result = await convertWhole(engine, bytes.get(entry.file)!, entry.file).catch((error: Error) => {
        console.error(`conversion bench: ${entry.file}: ${error.message.split('\n')[0]}`);
        return null;
      });
      if (!result) continue;
      const ms = performance.now() - started;
      ours.set(entry.file, result.html);
      // A document with OCR pages is timed apart: OCR dominates it and says nothing about the text path.
      const bucket = result.pages.some((page) => page.ocr) ? ocr : text;
      if (bucket === ocr) ocrFiles.add(entry.file);
      bucket.pages += result.pages.length;
      bucket.ms += ms;
      bucket.convertMs += result.convertMs;
      perDocument.push({
        file: entry.file,
        pages: result.pages.length,
        convertMs: Math.round(result.convertMs),
        renderMs: Math.round(ms - result.convertMs),
        ocr: bucket === ocr,
      });
    }
  } finally {
    await engine.close();
  }
  const textRate = text.pages / (text.ms / 1000);
  report('conversion', 'engine_pages_per_s', textRate, 'pages/s', {
    pages: text.pages,
    poolSize: config.conversion.poolSize,
    note: 'convert+render+audit, documents without OCR pages',
  });
  report('conversion', 'engine_vs_pdfjs_text_ratio', textRate / floor.pagesPerSecond, 'ratio', { aim: 0.5 });
  // where the time goes: page conversion alone, and rendering (HTML, tagged PDF, report, audit) per page
  const slowest = perDocument
    .filter((row) => !row.ocr)
    .sort((a, b) => b.convertMs + b.renderMs - (a.convertMs + a.renderMs))
    .slice(0, 5)
    .map(({ ocr: _ocr, ...row }) => row);
  report('conversion', 'engine_convert_only_pages_per_s', text.pages / (text.convertMs / 1000), 'pages/s', { pages: text.pages, slowest });
  report('conversion', 'engine_render_audit_ms_per_page', (text.ms - text.convertMs) / text.pages, 'ms/page', { pages: text.pages });
  if (ocr.pages > 0) report('conversion', 'engine_ocr_pages_per_s', ocr.pages / (ocr.ms / 1000), 'pages/s', { pages: ocr.pages });
  const violations = await Promise.all([...ours].map(async ([file, html]) => ({ file, ...(await axeViolations(html)) })));
  reportViolations('ours', violations);
  reportHeadingRecall('ours', corpus, ours);
  await benchPeakRss();
}

/** The whole document, pages then render, as the CLI does it. */
async function convertWhole(engine: ConversionEngine, pdf: Uint8Array, name: string) {
  const meta = await engine.inspect(pdf.slice(), { sourceName: name });
  const pages: PageResult[] = [];
  const numbers = Array.from({ length: meta.pageCount }, (_, i) => i + 1);
  const started = performance.now();
  for (let offset = 0; offset < numbers.length; offset += PAGES_PER_CALL) {
    pages.push(...(await engine.convertPages(pdf.slice(), { pages: numbers.slice(offset, offset + PAGES_PER_CALL), backend: 'local', sourceName: name })));
  }
  const convertMs = performance.now() - started;
  const outputs = await engine.render({ meta, pages });
  return { html: outputs.html, pages, convertMs };
}

/** WCAG 2.0/2.1 A and AA axe rules in jsdom; color-contrast needs layout jsdom lacks, so axe leaves it out. */
async function axeViolations(html: string): Promise<{ violations: number; nodes: number; rules: string[] }> {
  const dom = new JSDOM(html, { runScripts: 'outside-only', pretendToBeVisual: true });
  try {
    dom.window.eval(axe.source);
    const windowAxe = (dom.window as unknown as { axe: typeof axe }).axe;
    const results = await windowAxe.run(dom.window.document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
      resultTypes: ['violations'],
    });
    return {
      violations: results.violations.length,
      nodes: results.violations.reduce((sum, violation) => sum + violation.nodes.length, 0),
      rules: results.violations.map((violation) => violation.id),
    };
  } finally {
    dom.window.close();
  }
}

function reportViolations(who: string, rows: { file: string; violations: number; nodes: number; rules: string[] }[]) {
  if (rows.length === 0) return;
  const total = rows.reduce((sum, row) => sum + row.violations, 0);
  const rules = [...new Set(rows.flatMap((row) => row.rules))].sort();
  report('conversion', `axe_violations_per_document_${who}`, total / rows.length, 'rules/document', {
    documents: rows.length,
    documentsWithViolations: rows.filter((row) => row.violations > 0).length,
    rules,
  });
}

/** Share of the manifest's headings (tagged files) found as a heading with the same text, ignoring level. */
function reportHeadingRecall(who: string, corpus: CorpusEntry[], html: Map<string, string>) {
  let expected = 0;
  let found = 0;
  let levelMatches = 0;
  const missed: string[] = [];
  for (const entry of corpus) {
    if (entry.headings.length === 0 || !html.has(entry.file)) continue;
    const produced = htmlHeadings(html.get(entry.file)!);
    // an empty heading tag has nothing to read: the test drops it too
    for (const heading of entry.headings.filter((candidate) => candidate.text.trim() !== '')) {
      expected++;
      const match = produced.find((candidate) => candidate.text === normaliseHeading(heading.text));
      if (match) found++;
      else missed.push(`${entry.file}: H${heading.level} ${heading.text}`);
      if (match?.level === heading.level) levelMatches++;
    }
  }
  if (expected === 0) return;
  report('conversion', `heading_recall_tagged_${who}`, found / expected, 'ratio', { expected, found, sameLevel: levelMatches, missed: missed.slice(0, 10) });
}

/** Peak RSS of the CLI converting a generated 1,000-page text PDF, measured in its own process. */
async function benchPeakRss() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'folio-bench-'));
  try {
    const file = path.join(dir, `generated-${BIG_PAGES}-pages.pdf`);
    await writeFile(file, await generatePdf(BIG_PAGES));
    // The CLI runs as in production; at exit it reports the process's peak RSS (worker threads included).
    // a script file, not --eval: worker threads inherit execArgv, and --input-type would break them
    const script = path.join(dir, 'measure.mjs');
    await writeFile(
      script,
      `
      process.on('exit', () => process.stderr.write('MAXRSS ' + process.resourceUsage().maxRSS + '\\n'));
      process.argv = [process.argv[0], 'folio', 'convert', ${JSON.stringify(file)}, '-o', ${JSON.stringify(path.join(dir, 'out'))}];
      await import(${JSON.stringify(path.join(ROOT, 'bin/folio.ts'))});`,
    );
    const started = performance.now();
    const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [script], { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      child.on('close', (exitCode) => resolve({ code: exitCode, stderr }));
    });
    const seconds = (performance.now() - started) / 1000;
    const kib = Number(/MAXRSS (\d+)/.exec(stderr)?.[1] ?? NaN);
    if (code !== 0 || !Number.isFinite(kib)) {
      console.error(`conversion bench: ${BIG_PAGES}-page run failed (exit ${code}): ${stderr.split('\n').slice(-5).join(' | ')}`);
      return;
    }
    report('conversion', 'peak_rss_mb_generated_pdf', kib / 1024, 'MB', {
      pages: BIG_PAGES,
      aim: 400,
      seconds: Number(seconds.toFixed(1)),
      pagesPerSecond: Number((BIG_PAGES / seconds).toFixed(2)),
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A text PDF of `pages` pages: a heading and a few paragraphs each, Helvetica, so no OCR is involved. */
async function generatePdf(pages: number): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  const font = await document.embedFont(StandardFonts.Helvetica);
  const bold = await document.embedFont(StandardFonts.HelveticaBold);
  const sentence = 'The quick brown fox jumps over the lazy dog while the reader follows every word in order.';
  for (let number = 1; number <= pages; number++) {
    const page = document.addPage([595, 842]);
    page.drawText(`Section ${number}`, { x: 60, y: 770, size: 20, font: bold });
    for (let line = 0; line < 30; line++) {
      page.drawText(`${sentence} Line ${line + 1}.`, { x: 60, y: 730 - line * 18, size: 10, font });
    }
  }
  return document.save();
}
