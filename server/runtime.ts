import type { Config } from './config.ts';
import { createDatabase } from './db/database.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase } from './db/embedded.ts';
import { migrate } from './db/migrate.ts';
import { systemClock, type CoreDeps, type Deps } from './deps.ts';
import type { Log } from './log.ts';
import { createMetrics } from './metrics.ts';
import { startBoss } from './queue/boss.ts';
import { withProcessServices } from './services.ts';

export type Runtime = { deps: Deps; embedded?: EmbeddedDatabase; close: () => Promise<void> };

/**
 * Opens what both processes need: the database (embedded when DATABASE_URL is
 * unset), migrations, the slonik pool, pg-boss, and the process-wide services
 * (email library, object store, conversion engine) the app and the workers
 * share. `close` undoes it in reverse, stopping embedded PostgreSQL last so no
 * postgres process outlives us.
 */
export async function openRuntime(config: Config, log: Log, options: { workers: boolean }): Promise<Runtime> {
  let embedded: EmbeddedDatabase | undefined;
  let databaseUrl = config.database.url;
  if (!databaseUrl) {
    log.info({ dataDir: config.database.embeddedDir }, 'DATABASE_URL is unset: starting embedded PostgreSQL');
    embedded = await startEmbeddedPostgres({
      dataDir: config.database.embeddedDir,
      ownedRoot: config.dataDir,
      onLog: (line) => log.trace({ postgres: line }),
      onWarn: (line) => log.warn(line),
    });
    databaseUrl = embedded.url;
  }
  try {
    const { applied } = await migrate(databaseUrl, { log: (message) => log.info(message) });
    if (applied.length === 0) log.debug('database schema is current');
    const db = await createDatabase(databaseUrl, { maximumPoolSize: config.database.poolSize });
    const boss = await startBoss(databaseUrl, {
      // Only worker processes supervise queues and fire schedules.
      supervise: options.workers,
      schedule: options.workers,
      // how soon a job whose worker died (SIGKILL, a lost spot instance) is seen as expired and retried
      superviseIntervalSeconds: config.queueSuperviseSeconds,
      monitorIntervalSeconds: config.queueSuperviseSeconds,
      onError: (error) => log.error({ error: error.message }, 'pg-boss error'),
    });
    // The embedded database is a configured database: the email library logs and checks suppressions there too.
    const effectiveConfig = embedded ? { ...config, email: { ...config.email, loggingEnabled: true } } : config;
    const core: CoreDeps = { config: effectiveConfig, db, boss, log, clock: systemClock, databaseUrl, metrics: createMetrics() };
    const services = withProcessServices(core);
    return {
      deps: services.deps,
      embedded,
      close: async () => {
        await boss.stop({ graceful: true, timeout: config.shutdownGraceMs, close: true }).catch((error) => log.error({ err: error }, 'pg-boss stop failed'));
        await services.close().catch((error) => log.error({ err: error }, 'conversion engine stop failed'));
        await db.end().catch(() => {});
        await embedded?.stop().catch((error) => log.error({ err: error }, 'embedded PostgreSQL stop failed'));
      },
    };
  } catch (error) {
    await embedded?.stop().catch(() => {});
    throw error;
  }
}

/** Runs `stop` once on SIGINT/SIGTERM; a second signal exits at once. */
export function onShutdown(log: Log, stop: () => Promise<void>) {
  let stopping = false;
  const handler = (signal: NodeJS.Signals) => {
    if (stopping) {
      log.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    log.info({ signal }, 'shutting down');
    stop().then(
      () => process.exit(0),
      (error) => {
        log.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
}
