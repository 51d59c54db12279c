import type { Readable } from 'node:stream';
import type { Config } from '../config.ts';
import { createFsStore } from './fs-store.ts';
import { createS3Store } from './s3-store.ts';

/**
 * The object store the service keeps uploads, chunk results and zips in. Keys
 * are slash-separated relative paths ("files/<id>/source.pdf"); bodies stream
 * both ways so a 200 MB upload is never held in memory.
 */
export interface ObjectStore {
  readonly driver: 'fs' | 's3';
  /** Writes the whole stream; resolves with the bytes written. */
  put(key: string, body: Readable | Buffer, options?: { contentType?: string }): Promise<{ size: number }>;
  /** A stream of the object, or of bytes start..end (inclusive); rejects with ObjectNotFoundError when missing. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** The object's length in bytes; rejects with ObjectNotFoundError when missing. */
  size(key: string): Promise<number>;
  exists(key: string): Promise<boolean>;
  /** Removes the object; a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** Removes every object under the prefix ("files/<id>/"). */
  deletePrefix(prefix: string): Promise<void>;
}

type ByteRange = { start: number; end: number };

export class ObjectNotFoundError extends Error {
  override name = 'ObjectNotFoundError';
  readonly key: string;
  constructor(key: string) {
    super(`object not found: ${key}`);
    this.key = key;
  }
}

/** Keys come from our own ids, but a key must never climb out of the store. */
export function assertKey(key: string): void {
  if (!key || key.startsWith('/') || key.split('/').some((part) => part === '..' || part === '.' || part === '') || key.includes('\\')) {
    throw new Error(`invalid object key: ${key}`);
  }
}

export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

export function createObjectStore(config: Config['storage']): ObjectStore {
  if (config.driver === 's3') {
    if (!config.s3.bucket) throw new Error('STORAGE_DRIVER=s3 needs S3_BUCKET');
    return createS3Store({ bucket: config.s3.bucket, endpoint: config.s3.endpoint, forcePathStyle: config.s3.forcePathStyle, region: config.s3.region });
  }
  return createFsStore(config.fsRoot);
}
