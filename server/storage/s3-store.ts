import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import { assertKey, ObjectNotFoundError, type ObjectStore } from './storage.ts';

/** S3's smallest allowed part (except the last). */
const PART_BYTES = 5 * 1024 * 1024;

export type S3StoreOptions = {
  bucket: string;
  endpoint?: string;
  forcePathStyle?: boolean;
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** a client to share (tests); otherwise one is built from the options */
  client?: S3Client;
};

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound' || e?.$metadata?.httpStatusCode === 404;
}

/** Objects in one bucket; credentials come from the SDK's default chain unless given. */
export function createS3Store(options: S3StoreOptions): ObjectStore {
  const client =
    options.client ??
    new S3Client({
      region: options.region ?? 'us-east-1',
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      credentials: options.credentials,
    });
  const Bucket = options.bucket;
  return {
    driver: 's3',
    async put(key, body, putOptions) {
      assertKey(key);
      const ContentType = putOptions?.contentType;
      if (Buffer.isBuffer(body)) {
        await client.send(new PutObjectCommand({ Bucket, Key: key, Body: body, ContentType }));
        return { size: body.length };
      }
      // An unknown-length stream goes up in PART_BYTES parts (multipart upload),
      // so at most one part is in memory; a body smaller than one part is a plain PUT.
      let size = 0;
      let uploadId: string | undefined;
      const parts: Array<{ ETag?: string; PartNumber: number }> = [];
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const flush = async () => {
        const part = Buffer.concat(pending);
        pending = [];
        pendingBytes = 0;
        if (!uploadId) uploadId = (await client.send(new CreateMultipartUploadCommand({ Bucket, Key: key, ContentType }))).UploadId;
        const PartNumber = parts.length + 1;
        const result = await client.send(new UploadPartCommand({ Bucket, Key: key, UploadId: uploadId, PartNumber, Body: part }));
        parts.push({ ETag: result.ETag, PartNumber });
      };
      try {
        for await (const chunk of body) {
          const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
          pending.push(buffer);
          pendingBytes += buffer.length;
          size += buffer.length;
          if (pendingBytes >= PART_BYTES) await flush();
        }
        if (!uploadId) {
          await client.send(new PutObjectCommand({ Bucket, Key: key, Body: Buffer.concat(pending), ContentType }));
          return { size };
        }
        if (pendingBytes > 0) await flush();
        await client.send(new CompleteMultipartUploadCommand({ Bucket, Key: key, UploadId: uploadId, MultipartUpload: { Parts: parts } }));
        return { size };
      } catch (error) {
        if (uploadId) await client.send(new AbortMultipartUploadCommand({ Bucket, Key: key, UploadId: uploadId })).catch(() => {});
        throw error;
      }
    },
    async get(key, range) {
      assertKey(key);
      try {
        const Range = range ? `bytes=${range.start}-${range.end}` : undefined;
        const result = await client.send(new GetObjectCommand({ Bucket, Key: key, Range }));
        return result.Body as Readable;
      } catch (error) {
        if (isNotFound(error)) throw new ObjectNotFoundError(key);
        throw error;
      }
    },
    async size(key) {
      assertKey(key);
      try {
        return (await client.send(new HeadObjectCommand({ Bucket, Key: key }))).ContentLength ?? 0;
      } catch (error) {
        if (isNotFound(error)) throw new ObjectNotFoundError(key);
        throw error;
      }
    },
    async exists(key) {
      assertKey(key);
      try {
        await client.send(new HeadObjectCommand({ Bucket, Key: key }));
        return true;
      } catch (error) {
        if (isNotFound(error)) return false;
        throw error;
      }
    },
    async delete(key) {
      assertKey(key);
      await client.send(new DeleteObjectCommand({ Bucket, Key: key }));
    },
    async deletePrefix(prefix) {
      let token: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket, Prefix: prefix, ContinuationToken: token }));
        const keys = (page.Contents ?? []).map((item) => ({ Key: item.Key! }));
        if (keys.length > 0) await client.send(new DeleteObjectsCommand({ Bucket, Delete: { Objects: keys } }));
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    },
  };
}
