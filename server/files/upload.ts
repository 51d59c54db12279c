import { randomUUID } from 'node:crypto';
import { PassThrough, Transform } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { AnyRow, sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { AuthUser } from '../auth/users.ts';
import { DomainError } from '../errors.ts';
import { enqueueDocxConversion, ensureConversionQueues } from '../conversion-jobs/conversion-jobs.jobs.ts';
import { readAll } from '../storage/storage.ts';
import { createHold, ON_DEMAND_HOLD_WINDOW_MS } from '../credits/credits.ts';
import { DOCX_CONTENT_TYPE } from './docx.ts';
import type { UploadedFile } from './uploaded-file.ts';
import { measureDocx } from './docx-pages.ts';
import { countStoredPages } from '../storage/receive-pdf.ts';

const PDF_MAGIC = Buffer.from('%PDF-');
const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);

/** Counts bytes, keeps the first few for sniffing, and fails the stream past the limit. */
function meter(limit: number) {
  let size = 0;
  let head = Buffer.alloc(0);
  let tooLarge = false;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (head.length < 8) head = Buffer.concat([head, chunk.subarray(0, 8 - head.length)]);
      if (size > limit) {
        tooLarge = true;
        callback(new DomainError('FILE_TOO_LARGE', `The file is larger than ${limit} bytes`));
        return;
      }
      callback(null, chunk);
    },
  });
  return { stream, state: () => ({ size, head, tooLarge }) };
}

/**
 * POST /api/files: the `file` field streams through a byte meter into the
 * store (never whole in memory), then is sniffed: a PDF is opened with the
 * engine to read its page count; a DOCX starts the inline path.
 */
export async function receiveUpload(
  deps: Pick<Deps, 'db' | 'boss' | 'config' | 'store' | 'engine'>,
  user: AuthUser,
  req: IncomingMessage,
  options: { onField?: (name: string, value: string) => void } = {},
): Promise<UploadedFile> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^multipart\/form-data/i.test(contentType)) throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'Send the file as multipart/form-data in the field "file"');
  const id = randomUUID();
  const maxBytes = deps.config.conversion.uploadMaxBytes;
  const { store } = deps;

  const received = await new Promise<{ key: string; name: string; size: number; head: Buffer }>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, limits: { files: 1, fileSize: maxBytes + 1, fields: 20 } });
    } catch {
      reject(new DomainError('BAD_REQUEST', 'Malformed multipart body'));
      return;
    }
    let started = false;
    let settled = false;
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      req.resume();
      reject(error);
    };
    parser.on('file', (field, file, info) => {
      if (field !== 'file' || started) {
        file.resume();
        return;
      }
      started = true;
      const key = `files/${id}/source`;
      const metered = meter(maxBytes);
      const body = new PassThrough();
      file.on('error', (error) => body.destroy(error));
      metered.stream.on('error', (error) => body.destroy(error));
      file.pipe(metered.stream).pipe(body);
      store.put(key, body).then(
        () => {
          const state = metered.state();
          if (settled) return;
          settled = true;
          resolve({ key, name: info.filename || 'upload', size: state.size, head: state.head });
        },
        async (error: unknown) => {
          await store.deletePrefix(`files/${id}/`).catch(() => {});
          fail(metered.state().tooLarge ? new DomainError('FILE_TOO_LARGE', `The file is larger than ${maxBytes} bytes`) : error);
        },
      );
    });
    // text fields beside the file are the caller's (POST /api/benchmark takes its pipelines so)
    parser.on('field', (name, value) => options.onField?.(name, value));
    parser.on('error', () => fail(new DomainError('BAD_REQUEST', 'Malformed multipart body')));
    parser.on('close', () => {
      if (!started) fail(new DomainError('BAD_REQUEST', 'Send the file in the multipart field "file"'));
    });
    req.pipe(parser);
  });

  const discard = () => store.deletePrefix(`files/${id}/`).catch(() => {});
  try {
    const name = received.name.slice(0, 255);
    if (received.size === 0) throw new DomainError('BAD_REQUEST', 'The file is empty');
    if (received.head.subarray(0, 5).equals(PDF_MAGIC)) {
      const pages = await countStoredPages(deps, received.key, name);
      await insertFile(deps, {
        id,
        ownerId: user.id,
        tenantId: user.tenantId,
        name,
        contentType: 'application/pdf',
        size: received.size,
        pages,
        key: received.key,
        status: 'uploaded',
      });
      return { id, name, contentType: 'application/pdf', sizeBytes: received.size, pages, status: 'uploaded' };
    }
    if (received.head.subarray(0, 4).equals(ZIP_MAGIC) && /\.docx$/i.test(name)) {
      const { pages } = await measureDocx(await readAll(await store.get(received.key)));
      if (pages > deps.config.conversion.uploadMaxPages) {
        throw new DomainError('PDF_TOO_MANY_PAGES', `The DOCX counts ${pages} pages; the limit is ${deps.config.conversion.uploadMaxPages}`);
      }
      await ensureConversionQueues(deps.boss);
      await deps.db.transaction(async (tx) => {
        // refused here (INSUFFICIENT_CREDITS / FREE_PAGE_LIMIT) before anything converts; the DOCX job settles it
        const holdId = await createHold(tx, { customerId: user.customerId, amount: pages, windowMs: ON_DEMAND_HOLD_WINDOW_MS, reference: `docx:${id}` });
        await insertFile(tx, {
          id,
          ownerId: user.id,
          tenantId: user.tenantId,
          name,
          contentType: DOCX_CONTENT_TYPE,
          size: received.size,
          pages,
          key: received.key,
          status: 'processing',
          holdId,
        });
        await enqueueDocxConversion(deps.boss, tx, { fileId: id });
      });
      return { id, name, contentType: DOCX_CONTENT_TYPE, sizeBytes: received.size, pages, status: 'processing' };
    }
    throw new DomainError('UNSUPPORTED_FILE_TYPE', 'Upload a PDF or a DOCX file');
  } catch (error) {
    await discard();
    throw error;
  }
}

type Queryable = { query: Deps['db']['query'] };

async function insertFile(
  db: { db: Queryable } | Queryable,
  row: {
    id: string;
    ownerId: string;
    tenantId: string | null;
    name: string;
    contentType: string;
    size: number;
    pages: number | null;
    key: string;
    status: string;
    holdId?: string;
  },
) {
  const target = 'db' in db ? db.db : db;
  await target.query(sql.type(AnyRow)`
    insert into files (id, owner_id, tenant_id, original_name, content_type, size_bytes, page_count, storage_key, status, phase, hold_id)
    values (${row.id}, ${row.ownerId}, ${row.tenantId}, ${row.name}, ${row.contentType}, ${row.size}, ${row.pages}, ${row.key}, ${row.status},
            ${row.status === 'processing' ? 'Converting' : null}, ${row.holdId ?? null})`);
}
