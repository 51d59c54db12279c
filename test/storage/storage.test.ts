import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsStore } from '../../server/storage/fs-store.ts';
import { createS3Store } from '../../server/storage/s3-store.ts';
import { ObjectNotFoundError, readAll, type ObjectStore } from '../../server/storage/storage.ts';

function chunked(total: number, chunk = 64 * 1024): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= total) return this.push(null);
      const size = Math.min(chunk, total - sent);
      const buffer = Buffer.alloc(size, sent % 251);
      sent += size;
      this.push(buffer);
    },
  });
}

function contract(name: string, makeStore: () => ObjectStore) {
  describe(name, () => {
    it('puts a stream and gets the same bytes back', async () => {
      const store = makeStore();
      const { size } = await store.put('files/a/source.pdf', Readable.from([Buffer.from('%PDF-1.7 '), Buffer.from('hello')]));
      expect(size).toBe(14);
      expect((await readAll(await store.get('files/a/source.pdf'))).toString()).toBe('%PDF-1.7 hello');
      expect(await store.exists('files/a/source.pdf')).toBe(true);
    });

    it('streams a body larger than one multipart part', async () => {
      const store = makeStore();
      const total = 11 * 1024 * 1024 + 123;
      const { size } = await store.put('files/big/source.bin', chunked(total));
      expect(size).toBe(total);
      const back = await readAll(await store.get('files/big/source.bin'));
      expect(back.length).toBe(total);
      expect(back[0]).toBe(0);
      expect(back.equals(await readAll(chunked(total)))).toBe(true);
    });

    it('reports a missing object and deletes idempotently', async () => {
      const store = makeStore();
      await expect(store.get('files/none/x')).rejects.toBeInstanceOf(ObjectNotFoundError);
      expect(await store.exists('files/none/x')).toBe(false);
      await store.put('files/b/one', Buffer.from('1'));
      await store.put('files/b/chunks/two', Buffer.from('2'));
      await store.put('files/bb/keep', Buffer.from('3'));
      await store.delete('files/b/one');
      await store.delete('files/b/one');
      expect(await store.exists('files/b/one')).toBe(false);
      await store.deletePrefix('files/b/');
      expect(await store.exists('files/b/chunks/two')).toBe(false);
      expect(await store.exists('files/bb/keep')).toBe(true);
    });

    it('refuses keys that climb out of the store', async () => {
      const store = makeStore();
      await expect(store.put('../escape', Buffer.from('x'))).rejects.toThrow(/invalid object key/);
      await expect(store.get('/abs')).rejects.toThrow(/invalid object key/);
    });
  });
}

let fsRoot = '';
let s3rver: S3rver;
let s3Endpoint = '';
let s3Dir = '';

beforeAll(async () => {
  fsRoot = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-store-'));
  s3Dir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-s3rver-'));
  s3rver = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Dir });
  const address = (await s3rver.run()) as AddressInfo;
  s3Endpoint = `http://127.0.0.1:${address.port}`;
  const client = new S3Client({
    region: 'us-east-1',
    endpoint: s3Endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  await client.send(new CreateBucketCommand({ Bucket: 'folio-test' }));
  client.destroy();
});

afterAll(async () => {
  await s3rver?.close();
  await fs.rm(fsRoot, { recursive: true, force: true });
  await fs.rm(s3Dir, { recursive: true, force: true });
});

contract('fs store', () => createFsStore(fsRoot));
contract('s3 store (s3rver)', () =>
  createS3Store({
    bucket: 'folio-test',
    endpoint: s3Endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  }),
);
