import type { AuditInput, AuditResult } from '../audit/audit-html.ts';
import type { Block, DocumentMeta, PageResult } from '../model.ts';

/**
 * Messages between the engine and its page workers. A document's bytes go
 * to a worker once ('open'); pages are then asked for by number. Everything
 * crossing the boundary is structured-clone data.
 */

export type LocalJobOptions = { docLang: string; tagged: boolean; labels?: (string | undefined)[] };

export type WorkerError = { name: string; message: string; code?: string };

/** What every page of a document needs to know of the whole: its metadata and printed page labels. */
export type DocumentFacts = { meta: DocumentMeta; labels: [page: number, label: string][] };

export type ToWorker =
  /** options are left out when the document is opened to be inspected: the worker then takes them from what it reads */
  | { type: 'open'; docId: number; pdf: Uint8Array; options?: LocalJobOptions }
  | { type: 'inspect'; id: number; docId: number; sourceName: string }
  | { type: 'page'; docId: number; page: number; label?: string }
  | { type: 'close'; docId: number }
  | { type: 'audit'; id: number; input: AuditInput }
  /** load what an audit needs before it is asked for */
  | { type: 'warm' }
  | { type: 'shutdown' }
  | { type: 'docx'; id: number; docx: Uint8Array };

export type FromWorker =
  | { type: 'page'; docId: number; page: number; result: PageResult }
  | { type: 'error'; docId: number; page: number; error: WorkerError }
  | { type: 'audit'; id: number; result?: AuditResult; error?: WorkerError }
  | { type: 'inspect'; id: number; result?: DocumentFacts; error?: WorkerError }
  | { type: 'closed' }
  | { type: 'docx'; id: number; result?: DocxBlocks; error?: WorkerError };

/** A DOCX as the document model: its blocks, all on page 1, and the words of its text. */
export type DocxBlocks = { blocks: Block[]; words: number };
