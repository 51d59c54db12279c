import type { Server } from 'node:http';
import { registerWorkers } from '../jobs/registry.ts';
import { buildApp } from './app.ts';
import { ConfigError, loadConfig } from './config.ts';
import { EmbeddedStartError } from './db/embedded.ts';
import { startSmtpListener } from './intake/smtp-listener.ts';
import { createLog } from './log.ts';
import { fatalAlertsFor } from './out-of-band/fatal-alert-transport.ts';
import { onShutdown, openRuntime } from './runtime.ts';

/**
 * `npm start`: API server plus workers in one process, on embedded PostgreSQL
 * unless DATABASE_URL is set. `--no-workers` (or FOLIO_WORKERS=false) runs the
 * API alone.
 */
let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
const log = createLog({ level: config.logLevel, onFatal: fatalAlertsFor(config) });
const withWorkers = config.runWorkers && !process.argv.includes('--no-workers');
const withIntake = config.intake.enabled && !process.argv.includes('--no-intake');

const runtime = await openRuntime(config, log, { workers: withWorkers }).catch((error: unknown) => {
  if (!(error instanceof EmbeddedStartError)) throw error;
  console.error(error.message);
  process.exit(1);
});
if (withWorkers) await registerWorkers(runtime.deps);

// The convert-by-email SMTP listener (INTAKE_SMTP_PORT, 2525 by default: no root needed). It only stores and
// queues; the intake workers (here, or in any worker process) do the rest.
const intakeListener = withIntake
  ? await startSmtpListener(runtime.deps).catch(async (error: unknown) => {
      console.error(`The SMTP listener could not start on port ${config.intake.smtpPort}: ${(error as Error).message} (set INTAKE_SMTP_PORT, or --no-intake)`);
      await runtime.close();
      process.exit(1);
    })
  : undefined;
const { app } = buildApp(runtime.deps, { intakeListener });

const server: Server = await new Promise((resolve, reject) => {
  const listening = app.listen(config.port, config.host ?? '0.0.0.0', () => resolve(listening));
  listening.once('error', reject);
});
const address = server.address();
const port = typeof address === 'object' && address ? address.port : config.port;
const base = config.publicBaseUrl ?? `http://localhost:${port}`;
const smtpPort = intakeListener?.port;
log.info({ port, workers: withWorkers, smtpPort, embeddedDatabase: Boolean(runtime.embedded) }, 'Folio is running');
const intakeLine = smtpPort ? `\nConvert by email: SMTP on port ${smtpPort} for *@${config.intake.domain}` : '';
console.log(`\nFolio is running at ${base}\nAPI docs: ${base}/docs${intakeLine}\nGet a token: npm run token -- --email you@example.com\n`);

onShutdown(log, async () => {
  // Stop taking mail and requests first; in-flight ones and jobs get the grace period.
  await intakeListener?.close();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    setTimeout(() => {
      server.closeAllConnections();
      resolve();
    }, config.shutdownGraceMs).unref();
  });
  await runtime.close();
});
