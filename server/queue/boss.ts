import { PgBoss, type ConstructorOptions } from 'pg-boss';

export type Boss = PgBoss;

/**
 * Makes this process's workers of the given queues fetch at once, instead of
 * sleeping out `pollingIntervalSeconds` (pg-boss bursts only for batches
 * larger than one): for work just queued, or a queue whose job just ended. A
 * fetch that finds nothing falls back to normal polling; workers in other
 * processes poll as usual.
 */
export function wakeWorkers(boss: Boss, queues: string[]): void {
  for (const worker of boss.getWipData()) {
    if (queues.includes(worker.name)) boss.notifyWorker(worker.id);
  }
}

/**
 * `create` run once per pg-boss instance, for the queues an area sends to:
 * every caller waits on the same first run, and a failed run is tried again
 * by the next caller.
 */
export function oncePerBoss<Args extends unknown[]>(create: (boss: Boss, ...args: Args) => Promise<void>): (boss: Boss, ...args: Args) => Promise<void> {
  const runs = new WeakMap<Boss, Promise<void>>();
  return (boss, ...args) => {
    let run = runs.get(boss);
    if (!run) {
      run = create(boss, ...args);
      run.catch(() => runs.delete(boss));
      runs.set(boss, run);
    }
    return run;
  };
}

/**
 * Starts pg-boss in the application database (schema `pgboss`). The API
 * process uses it only to send (supervise and schedule off); the worker
 * process runs maintenance and schedules too.
 */
export async function startBoss(connectionString: string, options: Partial<ConstructorOptions> & { onError?: (error: Error) => void } = {}): Promise<Boss> {
  const { onError, ...rest } = options;
  const boss = new PgBoss({ connectionString, max: 5, ...rest });
  // pg-boss emits 'error' for background failures; an unhandled 'error' event would crash the process.
  boss.on('error', onError ?? (() => {}));
  await boss.start();
  return boss;
}
