import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { assertKey, ObjectNotFoundError, type ObjectStore } from './storage.ts';

/** Objects as files under root. Writes go to a temp name and are renamed, so a reader never sees half an object. */
export function createFsStore(root: string): ObjectStore {
  const resolve = (key: string) => {
    assertKey(key);
    return path.join(root, ...key.split('/'));
  };
  return {
    driver: 'fs',
    async put(key, body) {
      const target = resolve(key);
      await fsp.mkdir(path.dirname(target), { recursive: true });
      const temp = `${target}.${randomUUID()}.part`;
      let size = 0;
      const source = Buffer.isBuffer(body) ? Readable.from([body]) : body;
      source.on('data', (chunk: Buffer) => (size += chunk.length));
      try {
        await pipeline(source, fs.createWriteStream(temp));
        await fsp.rename(temp, target);
      } catch (error) {
        await fsp.rm(temp, { force: true });
        throw error;
      }
      return { size };
    },
    async get(key, range) {
      const file = resolve(key);
      try {
        const handle = await fsp.open(file, 'r');
        return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ObjectNotFoundError(key);
        throw error;
      }
    },
    async size(key) {
      try {
        return (await fsp.stat(resolve(key))).size;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new ObjectNotFoundError(key);
        throw error;
      }
    },
    async exists(key) {
      try {
        return (await fsp.stat(resolve(key))).isFile();
      } catch {
        return false;
      }
    },
    async delete(key) {
      await fsp.rm(resolve(key), { force: true });
    },
    async deletePrefix(prefix) {
      const trimmed = prefix.replace(/\/+$/, '');
      await fsp.rm(resolve(trimmed), { recursive: true, force: true });
    },
  };
}
