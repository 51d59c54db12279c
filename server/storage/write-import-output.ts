import { createS3Store } from './s3-store.ts';
import { BucketError, describeBucketError } from './customer-bucket.ts';
import type { ImportDeps } from './import-runtime.ts';
import { openConnectionBucket } from './manage-storage-connections.ts';
import { ENDED_JOB_STATUSES, latestConversionJob } from '../intake/intake.queries.ts';
import { moveImport, selectConnection, selectImport } from './storage.queries.ts';
import { openZipEntry } from './zip-entry.ts';

/** The result zip's entries that go back to the bucket, by the suffix the renderer gives them, with their types. */
const OUTPUTS = [
  { suffix: '.report.html', contentType: 'text/html; charset=utf-8' },
  { suffix: '.report.json', contentType: 'application/json' },
  { suffix: '.accessible.pdf', contentType: 'application/pdf' },
  { suffix: '.html', contentType: 'text/html; charset=utf-8' },
] as const;

/** The zip entry an output is: the first suffix that fits wins, so `x.report.html` is never taken for the HTML. */
function outputOf(name: string) {
  return OUTPUTS.find((output) => name.endsWith(output.suffix));
}

/**
 * Where an object's results go: its key below the connection prefix, under the
 * output prefix, without `.pdf`, plus each output's suffix
 * (`inbox/a/report.pdf` → `folio-output/a/report.html`, `.accessible.pdf`,
 * `.report.json`, `.report.html`).
 */
function outputKeyBase(connection: { prefix: string; outputPrefix: string }, objectKey: string): string {
  const relative = objectKey.startsWith(connection.prefix) ? objectKey.slice(connection.prefix.length) : objectKey;
  return `${connection.outputPrefix}${relative.replace(/\.pdf$/i, '')}`;
}

/**
 * Once an imported file's conversion has ended: a completed one has its HTML,
 * tagged PDF and report (JSON and HTML) streamed from the result zip into the
 * bucket (multipart for large ones, never whole in memory); a failed or
 * cancelled one ends the import as failed with the conversion's error. The
 * download link is the file's as for any upload. Writing is idempotent (same
 * keys, same bytes), so a retry after a crash writes again and nothing twice
 * that matters.
 */
export async function writeImportOutput(deps: ImportDeps, importId: string): Promise<'completed' | 'failed' | 'skipped'> {
  const item = await selectImport(deps.db, importId);
  if (!item || (item.status !== 'converting' && item.status !== 'writing_output')) return 'skipped';
  const row = await selectConnection(deps.db, item.connectionId);
  const job = item.fileId ? await latestConversionJob(deps.db, item.fileId) : null;
  if (!row || !job || job.status !== 'completed' || !job.resultKey) {
    if (job && !ENDED_JOB_STATUSES.has(job.status)) return 'skipped';
    const reason = !job
      ? 'The file was deleted before its conversion ended'
      : `${job.errorCode ?? job.status}: ${job.errorMessage ?? `the conversion ${job.status}`}`;
    await moveImport(deps.db, item.id, ['converting', 'writing_output'], 'failed', { errorCode: job?.errorCode ?? 'CONVERSION_FAILED', errorMessage: reason });
    return 'failed';
  }
  await moveImport(deps.db, item.id, ['converting'], 'writing_output');
  const bucket = openConnectionBucket(deps, row);
  try {
    const target = createS3Store({ bucket: row.bucket, client: bucket.client });
    const base = outputKeyBase(row, item.objectKey);
    for (const output of OUTPUTS) {
      const stream = await openZipEntry(deps.store, job.resultKey, (name) => outputOf(name) === output);
      if (!stream) throw new Error(`the result zip ${job.resultKey} has no ${output.suffix}`);
      await target.put(`${base}${output.suffix}`, stream, { contentType: output.contentType });
    }
  } catch (error) {
    const bucketError =
      error instanceof BucketError
        ? error
        : isAwsError(error)
          ? new BucketError(awsName(error), (error as Error).message, undefined)
          : /^invalid object key/.test((error as Error)?.message ?? '')
            ? new BucketError('InvalidOutputKey', `${(error as Error).message} (an empty, "." or ".." path segment cannot be written)`, undefined)
            : null;
    if (!bucketError) throw error;
    // The bucket refused (a read-only policy, a deleted bucket): final, and said in the customer's words.
    await moveImport(deps.db, item.id, ['writing_output'], 'failed', { errorCode: 'OUTPUT_WRITE_FAILED', errorMessage: describeBucketError(bucketError) });
    return 'failed';
  } finally {
    bucket.close();
  }
  await moveImport(deps.db, item.id, ['writing_output'], 'completed', { errorCode: null, errorMessage: null });
  deps.log.info({ event: 'storage_output_written', importId: item.id, connectionId: row.id }, 'storage: results written back');
  return 'completed';
}

/** An answer from S3 (4xx): a client error that retrying will not fix. */
function isAwsError(error: unknown): boolean {
  const status = (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode;
  return typeof status === 'number' && status >= 400 && status < 500;
}

function awsName(error: unknown): string {
  return (error as { name?: string }).name ?? 'S3Error';
}
