import { createHash, randomUUID } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import type { Deps } from '../deps.ts';
import { bossDb } from '../conversion-jobs/boss-db.ts';
import { DomainError } from '../errors.ts';
import type { ObjectStore } from '../storage/storage.ts';
import { messageIds } from './compose-mime.ts';
import { enqueueIntakeMessage, ensureIntakeQueues, INTAKE_MESSAGE_QUEUE } from './intake.jobs.ts';
import { wakeWorkers } from '../queue/boss.ts';
import { insertIntakeMessage } from './intake.queries.ts';

/** The header block is read from at most this much of the start of a message (for its Message-ID). */
const HEAD_BYTES = 64 * 1024;

export type ReceiveDeps = Pick<Deps, 'db' | 'boss' | 'config' | 'log'> & { store: ObjectStore };

export type InboundDelivery = {
  source: 'smtp' | 'http';
  body: Readable;
  /** MAIL FROM: '' for a bounce (null sender), null when unknown (an HTTP delivery without it). */
  envelopeFrom: string | null;
  envelopeTo: string[];
  remoteAddress?: string;
};

export type ReceivedMessage = { id: string; duplicate: boolean; sizeBytes: number };

/**
 * Writes reach the store in pieces of about this size. The SMTP data stream
 * comes in pieces of a few kilobytes; one file write per piece cost the
 * listener most of its time (measured: writes were 60% of its CPU at 1 MB).
 */
const WRITE_BYTES = 256 * 1024;

/** Counts, hashes and keeps the head of a stream, passing it on in larger pieces; past the limit it passes nothing more on. */
function meter(limit: number) {
  const hash = createHash('sha256');
  let size = 0;
  const head: Buffer[] = [];
  let headBytes = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (headBytes < HEAD_BYTES) {
        head.push(chunk.subarray(0, HEAD_BYTES - headBytes));
        headBytes += Math.min(chunk.length, HEAD_BYTES - headBytes);
      }
      if (size > limit) {
        pending = [];
        pendingBytes = 0;
        return callback();
      }
      hash.update(chunk);
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes < WRITE_BYTES) return callback();
      const piece = Buffer.concat(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
      callback(null, piece);
    },
    flush(callback) {
      callback(null, pendingBytes > 0 ? Buffer.concat(pending, pendingBytes) : undefined);
    },
  });
  return { stream, result: () => ({ size, tooLarge: size > limit, digest: hash.digest('hex'), head: Buffer.concat(head) }) };
}

/** The Message-ID of the top-level header block (folded lines joined), if it has a well-formed one. */
function headerMessageId(head: Buffer): string | undefined {
  const text = head.toString('latin1');
  const end = text.search(/\r?\n\r?\n/);
  const headers = (end === -1 ? text : text.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  const line = /^message-id:[ \t]*(.*)$/im.exec(headers);
  return line ? messageIds(line[1])[0] : undefined;
}

/**
 * Takes one message from the SMTP listener or the inbound route: the raw
 * bytes go to the object store, then its row and its queue job commit in one
 * transaction. Only after that may the caller acknowledge (SMTP 250, HTTP
 * 202), so an acknowledged message is never lost. The same Message-ID (or,
 * without one, the same bytes) received again is acknowledged and dropped: a
 * sender retrying after a lost "250" does not get two conversions.
 *
 * Throws PAYLOAD_TOO_LARGE past the message limit (nothing is kept), BAD_REQUEST for an empty message.
 */
export async function receiveMessage(deps: ReceiveDeps, delivery: InboundDelivery): Promise<ReceivedMessage> {
  const id = randomUUID();
  const key = `intake/${id}/message.eml`;
  const limit = deps.config.intake.maxMessageBytes;
  const metered = meter(limit);
  delivery.body.on('error', (error) => metered.stream.destroy(error));
  try {
    await deps.store.put(key, delivery.body.pipe(metered.stream), { contentType: 'message/rfc822' });
  } catch (error) {
    await deps.store.delete(key).catch(() => {});
    throw error;
  }
  const { size, tooLarge, digest, head } = metered.result();
  if (tooLarge || size === 0) {
    await deps.store.delete(key).catch(() => {});
    if (tooLarge) throw new DomainError('PAYLOAD_TOO_LARGE', `The message is larger than ${limit} bytes`, { context: { limit } });
    throw new DomainError('BAD_REQUEST', 'The message is empty');
  }
  const messageId = headerMessageId(head);
  const dedupeKey = messageId ? `message-id:${messageId}` : `sha256:${digest}`;
  try {
    await ensureIntakeQueues(deps.boss);
    const inserted = await deps.db.transaction(async (tx) => {
      const fresh = await insertIntakeMessage(tx, {
        id,
        source: delivery.source,
        dedupeKey,
        rawKey: key,
        sizeBytes: size,
        envelopeFrom: delivery.envelopeFrom,
        envelopeTo: delivery.envelopeTo,
        remoteAddress: delivery.remoteAddress ?? null,
      });
      if (fresh) await enqueueIntakeMessage(deps.boss, id, { db: bossDb(tx) });
      return fresh;
    });
    if (!inserted) {
      await deps.store.delete(key).catch(() => {});
      deps.log.info({ event: 'intake_duplicate', dedupeKey, source: delivery.source }, 'intake: message already received; acknowledged and dropped');
      return { id, duplicate: true, sizeBytes: size };
    }
    // An intake worker in this process (npm start) takes it now rather than at its next poll.
    wakeWorkers(deps.boss, [INTAKE_MESSAGE_QUEUE]);
    deps.log.debug({ intakeMessageId: id, size, source: delivery.source }, 'intake: message queued');
    return { id, duplicate: false, sizeBytes: size };
  } catch (error) {
    await deps.store.delete(key).catch(() => {});
    throw error;
  }
}
