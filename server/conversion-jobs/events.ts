import pg from 'pg';
import type { Log } from '../log.ts';
import { CONVERSION_CHANNEL } from './conversion-jobs.queries.ts';

export type ConversionNotice = { fileId: string; jobId: string | null; event: string };
type Listener = (notice: ConversionNotice) => void;

/**
 * One LISTEN connection per process, fanned out to every subscriber by file
 * id: a thousand SSE clients cost one connection, not a thousand polls. The
 * connection opens with the first subscriber and closes with the last; after
 * a drop it reconnects and tells everyone to re-read (a notice may be lost).
 */
export function createConversionEvents(databaseUrl: string, log: Log) {
  const byFile = new Map<string, Set<Listener>>();
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let subscribers = 0;

  const dispatch = (notice: ConversionNotice) => {
    for (const listener of byFile.get(notice.fileId) ?? []) {
      try {
        listener(notice);
      } catch (error) {
        log.warn({ err: error }, 'conversion event listener failed');
      }
    }
  };

  async function connect(): Promise<void> {
    const next = new pg.Client({ connectionString: databaseUrl });
    next.on('notification', (message) => {
      if (message.channel !== CONVERSION_CHANNEL || !message.payload) return;
      try {
        dispatch(JSON.parse(message.payload) as ConversionNotice);
      } catch {
        // not ours
      }
    });
    next.on('error', (error) => {
      log.warn({ err: error }, 'conversion listener connection lost');
      if (client === next) {
        client = undefined;
        next.end().catch(() => {});
        if (subscribers > 0) {
          connecting = connect().then(
            () => {
              for (const fileId of byFile.keys()) dispatch({ fileId, jobId: null, event: 'resync' });
            },
            () => {},
          );
        }
      }
    });
    await next.connect();
    await next.query(`listen ${CONVERSION_CHANNEL}`);
    client = next;
  }

  return {
    /** Resolves once the listener is live, so nothing committed after it is missed. */
    async subscribe(fileId: string, listener: Listener): Promise<() => void> {
      subscribers++;
      let set = byFile.get(fileId);
      if (!set) byFile.set(fileId, (set = new Set()));
      set.add(listener);
      let done = false;
      const unsubscribe = () => {
        if (done) return;
        done = true;
        subscribers--;
        set.delete(listener);
        if (set.size === 0) byFile.delete(fileId);
        if (subscribers === 0 && client) {
          const closing = client;
          client = undefined;
          connecting = undefined;
          closing.end().catch(() => {});
        }
      };
      try {
        if (!client) {
          connecting ??= connect().finally(() => (connecting = undefined));
          await connecting;
        }
      } catch (error) {
        unsubscribe();
        throw error;
      }
      return unsubscribe;
    },
    listenerCount: () => (client ? 1 : 0),
  };
}

export type ConversionEvents = ReturnType<typeof createConversionEvents>;
