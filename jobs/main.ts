import { loadConfig } from '../server/config.ts';
import { createLog } from '../server/log.ts';
import { fatalAlertsFor } from '../server/out-of-band/fatal-alert-transport.ts';
import { onShutdown, openRuntime } from '../server/runtime.ts';
import { registerWorkers } from './registry.ts';

/** The worker process alone (separate-process deployment): needs DATABASE_URL. */
const config = loadConfig();
const log = createLog({ level: config.logLevel, name: 'folio-workers', onFatal: fatalAlertsFor(config) });
if (!config.database.url) {
  log.fatal('jobs/main.ts runs against an existing database: set DATABASE_URL (npm start runs API and workers together on embedded PostgreSQL)');
  process.exit(1);
}
const runtime = await openRuntime(config, log, { workers: true });
await registerWorkers(runtime.deps);
log.info('workers started');
onShutdown(log, runtime.close);
