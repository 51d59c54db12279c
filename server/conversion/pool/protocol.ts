import type { AuditInput, AuditResult } from '../audit/index.ts';
import type { PageResult } from '../model.ts';

/**
 * Messages between the engine and its page workers. A document's bytes go
 * to a worker once ('open'); pages are then asked for by number. Everything
 * crossing the boundary is structured-clone data.
 */

export type LocalJobOptions = { docLang: string; tagged: boolean; labels?: (string | undefined)[] };

export type ToWorker =
  | { type: 'open'; docId: number; pdf: Uint8Array; options: LocalJobOptions }
  | { type: 'page'; docId: number; page: number; label?: string }
  | { type: 'close'; docId: number }
  | { type: 'audit'; id: number; input: AuditInput }
  | { type: 'shutdown' };

export type FromWorker =
  | { type: 'page'; docId: number; page: number; result: PageResult }
  | { type: 'error'; docId: number; page: number; error: { name: string; message: string; code?: string } }
  | { type: 'audit'; id: number; result?: AuditResult; error?: { name: string; message: string } }
  | { type: 'closed' };
