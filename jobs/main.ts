import { loadConfig } from '../server/config.ts';
import { createLog } from '../server/log.ts';
import { fatalAlertsFor } from '../server/out-of-band/fatal-alert-transport.ts';
import { onShutdown, openRuntime } from '../server/runtime.ts';
import { parseQueuesOption, registerWorkers } from './registry.ts';

/**
 * The worker process alone (separate-process deployment): needs DATABASE_URL.
 * `--queues benchmark` (or `--queues a,b`) works only those areas' queues, so
 * a scale-out worker pool runs one kind of work; without it, every area.
 */
const config = loadConfig();
const log = createLog({ level: config.logLevel, name: 'folio-workers', onFatal: fatalAlertsFor(config) });
if (!config.database.url) {
  log.fatal('jobs/main.ts runs against an existing database: set DATABASE_URL (npm start runs API and workers together on embedded PostgreSQL)');
  process.exit(1);
}
let areas: ReturnType<typeof parseQueuesOption>;
try {
  areas = parseQueuesOption(process.argv.slice(2));
} catch (error) {
  log.fatal((error as Error).message);
  process.exit(1);
}
const runtime = await openRuntime(config, log, { workers: true });
await registerWorkers(runtime.deps, areas);
log.info({ areas }, 'workers started');
onShutdown(log, runtime.close);
