import { PassThrough, Transform, type Readable } from 'node:stream';
import yauzl from 'yauzl';
import { readAll, type ObjectStore } from './storage.ts';

/**
 * yauzl reads a zip by ranges (its central directory at the end, then the one
 * entry wanted); this reader fetches each range from the object store, so a
 * 200 MB result zip is never downloaded or held whole to get its HTML.
 */
class StoreRangeReader extends yauzl.RandomAccessReader {
  readonly store: ObjectStore;
  readonly key: string;

  constructor(store: ObjectStore, key: string) {
    super();
    this.store = store;
    this.key = key;
  }

  override _readStreamForRange(start: number, end: number): Readable {
    const out = new PassThrough();
    // yauzl's end is exclusive, the store's inclusive.
    this.store.get(this.key, { start, end: end - 1 }).then(
      (stream) => {
        stream.on('error', (error) => out.destroy(error));
        stream.pipe(out);
      },
      (error: unknown) => out.destroy(error as Error),
    );
    return out;
  }
}

/** The document's HTML in a result zip: the document, not its report. */
export const isDocumentHtml = (name: string) => name.endsWith('.html') && !name.endsWith('.report.html');

/**
 * The uncompressed bytes of the first entry of the zip stored at `key` whose
 * name `match` accepts, as a stream; undefined when no entry matches. Rejects
 * with ObjectNotFoundError when the zip is missing, and when it is no zip.
 */
export async function openZipEntry(store: ObjectStore, key: string, match: (name: string) => boolean): Promise<Readable | undefined> {
  const size = await store.size(key);
  const zip = await yauzl.fromRandomAccessReaderPromise(new StoreRangeReader(store, key), size, { lazyEntries: true, autoClose: false });
  for await (const entry of zip.eachEntry()) {
    if (!entry.fileName.endsWith('/') && match(entry.fileName)) {
      const stream = await zip.openReadStreamPromise(entry);
      stream.on('close', () => zip.close());
      return stream;
    }
  }
  zip.close();
  return undefined;
}

/** A small entry read whole (a report), refused past `maxBytes` so a hostile zip cannot fill memory. */
export async function readZipEntryText(store: ObjectStore, key: string, match: (name: string) => boolean, maxBytes: number): Promise<string | undefined> {
  const stream = await openZipEntry(store, key, match);
  if (!stream) return undefined;
  let seen = 0;
  const bounded = stream.pipe(
    new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen += chunk.length;
        callback(seen > maxBytes ? new Error(`zip entry larger than ${maxBytes} bytes`) : null, chunk);
      },
    }),
  );
  stream.on('error', (error) => bounded.destroy(error));
  return (await readAll(bounded)).toString('utf8');
}
