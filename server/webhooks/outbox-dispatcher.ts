import pg from 'pg';
import { DISPATCH_BATCH, dispatchOutboxEvents } from './dispatch-outbox-events.ts';
import type { WebhookDeps } from './webhook-runtime.ts';

/** The channel sql/050's trigger notifies when outbox_events get rows. */
const OUTBOX_CHANNEL = 'folio_outbox';

/** The backstop poll: catches a notification lost while the listener reconnected. */
const POLL_MS = 5_000;
const RECONNECT_MS = 1_000;
/**
 * Dispatch transactions a process runs at once while a backlog lasts: a
 * round waits mostly on PostgreSQL, so two in flight keep it busy (SKIP
 * LOCKED gives them different rows).
 */
const PARALLEL_ROUNDS = 2;

export type OutboxDispatcher = {
  /** Runs a dispatch round now (or one more after the current one); resolves when the outbox is drained. */
  kick: () => Promise<void>;
  stop: () => Promise<void>;
};

/**
 * Keeps the outbox drained with low latency: a LISTEN connection hears the
 * commit of every conversion event and starts a round at once (rounds never
 * overlap in a process; a notice during a round runs one more; a backlog is
 * drained by two transactions at a time), and a poll every 5 s covers
 * notices missed while reconnecting. Any number of processes may run one:
 * dispatchOutboxEvents claims rows with SKIP LOCKED.
 */
export function startOutboxDispatcher(deps: WebhookDeps & { databaseUrl: string }, options: { pollMs?: number } = {}): OutboxDispatcher {
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let client: pg.Client | undefined;
  let reconnectTimer: NodeJS.Timeout | undefined;

  const drain = async () => {
    let claimed: number;
    do {
      claimed = (await dispatchOutboxEvents(deps)).events;
    } while (claimed >= DISPATCH_BATCH && !stopped);
  };
  const round = async () => {
    do {
      again = false;
      await Promise.all(Array.from({ length: PARALLEL_ROUNDS }, drain));
    } while (again && !stopped);
  };

  const kick = (): Promise<void> => {
    if (stopped) return Promise.resolve();
    if (running) {
      again = true;
      return running;
    }
    running = round()
      .catch((error: unknown) => deps.log.error({ err: error }, 'webhook outbox dispatch failed; the next notice or poll tries again'))
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  const connect = async () => {
    const next = new pg.Client({ connectionString: deps.databaseUrl });
    next.on('notification', () => void kick());
    next.on('error', (error) => {
      if (stopped || client !== next) return;
      deps.log.warn({ err: error }, 'webhook outbox listener lost; reconnecting');
      client = undefined;
      next.end().catch(() => {});
      scheduleReconnect();
    });
    try {
      await next.connect();
      await next.query(`listen ${OUTBOX_CHANNEL}`);
    } catch (error) {
      await next.end().catch(() => {});
      throw error;
    }
    if (stopped) {
      await next.end().catch(() => {});
      return;
    }
    client = next;
    // Whatever committed while we were not listening.
    void kick();
  };

  const scheduleReconnect = () => {
    if (stopped) return;
    reconnectTimer = setTimeout(() => {
      connect().catch((error: unknown) => {
        deps.log.warn({ err: error }, 'webhook outbox listener could not connect; retrying');
        scheduleReconnect();
      });
    }, RECONNECT_MS);
  };

  const poll = setInterval(() => void kick(), options.pollMs ?? POLL_MS);
  connect().catch((error: unknown) => {
    deps.log.warn({ err: error }, 'webhook outbox listener could not connect; retrying');
    scheduleReconnect();
  });

  return {
    kick,
    stop: async () => {
      stopped = true;
      clearInterval(poll);
      clearTimeout(reconnectTimer);
      await running;
      await client?.end().catch(() => {});
      client = undefined;
    },
  };
}
