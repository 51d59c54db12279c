/**
 * CONTRACT between the conversion engine (issue 3) and the conversion service
 * (issue 4). The engine helper implements it in server/conversion/; the
 * service only calls what is declared here. Change it only by adding.
 */
import type { Readable } from 'node:stream';
import type { Config } from '../config.ts';
import type { Log } from '../log.ts';
import type { FigureDescriptions } from './figures.ts';
import type { Backend, Block, ConvertedDocument, DocumentMeta, PageResult } from './model.ts';

type EngineOptions = {
  conversion: Config['conversion'];
  log: Log;
  /** worker threads for the local backend; default conversion.poolSize */
  poolSize?: number;
  /** a page worker's memory outside its heap past which it is terminated; default the pool's (640 MB) */
  workerExternalMb?: number;
};

type ConvertPagesInput = {
  /** 1-based page numbers, converted and returned in this order */
  pages: number[];
  backend: Backend;
  /** aborting stops before the next page starts; pages in flight finish */
  signal?: AbortSignal;
  /** called as each page finishes, in page order; a throw stops the run like an abort */
  onPage?: (result: PageResult) => void | Promise<void>;
  sourceName?: string;
  /** vision backend: the batch lane's answers by page, used where model and prompt hash match and the answer is acceptable */
  batchRecords?: ReadonlyMap<number, BatchRecord>;
};

/** One page's answer from a batch inference job, with the model and prompt hash it was asked with. */
export type BatchRecord = {
  model: string;
  promptHash: string;
  text: string;
  stopReason: string;
  inputTokens: number;
  outputTokens: number;
};

export type ConversionOutputs = {
  html: string;
  taggedPdf: Buffer;
  /** the JSON report (per-page backend/class, audit by rule, warnings, timings, cost, wcagStatus) */
  report: ConversionReport;
  reportHtml: string;
};

/** Paths of a document's four rendered files. */
/** taggedPdf is missing when the render was asked for HTML only (RenderExtras.withoutTaggedPdf). */
export type OutputFiles = { html: string; taggedPdf?: string; reportJson: string; reportHtml: string };

/**
 * A document rendered as its pages arrive: add() takes each page in ascending
 * page order (spooled to disk, not kept in memory); finish() renders, audits
 * and writes <dir>/<baseName>.html, .accessible.pdf, .report.json and
 * .report.html; abort() removes what was written.
 */
export type DocumentRender = {
  add(page: PageResult): Promise<void>;
  finish(): Promise<OutputFiles & { report: ConversionReport }>;
  abort(): Promise<void>;
};

/** What a render takes besides the pages: descriptions people stored for figures, by figure id (figures.ts). */
export type RenderExtras = {
  figures?: FigureDescriptions;
  /** HTML and report only (`--no-pdf`, `outputs: ['html']`): the tagged PDF is not drawn, and the report says so */
  withoutTaggedPdf?: boolean;
};

export type ConversionReport = {
  wcagStatus: 'passed' | 'failed';
  pages: number;
  standardPages: number;
  complexPages: number;
  costUsd: number;
  /** figures nobody has described yet (figures.ts ids): the ones that keep wcagStatus failed */
  figuresNeedingAlt?: { id: string; page: number; caption?: string }[];
  /** pages that could not be read reliably (reason `unreadable`): shown as their picture, for the vision backend */
  unreadablePages?: { page: number; label: string }[];
  [key: string]: unknown;
};

export interface ConversionEngine {
  /**
   * Opens the PDF and reads its metadata and page count. Throws DomainError
   * NOT_A_PDF, PDF_ENCRYPTED, PDF_MALFORMED or PDF_NO_PAGES (server/errors.ts).
   */
  inspect(pdf: Uint8Array, options?: { sourceName?: string }): Promise<DocumentMeta>;
  /** Converts the given pages; returns them in page order. */
  convertPages(pdf: Uint8Array, input: ConvertPagesInput): Promise<PageResult[]>;
  /** Renders the HTML, tagged PDF and report of a whole document (pages in order), running the audit. */
  render(document: ConvertedDocument): Promise<ConversionOutputs>;
  /** A zip stream of the outputs: <base>.html, <base>.accessible.pdf, <base>.report.json (and .report.html). */
  zip(outputs: ConversionOutputs, baseName: string): Readable;
  /**
   * render() for documents of any length: the pages stream in, the outputs go to files, and
   * memory holds a page at a time. The audit runs as in render().
   */
  openRender(meta: DocumentMeta, target: { dir: string; baseName: string }, options?: RenderExtras): DocumentRender;
  /** zip() of rendered files, read from disk as the zip streams. */
  zipFiles(files: OutputFiles, baseName: string): Readable;
  /**
   * Reads a DOCX (already measured and bounded by the caller) into the document model's blocks, in a
   * worker thread whose heap is capped: the caller's thread never parses it. Aborting terminates that worker.
   */
  convertDocx(docx: Uint8Array, options?: { signal?: AbortSignal }): Promise<{ blocks: Block[]; words: number }>;
  /** Documents worth converting at once: the page workers there are, so one converts while another renders. */
  readonly concurrency: number;
  /** Stops worker threads. */
  close(): Promise<void>;
}

export type CreateConversionEngine = (options: EngineOptions) => ConversionEngine;
