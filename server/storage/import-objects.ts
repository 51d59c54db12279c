import { z } from 'zod';
import type { AuthUser } from '../auth/users.ts';
import { CHUNK_QUEUE } from '../conversion-jobs/conversion-jobs.jobs.ts';
import { ConvertOptions, startConversion } from '../conversion-jobs/start-conversion.ts';
import { derivedUuid } from '../email/email.jobs.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { wakeWorkers } from '../queue/boss.ts';
import { BucketError, describeBucketError, type BucketObject, type CustomerBucket } from './customer-bucket.ts';
import type { ImportDeps } from './import-runtime.ts';
import { limitBucketCalls, openConnectionBucket, requireOwnConnection } from './manage-storage-connections.ts';
import { asImportFailure, ImportFailure, importedName, storeImportedPdf } from './receive-pdf.ts';
import { enqueueObjectImport, enqueuePauseNotice, IMPORT_OBJECT_QUEUE } from './storage.jobs.ts';
import {
  insertImportedFile,
  insertNewImports,
  markFileImported,
  markFileImportFailed,
  moveImport,
  pauseForCredits,
  selectConnection,
  selectConnectionImports,
  selectImport,
  selectImportingFile,
  type ConnectionRow,
  type ImportRow,
} from './storage.queries.ts';

/** Objects one import request (or one watch listing) looks at: ten S3 pages. A larger prefix continues with `startAfter`. */
const MAX_OBJECTS_PER_LISTING = 10_000;

/** `key` imports that one object; otherwise every .pdf under `prefix` (the connection's by default), from after `startAfter`. */
export const ImportObjectsInput = z.object({
  key: z.string().min(1).max(1024).optional(),
  prefix: z.string().max(1024).optional(),
  startAfter: z.string().max(1024).optional(),
});
export type ImportObjectsInput = z.infer<typeof ImportObjectsInput>;

export const ImportObjectsResult = z.object({
  /** PDFs found under the prefix (or the one key). */
  found: z.number(),
  /** New imports queued: one conversion each. */
  queued: z.number(),
  /** Already imported with the same ETag: not imported again. */
  duplicates: z.number(),
  /** Not imported: not a .pdf, under the output prefix, or larger than the upload limit. */
  skipped: z.number(),
  /** Set when the listing stopped at its bound: call again with this as startAfter. */
  nextStartAfter: z.string().nullable(),
});
export type ImportObjectsResult = z.infer<typeof ImportObjectsResult>;

/** What may be imported from a listing: .pdf keys outside the output prefix, within the byte limit. */
function importable(row: ConnectionRow, maxBytes: number) {
  return (object: BucketObject) =>
    /\.pdf$/i.test(object.key) && !object.key.startsWith(row.outputPrefix) && object.size > 0 && object.size <= maxBytes && object.etag !== '';
}

/** Lists `prefix` page by page (bounded by MAX_OBJECTS_PER_LISTING), from after `startAfter`. */
export async function listAll(bucket: CustomerBucket, prefix: string, startAfter?: string): Promise<{ objects: BucketObject[]; next?: string }> {
  const objects: BucketObject[] = [];
  let after = startAfter;
  for (;;) {
    const page = await bucket.list(prefix, { startAfter: after, maxKeys: 1000 });
    objects.push(...page.objects);
    if (!page.next) return { objects };
    after = page.next;
    if (objects.length >= MAX_OBJECTS_PER_LISTING) return { objects, next: after };
  }
}

/**
 * Records the listed objects not imported before (per connection, key and
 * ETag) and queues one import job each, in one transaction: the same object
 * is never imported twice, however many listings or requests see it.
 */
export async function recordObjects(
  deps: ImportDeps,
  row: ConnectionRow,
  objects: BucketObject[],
  source: 'import' | 'watch',
): Promise<{ found: number; queued: number; duplicates: number; skipped: number }> {
  const candidates = objects.filter(importable(row, deps.config.conversion.uploadMaxBytes));
  const pdfs = objects.filter((object) => /\.pdf$/i.test(object.key) && !object.key.startsWith(row.outputPrefix));
  await deps.importer.queuesReady();
  const ids = await deps.db.transaction(async (tx) => {
    const created = await insertNewImports(tx, row.id, source, candidates);
    for (const id of created) await enqueueObjectImport(deps.boss, id, tx);
    return created;
  });
  if (ids.length > 0) wakeWorkers(deps.boss, [IMPORT_OBJECT_QUEUE]);
  return { found: pdfs.length, queued: ids.length, duplicates: candidates.length - ids.length, skipped: objects.length - candidates.length };
}

/**
 * POST /api/storage/connections/{id}/import: one key, or every .pdf under a
 * prefix (the connection's by default). The bucket is listed now, so the
 * caller learns what was found; the fetches and conversions run as jobs.
 */
export async function importFromConnection(deps: ImportDeps, user: AuthUser, id: string, input: ImportObjectsInput): Promise<ImportObjectsResult> {
  if (input.key !== undefined && (input.prefix !== undefined || input.startAfter !== undefined)) {
    throw new DomainError('BAD_REQUEST', 'Give either key, or prefix (with startAfter)');
  }
  const row = await requireOwnConnection(deps, user, id);
  await limitBucketCalls(deps, user);
  const bucket = openConnectionBucket(deps, row);
  try {
    let listed: { objects: BucketObject[]; next?: string };
    if (input.key !== undefined) {
      // The listing gives the ETag the import is keyed by; an exact match only (the key is also a prefix of others).
      const key = input.key;
      const page = await bucket.list(key, { maxKeys: 1 });
      listed = { objects: page.objects.filter((object) => object.key === key) };
      if (listed.objects.length === 0) throw new DomainError('NOT_FOUND', `No object ${key} in ${row.bucket}`);
    } else {
      listed = await listAll(bucket, input.prefix ?? row.prefix, input.startAfter);
    }
    const counts = await recordObjects(deps, row, listed.objects, 'import');
    return { ...counts, nextStartAfter: listed.next ?? null };
  } catch (error) {
    if (error instanceof BucketError) throw new DomainError('STORAGE_ACCESS_FAILED', describeBucketError(error), { cause: error });
    throw error;
  } finally {
    bucket.close();
  }
}

/** One object's import as its owner sees it. */
export const StorageImport = z.object({
  id: z.uuid(),
  objectKey: z.string(),
  etag: z.string(),
  sizeBytes: z.number(),
  source: z.enum(['import', 'watch']),
  /** queued → converting → writing_output → completed; waiting_credits until the balance covers it; failed with errorCode. */
  status: z.string(),
  fileId: z.uuid().nullable(),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
  createdAt: z.string(),
  updatedAt: z.string(),
});

/** The connection's newest 500 imports. */
export async function listConnectionImports(deps: Pick<ImportDeps, 'db'>, user: AuthUser, id: string): Promise<Array<z.infer<typeof StorageImport>>> {
  await requireOwnConnection(deps, user, id);
  return (await selectConnectionImports(deps.db, id)).map((row) => ({
    id: row.id,
    objectKey: row.objectKey,
    etag: row.etag,
    sizeBytes: row.sizeBytes,
    source: row.source,
    status: row.status,
    fileId: row.fileId,
    errorCode: row.errorCode,
    errorMessage: row.errorMessage,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  }));
}

/** The file an import creates: derived from the import, so a second run finds what the first stored. */
function importFileId(importId: string): string {
  return derivedUuid(`storage-import-file:${importId}`);
}

async function failImport(deps: ImportDeps, item: ImportRow, fileId: string | null, failure: ImportFailure): Promise<void> {
  if (fileId) await markFileImportFailed(deps.db, fileId, failure.code, failure.message);
  await moveImport(deps.db, item.id, ['queued'], 'failed', { fileId: fileId ?? undefined, errorCode: failure.code, errorMessage: failure.message });
  deps.log.info({ event: 'storage_import_failed', importId: item.id, code: failure.code }, `storage: ${failure.message}`);
}

/**
 * The import job: the object streamed from the bucket (pinned to the listed
 * ETag) into the store under the byte limit, checked as a PDF, opened for its
 * pages, then converted with the connection's default options exactly as an
 * upload's Convert (the credits held first). Runs at least once; every step
 * is guarded by the import's and the file's state.
 */
export async function importObject(deps: ImportDeps, importId: string): Promise<ImportRow['status'] | 'skipped'> {
  const item = await selectImport(deps.db, importId);
  if (!item || (item.status !== 'queued' && item.status !== 'waiting_credits')) return 'skipped';
  const row = await selectConnection(deps.db, item.connectionId);
  if (!row) return 'skipped';
  const fileId = importFileId(item.id);
  let file = await selectImportingFile(deps.db, fileId);
  if (!file) {
    await insertImportedFile(deps.db, {
      id: fileId,
      ownerId: row.ownerId,
      name: importedName(item.objectKey, 'object.pdf'),
      size: item.sizeBytes,
      pages: null,
      key: null,
      status: 'processing',
      phase: 'Importing',
    });
    file = await selectImportingFile(deps.db, fileId);
  }
  if (!file) return 'skipped';
  if (file.status === 'processing' && !file.storageKey) {
    const bucket = openConnectionBucket(deps, row);
    try {
      const object = await bucket.get(item.objectKey, item.etag);
      const stored = await storeImportedPdf(deps, {
        fileId,
        body: object.body,
        maxBytes: deps.config.conversion.uploadMaxBytes,
        timeoutMs: deps.config.imports.timeoutMs,
        describeSource: `s3://${row.bucket}/${item.objectKey}`,
        name: file.name,
      });
      await markFileImported(deps.db, fileId, stored);
    } catch (error) {
      const failure =
        error instanceof BucketError
          ? new ImportFailure(
              'IMPORT_ORIGIN_ERROR',
              error.awsCode === 'PreconditionFailed'
                ? `${item.objectKey} changed after it was listed; its new version is imported on its own`
                : describeBucketError(error),
              { cause: error },
            )
          : asImportFailure(error);
      if (!failure) throw error;
      await failImport(deps, item, fileId, failure);
      return 'failed';
    } finally {
      bucket.close();
    }
  } else if (file.status === 'failed') {
    await moveImport(deps.db, item.id, ['queued'], 'failed', { fileId, errorCode: 'IMPORT_FAILED', errorMessage: 'The imported file failed' });
    return 'failed';
  }
  return startImportConversion(deps, row, item, fileId);
}

/**
 * The conversion of an imported file with the connection's default options.
 * Credits the balance cannot hold park the import (waiting_credits) and pause
 * the connection; the first pause of a watched connection queues the one
 * email to its owner. The watch tick resumes both once the balance covers the
 * oldest parked file.
 */
async function startImportConversion(deps: ImportDeps, row: ConnectionRow, item: ImportRow, fileId: string): Promise<ImportRow['status'] | 'skipped'> {
  try {
    await startConversion(deps, { fileId, options: ConvertOptions.parse(row.defaultOptions) });
  } catch (error) {
    if (isDomainError(error) && (error.code === 'INSUFFICIENT_CREDITS' || error.code === 'FREE_PAGE_LIMIT')) {
      await moveImport(deps.db, item.id, ['queued', 'waiting_credits'], 'waiting_credits', { fileId });
      if ((await pauseForCredits(deps.db, row.id)) && row.watched) {
        await deps.importer.queuesReady();
        await enqueuePauseNotice(deps.boss, row.id);
      }
      deps.log.info({ event: 'storage_import_waiting_credits', importId: item.id, connectionId: row.id }, 'storage: import waits for credits');
      return 'waiting_credits';
    }
    // A conversion the owner started by hand meanwhile is this import's conversion.
    if (!(isDomainError(error) && error.code === 'CONFLICT')) throw error;
  }
  wakeWorkers(deps.boss, [CHUNK_QUEUE]);
  if (!(await moveImport(deps.db, item.id, ['queued', 'waiting_credits'], 'converting', { fileId }))) return 'skipped';
  // A conversion that ends before this subscription is live is found by the minute tick.
  await deps
    .watchConversion?.(item.id, fileId)
    .catch((error: unknown) => deps.log.warn({ err: error, importId: item.id }, 'storage: cannot listen for the conversion; the tick will find its end'));
  return 'converting';
}
