import type { Config } from './config.ts';
import type { EngineProvider } from './conversion-jobs/engine-provider.ts';
import type { Database } from './db/database.ts';
import type { EmailService } from './email/email-service.ts';
import type { IntakeMailer } from './intake/send-intake-mail.ts';
import type { Log } from './log.ts';
import type { Metrics } from './metrics.ts';
import type { OutOfBandSender } from './out-of-band/out-of-band-sender.ts';
import type { Boss } from './queue/boss.ts';
import type { ImportRuntime } from './storage/import-runtime.ts';
import type { ObjectStore } from './storage/storage.ts';
import type { WebhookRuntime } from './webhooks/webhook-runtime.ts';

/** Time is a dependency so tests can move it (token expiry, hold windows). */
export type Clock = { now: () => Date };
export const systemClock: Clock = { now: () => new Date() };

/** What the process opens first: configuration, the database, the queue. */
export type CoreDeps = {
  config: Config;
  db: Database;
  boss: Boss;
  log: Log;
  clock: Clock;
  databaseUrl: string;
  metrics: Metrics;
};

/**
 * The services one process holds once, whichever of API and workers it runs
 * (server/services.ts builds them): the email library with its provider
 * clients and batchers, the object store, the conversion engine with its
 * worker-thread pool, the intake's mail-provider API client with its cached
 * access token, and the webhooks' guarded HTTPS client and keys.
 */
export type ProcessServices = {
  email: EmailService;
  store: ObjectStore;
  engine: EngineProvider;
  mailer: IntakeMailer;
  webhooks: WebhookRuntime;
  /** Import by URL and from customer buckets: the guarded client, the connection-secret key. */
  importer: ImportRuntime;
  /** Provider A called directly, no database: budget alerts, cost monitors (server/out-of-band). */
  outOfBand: OutOfBandSender;
};

/**
 * What every domain function may receive first (each takes the Pick it
 * needs). Entry files (server/main.ts, jobs/main.ts, tests) build it once
 * through server/runtime.ts; nothing below them creates singletons.
 */
export type Deps = CoreDeps & ProcessServices;
