import { PgBoss, type ConstructorOptions } from 'pg-boss';

export type Boss = PgBoss;

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
