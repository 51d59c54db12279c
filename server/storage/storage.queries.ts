import { z } from 'zod';
import { AnyRow, sql, type Queryable } from '../db/database.ts';

/** A connection row as the domain code reads it (the encrypted secret included; never returned to a caller). */
export const ConnectionRow = z.object({
  id: z.uuid(),
  ownerId: z.uuid(),
  name: z.string(),
  bucket: z.string(),
  prefix: z.string(),
  region: z.string(),
  endpoint: z.string().nullable(),
  roleArn: z.string().nullable(),
  accessKeyId: z.string().nullable(),
  secretAccessKeyEnc: z.string().nullable(),
  outputPrefix: z.string(),
  defaultOptions: z.record(z.string(), z.unknown()),
  watched: z.boolean(),
  watchIntervalMinutes: z.number(),
  watchState: z.enum(['active', 'paused_credits']),
  pausedNotifiedAt: z.date().nullable(),
  lastListedAt: z.date().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type ConnectionRow = z.infer<typeof ConnectionRow>;

const connectionColumns = sql.fragment`
  id, owner_id as "ownerId", name, bucket, prefix, region, endpoint, role_arn as "roleArn", access_key_id as "accessKeyId",
  secret_access_key_enc as "secretAccessKeyEnc", output_prefix as "outputPrefix", default_options as "defaultOptions", watched,
  watch_interval_minutes as "watchIntervalMinutes", watch_state as "watchState", paused_notified_at as "pausedNotifiedAt",
  last_listed_at as "lastListedAt", created_at as "createdAt", updated_at as "updatedAt"`;

export type NewConnection = {
  id: string;
  ownerId: string;
  name: string;
  bucket: string;
  prefix: string;
  region: string;
  endpoint: string | null;
  roleArn: string | null;
  accessKeyId: string | null;
  secretAccessKeyEnc: string | null;
  outputPrefix: string;
  defaultOptions: Record<string, unknown>;
  watched: boolean;
  watchIntervalMinutes: number;
};

/** Counts the owner's connections under a lock on the owner row, so two creations cannot both pass the cap. */
export async function countOwnerConnectionsLocked(tx: Queryable, ownerId: string): Promise<number> {
  await tx.query(sql.type(AnyRow)`select id from users where id = ${ownerId} for update`);
  return tx.oneFirst(sql.type(z.object({ count: z.number() }))`select count(*)::int as count from storage_connections where owner_id = ${ownerId}`);
}

export function insertConnection(tx: Queryable, row: NewConnection): Promise<ConnectionRow> {
  return tx.one(sql.type(ConnectionRow)`
    insert into storage_connections (id, owner_id, name, bucket, prefix, region, endpoint, role_arn, access_key_id, secret_access_key_enc,
                                     output_prefix, default_options, watched, watch_interval_minutes)
    values (${row.id}, ${row.ownerId}, ${row.name}, ${row.bucket}, ${row.prefix}, ${row.region}, ${row.endpoint}, ${row.roleArn},
            ${row.accessKeyId}, ${row.secretAccessKeyEnc}, ${row.outputPrefix}, ${sql.jsonb(row.defaultOptions as never)}, ${row.watched},
            ${row.watchIntervalMinutes})
    returning ${connectionColumns}`);
}

export function selectConnection(db: Queryable, id: string): Promise<ConnectionRow | null> {
  return db.maybeOne(sql.type(ConnectionRow)`select ${connectionColumns} from storage_connections where id = ${id}`);
}

export function selectOwnerConnections(db: Queryable, ownerId: string) {
  return db.any(sql.type(ConnectionRow)`select ${connectionColumns} from storage_connections where owner_id = ${ownerId} order by created_at`);
}

export type ConnectionChanges = Partial<Pick<NewConnection, 'name' | 'prefix' | 'outputPrefix' | 'defaultOptions' | 'watched' | 'watchIntervalMinutes'>>;

export function updateConnection(db: Queryable, id: string, changes: ConnectionChanges): Promise<ConnectionRow | null> {
  const sets = [
    changes.name === undefined ? null : sql.fragment`name = ${changes.name}`,
    changes.prefix === undefined ? null : sql.fragment`prefix = ${changes.prefix}`,
    changes.outputPrefix === undefined ? null : sql.fragment`output_prefix = ${changes.outputPrefix}`,
    changes.defaultOptions === undefined ? null : sql.fragment`default_options = ${sql.jsonb(changes.defaultOptions as never)}`,
    changes.watched === undefined ? null : sql.fragment`watched = ${changes.watched}`,
    changes.watchIntervalMinutes === undefined ? null : sql.fragment`watch_interval_minutes = ${changes.watchIntervalMinutes}`,
    sql.fragment`updated_at = now()`,
  ].filter((item) => item !== null);
  return db.maybeOne(sql.type(ConnectionRow)`
    update storage_connections set ${sql.join(sets, sql.fragment`, `)} where id = ${id} returning ${connectionColumns}`);
}

export async function deleteConnection(db: Queryable, id: string): Promise<void> {
  await db.query(sql.type(AnyRow)`delete from storage_connections where id = ${id}`);
}

/** Watched connections whose interval has passed since their last listing (or that were never listed). */
export function selectDueWatches(db: Queryable, now: Date) {
  return db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    select id from storage_connections
     where watched and watch_state = 'active' and (last_listed_at is null or last_listed_at + make_interval(mins => watch_interval_minutes) <= ${now.toISOString()}::timestamptz)
     order by last_listed_at nulls first limit 500`);
}

export async function markListed(db: Queryable, id: string, now: Date): Promise<void> {
  await db.query(sql.type(AnyRow)`update storage_connections set last_listed_at = ${now.toISOString()}::timestamptz where id = ${id}`);
}

/** active → paused_credits; true when this call paused it (the one that mails the owner). */
export async function pauseForCredits(db: Queryable, id: string): Promise<boolean> {
  const row = await db.maybeOne(sql.type(AnyRow)`
    update storage_connections set watch_state = 'paused_credits', updated_at = now() where id = ${id} and watch_state = 'active' returning id`);
  return row !== null;
}

/** Claims the pause notice: true for exactly one caller per pause. */
export async function claimPauseNotice(db: Queryable, id: string): Promise<boolean> {
  const row = await db.maybeOne(sql.type(AnyRow)`
    update storage_connections set paused_notified_at = now()
     where id = ${id} and watch_state = 'paused_credits' and paused_notified_at is null returning id`);
  return row !== null;
}

export async function releasePauseNotice(db: Queryable, id: string): Promise<void> {
  await db.query(sql.type(AnyRow)`update storage_connections set paused_notified_at = null where id = ${id}`);
}

export async function resumeFromPause(db: Queryable, id: string): Promise<boolean> {
  const row = await db.maybeOne(sql.type(AnyRow)`
    update storage_connections set watch_state = 'active', paused_notified_at = null, updated_at = now()
     where id = ${id} and watch_state = 'paused_credits' returning id`);
  return row !== null;
}

export const ImportRow = z.object({
  id: z.uuid(),
  connectionId: z.uuid(),
  objectKey: z.string(),
  etag: z.string(),
  sizeBytes: z.coerce.number(),
  source: z.enum(['import', 'watch']),
  status: z.enum(['queued', 'waiting_credits', 'converting', 'writing_output', 'completed', 'failed']),
  fileId: z.uuid().nullable(),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
  createdAt: z.date(),
  updatedAt: z.date(),
});
export type ImportRow = z.infer<typeof ImportRow>;
export type ImportStatus = ImportRow['status'];

const importColumns = sql.fragment`
  id, connection_id as "connectionId", object_key as "objectKey", etag, size_bytes as "sizeBytes", source, status, file_id as "fileId",
  error_code as "errorCode", error_message as "errorMessage", created_at as "createdAt", updated_at as "updatedAt"`;

/**
 * Records the objects not seen before (same key and ETag: seen) and returns
 * the ids of the new rows only; the unique constraint decides, so two
 * listings racing each other import an object once.
 */
export async function insertNewImports(
  tx: Queryable,
  connectionId: string,
  source: 'import' | 'watch',
  objects: Array<{ key: string; etag: string; size: number }>,
): Promise<string[]> {
  if (objects.length === 0) return [];
  const ids = await tx.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into storage_imports (connection_id, object_key, etag, size_bytes, source)
    select ${connectionId}, key, etag, size, ${source}
      from unnest(${sql.array(
        objects.map((o) => o.key),
        'text',
      )}, ${sql.array(
        objects.map((o) => o.etag),
        'text',
      )}, ${sql.array(
        objects.map((o) => o.size),
        'int8',
      )}) as t(key, etag, size)
    on conflict on constraint storage_imports_once do nothing
    returning id`);
  return [...ids];
}

export function selectImport(db: Queryable, id: string): Promise<ImportRow | null> {
  return db.maybeOne(sql.type(ImportRow)`select ${importColumns} from storage_imports where id = ${id}`);
}

export function selectConnectionImports(db: Queryable, connectionId: string, limit = 500) {
  return db.any(
    sql.type(ImportRow)`select ${importColumns} from storage_imports where connection_id = ${connectionId} order by created_at desc, object_key limit ${limit}`,
  );
}

/** Moves an import between states; false when it was not in one of `from` (another run moved it). */
export async function moveImport(
  db: Queryable,
  id: string,
  from: ImportStatus[],
  to: ImportStatus,
  extra: { fileId?: string; errorCode?: string | null; errorMessage?: string | null } = {},
): Promise<boolean> {
  const row = await db.maybeOne(sql.type(AnyRow)`
    update storage_imports
       set status = ${to}, updated_at = now(),
           file_id = coalesce(${extra.fileId ?? null}::uuid, file_id),
           error_code = ${extra.errorCode === undefined ? sql.fragment`error_code` : sql.fragment`${extra.errorCode}`},
           error_message = ${extra.errorMessage === undefined ? sql.fragment`error_message` : sql.fragment`${extra.errorMessage}`}
     where id = ${id} and status = any(${sql.array(from, 'text')})
    returning id`);
  return row !== null;
}

/** Connections paused for credits: the tick looks whether their balance covers the next file again. */
export function selectPausedConnections(db: Queryable) {
  return db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    select id from storage_connections where watch_state = 'paused_credits' order by updated_at limit 500`);
}

/** Pages of the oldest parked import's file: what the balance must cover before the connection resumes (1 when unknown). */
export function selectOldestWaitingPages(db: Queryable, connectionId: string) {
  return db.maybeOneFirst(sql.type(z.object({ pages: z.number() }))`
    select coalesce(f.page_count, 1) as pages from storage_imports i left join files f on f.id = i.file_id
     where i.connection_id = ${connectionId} and i.status = 'waiting_credits' order by i.created_at, i.object_key limit 1`);
}

/** Imports of this connection parked for credits, oldest first. */
export function selectWaitingImports(db: Queryable, connectionId: string, limit: number) {
  return db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    select id from storage_imports where connection_id = ${connectionId} and status = 'waiting_credits' order by created_at, object_key limit ${limit}`);
}

/** Converting imports whose conversion has ended (or whose file is gone): their results go back to the bucket. */
export function selectEndedConversions(db: Queryable, limit = 500) {
  return db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    select i.id from storage_imports i
     where i.status = 'converting'
       and (i.file_id is null or not exists (
             select 1 from large_conversion_jobs j where j.file_id = i.file_id and j.status not in ('completed', 'failed', 'cancelled')))
     order by i.updated_at limit ${limit}`);
}

export async function insertImportedFile(
  db: Queryable,
  row: {
    id: string;
    ownerId: string;
    name: string;
    size: number;
    pages: number | null;
    key: string | null;
    status: 'uploaded' | 'processing';
    phase: string | null;
  },
): Promise<void> {
  await db.query(sql.type(AnyRow)`
    insert into files (id, owner_id, tenant_id, original_name, content_type, size_bytes, page_count, storage_key, status, phase)
    select ${row.id}, u.id, u.tenant_id, ${row.name}, 'application/pdf', ${row.size}, ${row.pages}, ${row.key}, ${row.status}, ${row.phase}
      from users u where u.id = ${row.ownerId}
    on conflict (id) do nothing`);
}

/** An imported file that arrived: the stored PDF with its pages, ready to convert like an upload. */
export async function markFileImported(db: Queryable, fileId: string, fields: { size: number; pages: number; key: string }): Promise<boolean> {
  const row = await db.maybeOne(sql.type(AnyRow)`
    update files set status = 'uploaded', phase = null, size_bytes = ${fields.size}, page_count = ${fields.pages}, storage_key = ${fields.key},
                     error_code = null, error_message = null, updated_at = now()
     where id = ${fileId} and status = 'processing' and storage_key is null returning id`);
  return row !== null;
}

export async function markFileImportFailed(db: Queryable, fileId: string, code: string, message: string): Promise<void> {
  await db.query(sql.type(AnyRow)`
    update files set status = 'failed', phase = null, error_code = ${code}, error_message = ${message}, updated_at = now()
     where id = ${fileId} and status = 'processing' and storage_key is null`);
}

const ImportingFile = z.object({ id: z.uuid(), ownerId: z.uuid(), status: z.string(), storageKey: z.string().nullable(), name: z.string() });

export function selectImportingFile(db: Queryable, fileId: string) {
  return db.maybeOne(sql.type(ImportingFile)`
    select id, owner_id as "ownerId", status, storage_key as "storageKey", original_name as "name" from files where id = ${fileId}`);
}

const OwnerContact = z.object({ email: z.string(), customerId: z.uuid() });

export function selectOwnerContact(db: Queryable, ownerId: string) {
  return db.one(sql.type(OwnerContact)`select email, customer_id as "customerId" from users where id = ${ownerId}`);
}
