import { z } from 'zod';
import { ImportObjectsInput, ImportObjectsResult, importFromConnection, listConnectionImports, StorageImport } from '../storage/import-objects.ts';
import { ImportedFile, ImportUrlInput, requestUrlImport } from '../storage/import-url.ts';
import {
  ConnectionTestResult,
  CreateConnectionInput,
  createStorageConnection,
  deleteStorageConnection,
  listStorageConnections,
  StorageConnection,
  testStorageConnection,
  UpdateConnectionInput,
  updateStorageConnection,
} from '../storage/manage-storage-connections.ts';
import { router, userProcedure } from '../trpc/trpc.ts';

const ById = z.object({ id: z.uuid() });
const NOT_YOURS = '404 NOT_FOUND for a connection that does not exist or is not the caller’s.';

/** Input from storage (Bearer JWT): import by URL, S3 connections, their imports and watches. */
export const storageRouter = router({
  importUrl: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/files/import',
        tags: ['files'],
        summary: 'Imports a PDF from a public HTTPS URL; the fetch runs as a job and the file appears in GET /api/files with phase "Importing"',
        description:
          'Answers 202-style at once with the file (status processing). The fetch: every hop resolved and checked against private, loopback, link-local, CGNAT and metadata addresses, the socket pinned to the checked address, at most 3 redirects (each checked), the body cut at the upload limit while streaming, and checked as a PDF. A failed import leaves the file failed with errorCode IMPORT_REFUSED, IMPORT_UNREACHABLE, IMPORT_TOO_MANY_REDIRECTS, IMPORT_ORIGIN_ERROR (4xx/5xx), IMPORT_TOO_LARGE, IMPORT_NOT_A_PDF or a PDF_* code. convert: true starts the conversion once the file has arrived (credits held as for Convert). 422 IMPORT_URL_REJECTED for a URL that is not public HTTPS; 429 TOO_MANY_REQUESTS past 200 imports an hour.',
        protect: true,
        successDescription: 'The file, importing',
      },
    })
    .input(ImportUrlInput)
    .output(ImportedFile)
    .mutation(({ ctx, input }) => requestUrlImport(ctx.deps, ctx.user, input)),

  createConnection: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/storage/connections',
        tags: ['storage'],
        summary: 'Connects an S3 bucket (and prefix) with an IAM role to assume or access keys (stored encrypted, never shown again)',
        description:
          'roleArn: the role is assumed with externalId (in the answer) as sts:ExternalId. endpoint: an S3-compatible origin, public HTTPS only (422 IMPORT_URL_REJECTED). watched: list the prefix every watchIntervalMinutes (default 5) and convert new PDFs with defaultOptions, writing results to outputPrefix (default <prefix>folio-output/). 409 TOO_MANY_STORAGE_CONNECTIONS beyond 20.',
        protect: true,
      },
    })
    .input(CreateConnectionInput)
    .output(StorageConnection)
    .mutation(({ ctx, input }) => createStorageConnection(ctx.deps, ctx.user, input)),

  listConnections: userProcedure
    .meta({ openapi: { method: 'GET', path: '/api/storage/connections', tags: ['storage'], summary: "The caller's storage connections", protect: true } })
    .input(z.void())
    .output(z.object({ connections: z.array(StorageConnection) }))
    .query(async ({ ctx }) => ({ connections: await listStorageConnections(ctx.deps, ctx.user) })),

  updateConnection: userProcedure
    .meta({
      openapi: {
        method: 'PATCH',
        path: '/api/storage/connections/{id}',
        tags: ['storage'],
        summary: 'Changes name, prefix, outputPrefix, defaultOptions, watched or watchIntervalMinutes',
        description: NOT_YOURS,
        protect: true,
      },
    })
    .input(ById.extend(UpdateConnectionInput.shape))
    .output(StorageConnection)
    .mutation(({ ctx, input }) => {
      const { id, ...changes } = input;
      return updateStorageConnection(ctx.deps, ctx.user, id, changes);
    }),

  deleteConnection: userProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/api/storage/connections/{id}',
        tags: ['storage'],
        summary: 'Deletes a connection and its import history; imported files stay',
        description: NOT_YOURS,
        protect: true,
      },
    })
    .input(ById)
    .output(z.object({ deleted: z.literal(true), id: z.uuid() }))
    .mutation(({ ctx, input }) => deleteStorageConnection(ctx.deps, ctx.user, input.id)),

  testConnection: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/storage/connections/{id}/test',
        tags: ['storage'],
        summary: 'Lists one page of keys under the prefix; on failure, the exact AWS error (code, HTTP status, message)',
        description: NOT_YOURS,
        protect: true,
      },
    })
    .input(ById)
    .output(ConnectionTestResult)
    .mutation(({ ctx, input }) => testStorageConnection(ctx.deps, ctx.user, input.id)),

  importObjects: userProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/storage/connections/{id}/import',
        tags: ['storage'],
        summary: 'Imports one key, or every .pdf under a prefix (the connection’s by default), and converts each with the connection’s default options',
        description: `Idempotent per (connection, key, ETag): an object already imported is counted in duplicates and not imported again. Up to 10,000 objects per call; nextStartAfter continues a larger prefix. Credits are held per file as for Convert; a file the balance cannot cover waits (and the connection pauses) until the balance is topped up. 404 NOT_FOUND for a missing key; 502 STORAGE_ACCESS_FAILED with the bucket's error. ${NOT_YOURS}`,
        protect: true,
      },
    })
    .input(ById.extend(ImportObjectsInput.shape))
    .output(ImportObjectsResult)
    .mutation(({ ctx, input }) => {
      const { id, ...rest } = input;
      return importFromConnection(ctx.deps, ctx.user, id, rest);
    }),

  listImports: userProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/api/storage/connections/{id}/imports',
        tags: ['storage'],
        summary:
          'The connection’s newest 500 imports: key, ETag, status (queued, waiting_credits, converting, writing_output, completed, failed), file and error',
        description: NOT_YOURS,
        protect: true,
      },
    })
    .input(ById)
    .output(z.object({ imports: z.array(StorageImport) }))
    .query(async ({ ctx, input }) => ({ imports: await listConnectionImports(ctx.deps, ctx.user, input.id) })),
});
