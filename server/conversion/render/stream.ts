import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, mkdtemp, open, rename, rm, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import type { Log } from '../../log.ts';
import type { AuditInput, AuditResult } from '../audit/audit-html.ts';
import type { DocumentRender as EngineDocumentRender, OutputFiles } from '../engine.ts';
import { describePage, type FigureDescriptions } from '../figures.ts';
import { joinContinuedFootnotesInOrder } from '../footnotes.ts';
import { createDocumentHeadings, withHeadingLevels } from '../heading-levels.ts';
import { joinBrokenParagraphsInOrder } from '../paragraphs.ts';
import type { DocumentMeta, PageResult } from '../model.ts';
import { AUDIT_SLICE_CHARS, forAudit } from '../audit/slices.ts';
import { createHtmlWriter, createPreparer, outlineOf, unlinkDanglingRefs, type HtmlWarning } from './html.ts';
import { createPageLanguages } from './page-languages.ts';
import { createPdfWriter } from './pdf.ts';
import { createReportBuilder, renderReportHtml, type FolioReport } from './report.ts';
import { holdYoungGeneration } from './young-generation.ts';

/**
 * The streaming renderer: pages arrive one at a time in page order and go
 * straight to a spool file on disk (one JSON line each) with their report
 * summary; at the end the spool is read back a page at a time, once for the
 * HTML and once for the tagged PDF, so memory holds one page, never the
 * document. Two passes because the HTML's head (title as h1 or not, the table
 * of contents) and its footnote links depend on the whole document.
 */

/**
 * From this many pages a render is long: drawing its PDF and auditing it outweigh restarting idle page workers,
 * and its garbage is worth more scavenges to keep the young generation from growing (young-generation.ts).
 */
const LONG_DOCUMENT_PAGES = 50;

export type RenderTarget = { dir: string; baseName: string };

type RenderedFiles = OutputFiles & { report: FolioReport };

export type DocumentRender = EngineDocumentRender & { finish(): Promise<RenderedFiles> };

export type RenderOptions = {
  log?: Log;
  /**
   * where the audit runs (default: this thread); elsewhere, it runs while this thread draws the
   * tagged PDF. `long` says the document is long enough that its render is worth freeing memory for.
   */
  audit?: (input: AuditInput, hint: { long: boolean }) => Promise<AuditResult>;
  /** descriptions people stored for figures, by figure id (figures.ts): applied as the pages come in */
  figures?: FigureDescriptions;
  /** skip the tagged PDF: the outputs are the HTML and the report, which lists it as skipped */
  withoutTaggedPdf?: boolean;
};

async function* parsed(lines: AsyncIterable<string>, mark: (page: PageResult) => PageResult): AsyncGenerator<PageResult> {
  for await (const line of lines) if (line) yield mark(JSON.parse(line) as PageResult);
}

export function openDocumentRender(meta: DocumentMeta, target: RenderTarget, options: RenderOptions = {}): DocumentRender {
  const report = createReportBuilder();
  // OCR'd pages know their language only as they come
  const languages = createPageLanguages(meta);
  let work: Promise<{ dir: string; spool: WriteStream }> | undefined;
  // inferred headings take their levels from the whole document, known only once every page is in
  const headings = createDocumentHeadings(!meta.tagged);
  // each page's headings alone (a few words per page), to settle the outline before rendering
  const headingPages: PageResult[] = [];
  let lastPage = 0;
  let pages = 0;
  // a title the first page's repaired text shows, for a document whose facts named none
  let printedTitle: string | undefined;
  let state: 'open' | 'finishing' | 'done' = 'open';
  // from the first page to the end of the render: the young generation grows while pages are spooled and while the PDF is drawn
  const releaseYoungGeneration = meta.pageCount >= LONG_DOCUMENT_PAGES ? holdYoungGeneration() : () => undefined;

  // The work folder sits in the target folder, so the finished files move into place by rename.
  const workspace = () =>
    (work ??= (async () => {
      await mkdir(target.dir, { recursive: true });
      const dir = await mkdtemp(path.join(target.dir, '.folio-render-'));
      const spool = createWriteStream(path.join(dir, 'pages.jsonl'));
      spool.on('error', () => undefined);
      return { dir, spool };
    })());

  const readSpool = async function* (dir: string): AsyncGenerator<PageResult> {
    const lines = createInterface({ input: createReadStream(path.join(dir, 'pages.jsonl'), { encoding: 'utf8' }), crlfDelay: Infinity });
    // a footnote or a paragraph running over a page's foot comes as two pieces, one per page: joined as the pages are read back
    const marked = parsed(lines, (page) => withHeadingLevels(languages.mark(page), headings.levelsOf(page)));
    yield* joinBrokenParagraphsInOrder(joinContinuedFootnotesInOrder(marked));
  };

  return {
    async add(given) {
      if (state !== 'open') throw new Error('this document render is already finished');
      const page = describePage(given, options.figures);
      if (!(page.page > lastPage)) throw new RangeError(`page ${page.page} came after page ${lastPage}: pages must come in ascending order`);
      lastPage = page.page;
      pages++;
      headings.add(page);
      if (page.page === 1 && meta.titleFromName && page.title) printedTitle = page.title;
      if (page.blocks.some((block) => block.kind === 'heading'))
        headingPages.push({ ...page, blocks: page.blocks.filter((block) => block.kind === 'heading') });
      report.addPage(page);
      languages.add(page);
      const { spool } = await workspace();
      if (!spool.write(`${JSON.stringify(page)}\n`)) await once(spool, 'drain');
    },

    async finish() {
      if (state !== 'open') throw new Error('this document render is already finished');
      state = 'finishing';
      const started = performance.now();
      const { dir, spool } = await workspace();
      try {
        spool.end();
        await finished(spool);
        const outline = outlineOf(headingPages.flatMap((page) => headings.levelsOf(page)));
        const settled = printedTitle ? { ...languages.meta(), title: printedTitle, titleFromName: false } : languages.meta();
        const files = {
          html: path.join(dir, 'out.html'),
          taggedPdf: path.join(dir, 'out.pdf'),
          reportJson: path.join(dir, 'report.json'),
          reportHtml: path.join(dir, 'report.html'),
        };

        const htmlStarted = performance.now();
        const html = await writeHtml(settled, outline, pages, readSpool(dir), dir, files.html);
        const htmlMs = Math.round(performance.now() - htmlStarted);
        const long = pages >= LONG_DOCUMENT_PAGES || html.slices.length > 1;
        const auditing = (options.audit ?? auditHere)({ file: files.html, shell: html.shell, slices: html.slices }, { long });
        // awaited after the PDF; until then a failure must not count as an unhandled rejection
        auditing.catch(() => undefined);
        // the audit's request goes out before the PDF's first synchronous stretch (pdfkit and its fonts, ~40 ms),
        // not after it: the audit is the longer of the two, and its worker would sit waiting
        await new Promise((resolve) => setImmediate(resolve));

        const pdfStarted = performance.now();
        if (!options.withoutTaggedPdf) await writePdf(settled, outline, () => readSpool(dir), files.taggedPdf, options.log);
        const pdfMs = Math.round(performance.now() - pdfStarted);
        const audit = await auditing;

        const built = report.build(
          settled,
          audit,
          html.warnings,
          html.headings,
          { htmlMs, pdfMs, auditMs: audit.ms, renderMs: Math.round(performance.now() - started) },
          options.withoutTaggedPdf ? ['taggedPdf'] : [],
        );
        await writeFile(files.reportJson, `${JSON.stringify(built, null, 2)}\n`);
        await writeFile(files.reportHtml, renderReportHtml(built));
        options.log?.info({ pages, wcagStatus: built.wcagStatus, violations: audit.violationCount, htmlMs, pdfMs, auditMs: audit.ms }, 'conversion rendered');

        const base = path.join(target.dir, target.baseName);
        const placed: OutputFiles = { html: `${base}.html`, reportJson: `${base}.report.json`, reportHtml: `${base}.report.html` };
        if (!options.withoutTaggedPdf) placed.taggedPdf = `${base}.accessible.pdf`;
        for (const key of ['html', 'taggedPdf', 'reportJson', 'reportHtml'] as const) if (placed[key]) await rename(files[key], placed[key]);
        state = 'done';
        return { ...placed, report: built };
      } finally {
        releaseYoungGeneration();
        await rm(dir, { recursive: true, force: true });
      }
    },

    async abort() {
      state = 'done';
      releaseYoungGeneration();
      if (!work) return;
      const { dir, spool } = await work;
      spool.destroy();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The HTML pass: the body goes to its own file part by part, cut into audit
 * slices on part boundaries; then the shell, the body slice by slice (dead
 * footnote links dropped) and the shell's end make the final file.
 */
type Outline = ReturnType<typeof outlineOf>;

async function writeHtml(meta: DocumentMeta, outline: Outline, pageCount: number, pages: AsyncIterable<PageResult>, dir: string, file: string) {
  const preparer = createPreparer(outline.titleIsH1, outline.shift);
  const writer = createHtmlWriter(meta, outline.titleIsH1, preparer.repairs);
  const bodyFile = path.join(dir, 'body.html');
  const body = createWriteStream(bodyFile);
  const slices: [number, number][] = [];
  let offset = 0;
  let sliceStart = 0;
  let sliceChars = 0;
  const write = async (text: string) => {
    offset += Buffer.byteLength(text);
    if (!body.write(text)) await once(body, 'drain');
  };
  for await (const page of pages) {
    for (const part of writer.page(preparer.page(page))) {
      // what the audit leaves out (image bytes, MathML layout) does not count towards a slice
      const chars = forAudit(part).length;
      if (sliceChars > 0 && sliceChars + chars > AUDIT_SLICE_CHARS) {
        slices.push([sliceStart, offset]);
        sliceStart = offset;
        sliceChars = 0;
      }
      await write(sliceChars > 0 ? `\n${part}` : part);
      sliceChars += chars + 1;
    }
  }
  if (offset > sliceStart) slices.push([sliceStart, offset]);
  body.end();
  await finished(body);

  const { before, after, warnings, headings, dangling } = writer.finish(pageCount);
  const out = createWriteStream(file);
  const finalSlices: [number, number][] = [];
  let position = Buffer.byteLength(before);
  out.write(before);
  const source = await open(bodyFile, 'r');
  try {
    for (const [index, [start, end]] of slices.entries()) {
      const buffer = Buffer.alloc(end - start);
      await source.read(buffer, 0, buffer.length, start);
      // slices were cut between parts; joining them takes back the newline the cut left out
      const text = (index > 0 ? '\n' : '') + unlinkDanglingRefs(buffer.toString('utf8'), dangling);
      const bytes = Buffer.byteLength(text);
      finalSlices.push([position + (index > 0 ? 1 : 0), position + bytes]);
      position += bytes;
      if (!out.write(text)) await once(out, 'drain');
    }
  } finally {
    await source.close();
  }
  out.end(after);
  await finished(out);
  return { shell: { before, after }, slices: finalSlices, warnings: warnings as HtmlWarning[], headings: headings.length };
}

/**
 * The PDF pass. If anything in the content trips pdfkit, the document is
 * drawn again from the spool as tagged paragraphs only rather than failing.
 */
async function writePdf(meta: DocumentMeta, outline: Outline, pages: () => AsyncIterable<PageResult>, file: string, log?: Log) {
  const draw = async (simple: boolean) => {
    const out = createWriteStream(file);
    const preparer = createPreparer(outline.titleIsH1, outline.shift);
    const writer = createPdfWriter(meta, outline.titleIsH1, out, simple);
    try {
      for await (const page of pages()) {
        writer.page(preparer.page(page));
        // pdfkit hands each finished page on at once: let the file take it before the next is drawn
        if (out.writableNeedDrain) await once(out, 'drain');
      }
      await writer.finish();
    } catch (error) {
      out.destroy();
      throw error;
    }
  };
  try {
    await draw(false);
  } catch (error) {
    log?.warn({ err: error }, 'tagged PDF: full rendering failed, falling back to paragraphs');
    await draw(true);
  }
}

/** jsdom and axe-core load only when this thread audits: with the audit in a worker, the engine's thread never holds them. */
async function auditHere(input: AuditInput): Promise<AuditResult> {
  const { auditHtml } = await import('../audit/audit-html.ts');
  return auditHtml(input);
}
