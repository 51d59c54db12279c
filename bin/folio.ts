/**
 * `folio convert <file.pdf|folder>... [-o out] [--backend local|vision|parser] [--pages 1-20] [--alt alt.json]`
 * Converts PDFs offline (by default) into accessible HTML, a tagged PDF and a report.
 */
import cliProgress from 'cli-progress';
import { loadConfig } from '../server/config.ts';
import {
  convertFile,
  listInputs,
  mapConcurrently,
  parseCliArgs,
  readAltFile,
  USAGE,
  UsageError,
  type CliCommand,
  type FileSummary,
} from '../server/conversion/cli/convert-files.ts';
import { createConversionEngine } from '../server/conversion/create-conversion-engine.ts';
import { createLog } from '../server/log.ts';

let command: CliCommand;
let figures: Awaited<ReturnType<typeof readAltFile>> | undefined;
try {
  command = parseCliArgs(process.argv.slice(2));
  if (command.command === 'convert' && command.alt) figures = await readAltFile(command.alt);
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`folio: ${error.message}\n\n${USAGE}\n`);
  process.exit(2);
}
if (command.command === 'help') {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const config = loadConfig();
// The engine logs warnings only, to stderr, so stdout stays the progress and the summary.
const log = createLog({ level: process.env.LOG_LEVEL ?? 'warn', name: 'folio-cli', destination: process.stderr });
const engine = createConversionEngine({ conversion: config.conversion, log });

const interactive = Boolean(process.stdout.isTTY);
const files = await listInputs(command.inputs);
if (files.length === 0) process.stderr.write('folio: no PDF files found\n');
// Files convert side by side, as many as the pool has workers: one converts while another renders
// and audits on this thread, and two short documents each keep a worker busy.
const multibar = interactive
  ? new cliProgress.MultiBar(
      { format: '{file} [{bar}] {value}/{total} pages | {rate} pages/s | ETA {eta_formatted}', hideCursor: true, clearOnComplete: false },
      cliProgress.Presets.shades_classic,
    )
  : undefined;
let summaries: FileSummary[];
try {
  summaries = await mapConcurrently(
    files,
    engine.concurrency,
    async (file) => {
      let bar: cliProgress.SingleBar | undefined;
      let lastLine = 0;
      let startedAt = 0;
      const summary = await convertFile(
        { engine, maxPages: config.conversion.uploadMaxPages },
        { file, outDir: command.outDir, backend: command.backend, pages: command.pages, figures, withoutTaggedPdf: command.withoutTaggedPdf },
        {
          start(name, total) {
            startedAt = performance.now();
            if (multibar) bar = multibar.create(total, 0, { file: name, rate: '0.0' });
            else process.stdout.write(`${name}: converting ${total} page(s)\n`);
          },
          page(name, done, total) {
            const rate = done / Math.max(0.001, (performance.now() - startedAt) / 1000);
            if (bar) {
              bar.update(done, { rate: rate.toFixed(1) });
              return;
            }
            // plain lines: about every 10 % and the last page, not one per page
            if (done === total || done - lastLine >= Math.max(1, Math.ceil(total / 10))) {
              lastLine = done;
              const eta = (total - done) / Math.max(rate, 0.001);
              process.stdout.write(`${name}: ${done}/${total} pages, ${rate.toFixed(1)} pages/s, ETA ${eta.toFixed(0)}s\n`);
            }
          },
          rendering(name) {
            if (bar) multibar?.remove(bar);
            bar = undefined;
            if (!multibar) process.stdout.write(`${name}: rendering HTML, tagged PDF and report\n`);
          },
        },
      );
      if (bar) multibar?.remove(bar);
      return summary;
    },
    (summary) => {
      if (summary.error) process.stderr.write(`folio: ${summary.file}: ${summary.error.code}: ${summary.error.message}\n`);
      const undescribed = summary.figuresNeedingAlt ?? [];
      if (undescribed.length > 0) {
        process.stderr.write(
          `folio: ${summary.file}: ${undescribed.length} figure(s) need a description (${undescribed.slice(0, 5).join(', ')}${undescribed.length > 5 ? ', …' : ''}); see figuresNeedingAlt in its report.json and pass them back with --alt alt.json\n`,
        );
      }
    },
  );
} finally {
  multibar?.stop();
  await engine.close();
}

process.stdout.write(`\n${formatSummary(summaries)}\n`);
process.exitCode = summaries.length > 0 && summaries.every((summary) => summary.ok) ? 0 : 1;

/** A plain-text table: one row per file, failures with their code. */
function formatSummary(rows: FileSummary[]): string {
  const header = ['file', 'pages', 'standard', 'complex', 'wcag', 'time', 'result'];
  const body = rows.map((row) => [
    row.file,
    String(row.pages),
    String(row.standardPages),
    String(row.complexPages),
    row.wcagStatus ?? '-',
    `${(row.ms / 1000).toFixed(1)}s`,
    row.ok ? 'ok' : `error ${row.error?.code ?? ''}`,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...body.map((cells) => cells[column]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join('  ')
      .trimEnd();
  const converted = rows.filter((row) => row.ok).length;
  // pages OCR could not read are pictures in the output: say which, and what reads them
  const unreadable = rows
    .filter((row) => (row.unreadablePages ?? []).length > 0)
    .map(
      (row) =>
        `${row.file}: page(s) ${row.unreadablePages!.join(', ')} could not be read reliably and are shown as pictures; convert them with --backend vision`,
    );
  return [
    line(header),
    line(widths.map((width) => '-'.repeat(width))),
    ...body.map(line),
    '',
    `${converted} of ${rows.length} file(s) converted`,
    ...unreadable,
  ].join('\n');
}
