import type { Express, Response } from 'express';
import { sendError } from '../http/errors.ts';
import { authenticateUser, requireFileAccess } from '../http/guards.ts';
import type { Snapshot } from '../conversion-jobs/conversion-jobs.queries.ts';
import { downloadLinks } from '../conversion-jobs/download-token.ts';
import { readConversionProgress } from '../conversion-jobs/read-conversion-progress.ts';
import { resolveSigningSecrets } from '../secrets.ts';
import type { AppDeps } from '../trpc/context.ts';

const KEEPALIVE_MS = 15_000;

type StreamEvent = { event: 'progress' | 'completed' | 'failed' | 'cancelled'; data: Record<string, unknown> };

/**
 * What a snapshot says to a client: progress while live, one terminal event at the end. A cancelled DOCX
 * leaves no job row to say so, only its file back at `uploaded`: `cancelHeard` (the notice came) tells it apart
 * from a file not yet started.
 */
function snapshotEvent(snapshot: Snapshot, links: () => { downloadUrl: string; htmlUrl: string }, cancelHeard: boolean): StreamEvent {
  const base = {
    fileId: snapshot.fileId,
    jobId: snapshot.jobId,
    chunksDone: snapshot.chunksDone,
    totalChunks: snapshot.totalChunks,
    pagesDone: snapshot.pagesDone,
    totalPages: snapshot.totalPages,
  };
  const status = snapshot.jobStatus ?? snapshot.fileStatus;
  if (status === 'completed' || (snapshot.jobStatus === null && snapshot.fileStatus === 'completed')) {
    return { event: 'completed', data: { ...base, pagesDone: snapshot.totalPages, ...links() } };
  }
  if (status === 'failed')
    return { event: 'failed', data: { ...base, code: snapshot.errorCode ?? 'CONVERSION_FAILED', message: snapshot.errorMessage ?? 'The conversion failed' } };
  if (status === 'cancelled' || (cancelHeard && snapshot.jobStatus === null && snapshot.fileStatus === 'uploaded')) return { event: 'cancelled', data: base };
  const phase =
    snapshot.jobStatus === 'pending'
      ? `Queued: ${snapshot.chunksDone}/${snapshot.totalChunks} chunks`
      : snapshot.jobStatus === 'waiting_batch'
        ? 'Waiting for the batch lane'
        : snapshot.jobStatus === 'assembling'
          ? 'Assembling'
          : (snapshot.phase ?? `Converting: ${snapshot.chunksDone}/${snapshot.totalChunks} chunks`);
  return { event: 'progress', data: { ...base, status, phase } };
}

/**
 * GET /api/convert/:fileId/stream: server-sent events from the shared
 * LISTEN connection. Each notice re-reads the file's state once for all of
 * this file's clients of the request; a terminal event closes the stream.
 */
export function mountConvertStream(app: Express, deps: AppDeps) {
  const downloadSecret = resolveSigningSecrets(deps.config).download;
  app.get('/api/convert/:fileId/stream', async (req, res) => {
    let unsubscribe: (() => void) | undefined;
    try {
      const user = await authenticateUser(deps, req.headers);
      const id = await requireFileAccess(deps, user, req.params.fileId);

      res.status(200).set({
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.flushHeaders();

      let closed = false;
      let reading = false;
      let again = false;
      let last = '';
      let cancelHeard = false;
      const close = () => {
        if (closed) return;
        closed = true;
        clearInterval(keepalive);
        unsubscribe?.();
        res.end();
      };
      const write = (streamEvent: StreamEvent) => {
        const line = JSON.stringify(streamEvent.data);
        if (streamEvent.event === 'progress' && line === last) return;
        last = line;
        res.write(`event: ${streamEvent.event}\ndata: ${line}\n\n`);
        if (streamEvent.event !== 'progress') close();
      };
      // Notices coalesce: while one read runs, further notices ask for one more read after it.
      const refresh = async () => {
        if (closed) return;
        if (reading) {
          again = true;
          return;
        }
        reading = true;
        try {
          do {
            again = false;
            const snapshot = await readConversionProgress(deps, { fileId: id });
            if (!snapshot) {
              write({ event: 'cancelled', data: { fileId: id, reason: 'deleted' } });
              return;
            }
            if (!closed) write(snapshotEvent(snapshot, () => downloadLinks(downloadSecret, id, deps.clock.now()), cancelHeard));
          } while (again && !closed);
        } catch (error) {
          deps.log.warn({ err: error, fileId: id }, 'conversion stream read failed');
        } finally {
          reading = false;
        }
      };
      const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
      res.on('close', close);
      unsubscribe = await deps.conversionEvents.subscribe(id, (notice) => {
        if (notice.event === 'cancelled') cancelHeard = true;
        void refresh();
      });
      if (closed) unsubscribe();
      await refresh();
    } catch (error) {
      unsubscribe?.();
      sendError(res as Response, error);
    }
  });
}
