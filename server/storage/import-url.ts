import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AuthUser } from '../auth/users.ts';
import { CHUNK_QUEUE } from '../conversion-jobs/conversion-jobs.jobs.ts';
import { startConversion } from '../conversion-jobs/start-conversion.ts';
import { DomainError, isDomainError } from '../errors.ts';
import { checkPublicHttpsUrl } from '../net/address-policy.ts';
import { SafeFetchError } from '../net/safe-fetch.ts';
import { wakeWorkers } from '../queue/boss.ts';
import { enforceRateLimits } from '../rate-limit/take-rate-limit.ts';
import type { ImportDeps } from './import-runtime.ts';
import { asImportFailure, ImportFailure, importedName, storeImportedPdf } from './receive-pdf.ts';
import { enqueueUrlImport, IMPORT_URL_QUEUE, type ImportUrlJob } from './storage.jobs.ts';
import { insertImportedFile, markFileImported, markFileImportFailed, selectImportingFile } from './storage.queries.ts';

/** "follow at most 3 redirects, each checked" (issue 19). */
const IMPORT_MAX_REDIRECTS = 3;

/** URL imports one user may start per hour: far beyond a person's use, a bound on a script's. */
const IMPORTS_PER_USER_PER_HOUR = 200;

/** A redirect that leaves the first URL's origin goes to public space only, whatever the test switch allows. */
const PUBLIC_ONLY = { allowLoopback: false } as const;

export const ImportUrlInput = z.object({
  url: z.string().min(1).max(2048),
  /** Start the conversion as soon as the file has arrived (credits held as for Convert); default: land as an upload does. */
  convert: z.boolean().optional(),
});

export const ImportedFile = z.object({ id: z.uuid(), name: z.string(), status: z.string(), phase: z.string().nullable() });
export type ImportedFile = z.infer<typeof ImportedFile>;

/**
 * POST /api/files/import: checks the URL without touching the network (HTTPS,
 * no user info, no private or internal host), then creates the file row
 * (processing, phase "Importing") and its fetch job in one transaction. The
 * fetch itself runs in the job; its outcome is the file's status.
 */
export async function requestUrlImport(deps: ImportDeps, user: AuthUser, input: z.infer<typeof ImportUrlInput>): Promise<ImportedFile> {
  const check = checkPublicHttpsUrl(input.url.trim(), deps.importer.policy);
  if (!check.ok) throw new DomainError('IMPORT_URL_REJECTED', check.reason);
  await enforceRateLimits(
    deps.db,
    [{ key: `import-url:user:${user.id}`, limit: IMPORTS_PER_USER_PER_HOUR, windowMs: 60 * 60 * 1000 }],
    deps.clock.now(),
    'Too many imports; try again later',
  );
  await deps.importer.queuesReady();
  const id = randomUUID();
  const name = importedName(check.value.url.pathname);
  await deps.db.transaction(async (tx) => {
    await insertImportedFile(tx, { id, ownerId: user.id, name, size: 0, pages: null, key: null, status: 'processing', phase: 'Importing' });
    await enqueueUrlImport(deps.boss, tx, { fileId: id, url: check.value.url.href, convert: input.convert ?? false });
  });
  wakeWorkers(deps.boss, [IMPORT_URL_QUEUE]);
  return { id, name, status: 'processing', phase: 'Importing' };
}

function fetchFailure(error: SafeFetchError): ImportFailure {
  switch (error.kind) {
    case 'refused':
      return new ImportFailure('IMPORT_REFUSED', `Refused: ${error.message}`, { cause: error });
    case 'too_many_redirects':
      return new ImportFailure('IMPORT_TOO_MANY_REDIRECTS', `The URL redirected more than ${IMPORT_MAX_REDIRECTS} times`, { cause: error });
    default:
      return new ImportFailure('IMPORT_UNREACHABLE', `The URL could not be reached: ${error.message}`, { cause: error });
  }
}

/**
 * The fetch job: the guarded client (every hop resolved and checked, the
 * socket pinned to the checked address, at most 3 redirects, a cross-origin
 * redirect public-only), then the body streamed into the store under the
 * byte limit, sniffed as a PDF and opened for its page count. A failure that
 * is the source's marks the file failed with its code; anything else
 * (our store, our engine) is thrown for the queue to retry. Runs at least
 * once: a file that is no longer importing is left alone.
 */
export async function fetchUrlImport(deps: ImportDeps, job: ImportUrlJob): Promise<'imported' | 'failed' | 'skipped'> {
  const file = await selectImportingFile(deps.db, job.fileId);
  if (file?.status !== 'processing' || file.storageKey) return 'skipped';
  const maxBytes = deps.config.conversion.uploadMaxBytes;
  const { timeoutMs } = deps.config.imports;
  try {
    let response;
    try {
      response = await deps.importer.http.request(job.url, {
        timeoutMs,
        maxRedirects: IMPORT_MAX_REDIRECTS,
        crossOriginPolicy: PUBLIC_ONLY,
        headers: { accept: 'application/pdf', 'user-agent': 'Folio-Import/1.0' },
      });
    } catch (error) {
      if (error instanceof SafeFetchError) throw fetchFailure(error);
      throw error;
    }
    if (response.status < 200 || response.status > 299) {
      response.body.destroy();
      throw new ImportFailure(
        'IMPORT_ORIGIN_ERROR',
        `The origin answered HTTP ${response.status}${response.status >= 300 && response.status < 400 ? ' (a redirect without a usable Location)' : ''}`,
      );
    }
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBytes) {
      response.body.destroy();
      throw new ImportFailure('IMPORT_TOO_LARGE', `The file is ${declared} bytes; the limit is ${maxBytes}`);
    }
    const stored = await storeImportedPdf(deps, { fileId: file.id, body: response.body, maxBytes, timeoutMs, describeSource: 'The download', name: file.name });
    if (!(await markFileImported(deps.db, file.id, stored))) {
      // Deleted (or finished by another run) while we fetched: what we stored is nobody's.
      await deps.store.deletePrefix(`files/${file.id}/`).catch(() => {});
      return 'skipped';
    }
  } catch (error) {
    const failure = asImportFailure(error);
    if (!failure) throw error;
    await markFileImportFailed(deps.db, file.id, failure.code, failure.message);
    deps.log.info({ event: 'import_url_failed', fileId: file.id, code: failure.code }, `import: ${failure.message}`);
    return 'failed';
  }
  if (job.convert) {
    try {
      await startConversion(deps, { fileId: file.id, options: {} });
      wakeWorkers(deps.boss, [CHUNK_QUEUE]);
    } catch (error) {
      // Not enough credits (or a conversion already started by hand): the file stays an upload, as Convert would leave it.
      if (!isDomainError(error)) throw error;
      deps.log.info({ event: 'import_url_not_converted', fileId: file.id, code: error.code }, 'import: imported, conversion not started');
    }
  }
  return 'imported';
}
