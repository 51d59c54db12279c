import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { AuthUser } from '../auth/users.ts';
import { DomainError } from '../errors.ts';
import { enforceRateLimits } from '../rate-limit/take-rate-limit.ts';
import { decryptConnectionSecret, encryptConnectionSecret } from './connection-secrets.ts';
import { BucketError, describeBucketError, endpointRejection, openCustomerBucket, type CustomerBucket } from './customer-bucket.ts';
import type { ImportDeps } from './import-runtime.ts';
import {
  countOwnerConnectionsLocked,
  deleteConnection,
  insertConnection,
  selectConnection,
  selectOwnerConnections,
  updateConnection,
  type ConnectionRow,
} from './storage.queries.ts';

/** Connections one user may have: every real use fits, and a watch tick stays bounded. */
const MAX_CONNECTIONS_PER_USER = 20;

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const REGION = /^[a-z]{2}(-[a-z0-9]+)+-[0-9]$/;
const ROLE_ARN = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@/-]{1,512}$/;
/** An S3 key prefix: no leading slash, no control characters. */
const Prefix = z
  .string()
  .max(1024)
  .regex(/^[^/\u0000-\u001f\u007f][^\u0000-\u001f\u007f]*$|^$/, 'a key prefix without a leading slash or control characters');
const DefaultOptions = z.object({ highFidelity: z.boolean().optional(), parser: z.enum(['auto', 'local', 'vision', 'parser']).optional() });

export const CreateConnectionInput = z
  .object({
    name: z.string().trim().min(1).max(200).optional(),
    bucket: z.string().regex(BUCKET, 'an S3 bucket name'),
    prefix: Prefix.default(''),
    region: z.string().regex(REGION, 'an AWS region such as eu-west-1'),
    endpoint: z.string().max(2048).optional(),
    roleArn: z.string().regex(ROLE_ARN, 'an IAM role ARN').optional(),
    accessKeyId: z
      .string()
      .regex(/^[A-Za-z0-9]{1,128}$/)
      .optional(),
    secretAccessKey: z.string().min(1).max(256).optional(),
    /** Where results go; default `<prefix>folio-output/`. Keys under it are never imported. */
    outputPrefix: Prefix.min(1).optional(),
    defaultOptions: DefaultOptions.optional(),
    watched: z.boolean().optional(),
    watchIntervalMinutes: z.number().int().min(1).max(1440).optional(),
  })
  .refine((input) => (input.roleArn ? !input.accessKeyId && !input.secretAccessKey : Boolean(input.accessKeyId && input.secretAccessKey)), {
    message: 'give either roleArn, or accessKeyId with secretAccessKey',
  });
export type CreateConnectionInput = z.infer<typeof CreateConnectionInput>;

export const UpdateConnectionInput = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  prefix: Prefix.optional(),
  outputPrefix: Prefix.min(1).optional(),
  defaultOptions: DefaultOptions.optional(),
  watched: z.boolean().optional(),
  watchIntervalMinutes: z.number().int().min(1).max(1440).optional(),
});

/** A connection as its owner sees it: never the secret key. */
export const StorageConnection = z.object({
  id: z.uuid(),
  name: z.string(),
  bucket: z.string(),
  prefix: z.string(),
  region: z.string(),
  endpoint: z.string().nullable(),
  auth: z.enum(['role', 'keys']),
  roleArn: z.string().nullable(),
  /** Put this in the role's trust policy (sts:ExternalId). */
  externalId: z.string().nullable(),
  accessKeyId: z.string().nullable(),
  outputPrefix: z.string(),
  defaultOptions: DefaultOptions,
  watched: z.boolean(),
  watchIntervalMinutes: z.number(),
  /** paused_credits: the watch stopped when credits ran out; it resumes by itself once the balance covers the next file. */
  watchState: z.enum(['active', 'paused_credits']),
  lastListedAt: z.string().nullable(),
  createdAt: z.string(),
});
export type StorageConnection = z.infer<typeof StorageConnection>;

/** The external id of the owner's role connections: one per owner, so another customer cannot point us at this owner's role. */
function externalIdFor(ownerId: string) {
  return `folio-${ownerId}`;
}

function toView(row: ConnectionRow): StorageConnection {
  return {
    id: row.id,
    name: row.name,
    bucket: row.bucket,
    prefix: row.prefix,
    region: row.region,
    endpoint: row.endpoint,
    auth: row.roleArn ? 'role' : 'keys',
    roleArn: row.roleArn,
    externalId: row.roleArn ? externalIdFor(row.ownerId) : null,
    accessKeyId: row.accessKeyId,
    outputPrefix: row.outputPrefix,
    defaultOptions: DefaultOptions.parse(row.defaultOptions),
    watched: row.watched,
    watchIntervalMinutes: row.watchIntervalMinutes,
    watchState: row.watchState,
    lastListedAt: row.lastListedAt?.toISOString() ?? null,
    createdAt: row.createdAt.toISOString(),
  };
}

/** The connection, when this user owns it; anyone else gets 404 (no hint that it exists). */
export async function requireOwnConnection(deps: Pick<ImportDeps, 'db'>, user: AuthUser, id: string): Promise<ConnectionRow> {
  const row = await selectConnection(deps.db, id);
  if (!row || row.ownerId !== user.id) throw new DomainError('NOT_FOUND', 'No such storage connection');
  return row;
}

/** A client for the connection's bucket with its decrypted credentials; close it when done. */
export function openConnectionBucket(deps: Pick<ImportDeps, 'importer'>, row: ConnectionRow): CustomerBucket {
  const credentials = row.roleArn
    ? { kind: 'role' as const, roleArn: row.roleArn, externalId: externalIdFor(row.ownerId), sessionName: `folio-${row.id}` }
    : {
        kind: 'keys' as const,
        accessKeyId: row.accessKeyId!,
        secretAccessKey: decryptConnectionSecret(deps.importer.secretKey, row.id, row.secretAccessKeyEnc!),
      };
  return openCustomerBucket({ bucket: row.bucket, region: row.region, endpoint: row.endpoint ?? undefined, credentials }, deps.importer.bucketOptions);
}

export async function createStorageConnection(deps: ImportDeps, user: AuthUser, input: CreateConnectionInput): Promise<StorageConnection> {
  const endpoint = input.endpoint?.trim().replace(/\/+$/, '') || null;
  if (endpoint) {
    const reason = endpointRejection(`${endpoint}/`, deps.importer.policy);
    if (reason) throw new DomainError('IMPORT_URL_REJECTED', `endpoint: ${reason}`);
  }
  const id = randomUUID();
  const row = await deps.db.transaction(async (tx) => {
    if ((await countOwnerConnectionsLocked(tx, user.id)) >= MAX_CONNECTIONS_PER_USER) {
      throw new DomainError('TOO_MANY_STORAGE_CONNECTIONS', `At most ${MAX_CONNECTIONS_PER_USER} storage connections per user`);
    }
    return insertConnection(tx, {
      id,
      ownerId: user.id,
      name: input.name ?? input.bucket,
      bucket: input.bucket,
      prefix: input.prefix,
      region: input.region,
      endpoint,
      roleArn: input.roleArn ?? null,
      accessKeyId: input.roleArn ? null : input.accessKeyId!,
      secretAccessKeyEnc: input.roleArn ? null : encryptConnectionSecret(deps.importer.secretKey, id, input.secretAccessKey!),
      outputPrefix: input.outputPrefix ?? `${input.prefix}folio-output/`,
      defaultOptions: input.defaultOptions ?? {},
      watched: input.watched ?? false,
      watchIntervalMinutes: input.watchIntervalMinutes ?? 5,
    });
  });
  deps.log.info(
    { event: 'storage_connection_created', connectionId: id, userId: user.id, auth: input.roleArn ? 'role' : 'keys' },
    'storage: connection created',
  );
  return toView(row);
}

export async function listStorageConnections(deps: Pick<ImportDeps, 'db'>, user: AuthUser): Promise<StorageConnection[]> {
  return (await selectOwnerConnections(deps.db, user.id)).map(toView);
}

export async function updateStorageConnection(
  deps: Pick<ImportDeps, 'db'>,
  user: AuthUser,
  id: string,
  changes: z.infer<typeof UpdateConnectionInput>,
): Promise<StorageConnection> {
  await requireOwnConnection(deps, user, id);
  const row = await updateConnection(deps.db, id, changes);
  if (!row) throw new DomainError('NOT_FOUND', 'No such storage connection');
  return toView(row);
}

/** Removes the connection and its import history; files already imported stay the owner's. */
export async function deleteStorageConnection(deps: Pick<ImportDeps, 'db'>, user: AuthUser, id: string): Promise<{ deleted: true; id: string }> {
  await requireOwnConnection(deps, user, id);
  await deleteConnection(deps.db, id);
  return { deleted: true, id };
}

export const ConnectionTestResult = z.object({
  ok: z.boolean(),
  /** Up to 10 keys of the first page under the prefix. */
  keys: z.array(z.string()),
  /** The AWS error exactly as the bucket (or STS) answered it. */
  error: z.object({ code: z.string(), httpStatus: z.number().nullable(), message: z.string() }).nullable(),
});

/**
 * Calls into customers' buckets one user may start per hour (tests and
 * imports together): every real use fits; a script cannot make us hammer a
 * bucket, or STS, on its behalf.
 */
const BUCKET_CALLS_PER_USER_PER_HOUR = 120;

export async function limitBucketCalls(deps: Pick<ImportDeps, 'db' | 'clock'>, user: AuthUser): Promise<void> {
  await enforceRateLimits(
    deps.db,
    [{ key: `storage:bucket-calls:user:${user.id}`, limit: BUCKET_CALLS_PER_USER_PER_HOUR, windowMs: 60 * 60 * 1000 }],
    deps.clock.now(),
    'Too many storage tests and imports; try again later',
  );
}

/** Lists one page of keys under the prefix with the stored credentials; a failure is an answer, not an error. */
export async function testStorageConnection(deps: ImportDeps, user: AuthUser, id: string): Promise<z.infer<typeof ConnectionTestResult>> {
  const row = await requireOwnConnection(deps, user, id);
  await limitBucketCalls(deps, user);
  let bucket: CustomerBucket | undefined;
  try {
    bucket = openConnectionBucket(deps, row);
    const page = await bucket.list(row.prefix, { maxKeys: 10 });
    return { ok: true, keys: page.objects.map((object) => object.key), error: null };
  } catch (error) {
    if (!(error instanceof BucketError)) throw error;
    return { ok: false, keys: [], error: { code: error.awsCode, httpStatus: error.httpStatus ?? null, message: describeBucketError(error) } };
  } finally {
    bucket?.close();
  }
}
