import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { buildApp } from '../../server/app.ts';
import { signSessionToken } from '../../server/auth/tokens.ts';
import { loadConfig, type Config } from '../../server/config.ts';
import type { Clock, CoreDeps } from '../../server/deps.ts';
import type { EngineProvider } from '../../server/conversion-jobs/engine-provider.ts';
import { silentLog, createLog, type Log } from '../../server/log.ts';
import { createMetrics } from '../../server/metrics.ts';
import { startBoss, type Boss } from '../../server/queue/boss.ts';
import { withProcessServices } from '../../server/services.ts';
import type { AppDeps } from '../../server/trpc/context.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

export const TEST_JWT_SECRET = 'test-jwt-secret-with-enough-length-1234';
export const TEST_PROXY_SECRET = 'test-proxy-secret';

/** A clock tests can move; starts at the real time. */
export function createTestClock(start = new Date()): Clock & { set: (date: Date) => void; advance: (ms: number) => void } {
  let now = start.getTime();
  return { now: () => new Date(now), set: (date) => (now = date.getTime()), advance: (ms) => (now += ms) };
}

export type TestApp = {
  baseUrl: string;
  server: Server;
  deps: AppDeps;
  database: TestDatabase;
  boss: Boss;
  config: Config;
  /** A Bearer token for the user with this email (created on first use). */
  token: (email: string, options?: { expiresIn?: string | number }) => Promise<string>;
};

/**
 * The real app on a random port, over a fresh database of its own, with
 * pg-boss started in it. `env` is the environment the app would see (no
 * process.env leaks in); tests point provider URLs at their fakes through it.
 */
export async function startTestApp(
  options: {
    env?: Record<string, string | undefined>;
    clock?: Clock;
    database?: TestDatabase;
    workers?: boolean;
    /** The app's log (default: silent, or TEST_LOG's level on stdout). */
    log?: Log;
    /** Replaces the process's engine (a gated one), built from the app's config and log. */
    engine?: (core: CoreDeps) => EngineProvider;
  } = {},
): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase());
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-test-data-'));
  const config = loadConfig({
    NODE_ENV: 'test',
    FOLIO_DATA_DIR: dataDir,
    DATABASE_URL: database.url,
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
    PROXY_SHARED_SECRET: TEST_PROXY_SECRET,
    DOWNLOAD_TOKEN_SECRET: 'test-download-secret',
    WEBHOOK_SECRET_KEY: 'test-webhook-key',
    ...options.env,
  });
  const boss = await startBoss(database.url, { supervise: options.workers ?? false, schedule: false, migrate: false });
  const log = options.log ?? (process.env.TEST_LOG ? createLog({ level: process.env.TEST_LOG }) : silentLog);
  const core: CoreDeps = {
    config,
    db: database.db,
    boss,
    log,
    clock: options.clock ?? { now: () => new Date() },
    databaseUrl: database.url,
    metrics: createMetrics(),
  };
  const services = withProcessServices(core, { engine: options.engine?.(core) });
  const built = buildApp(services.deps);
  const server = await new Promise<Server>((resolve) => {
    const listening = built.app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const { port } = server.address() as AddressInfo;
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await boss.stop({ graceful: false, close: true }).catch(() => {});
    await services.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  });
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    server,
    deps: built.deps,
    database,
    boss,
    config,
    token: (email, tokenOptions) =>
      signSessionToken(TEST_JWT_SECRET, { subject: `test:${email}`, email }, { expiresIn: tokenOptions?.expiresIn, now: core.clock.now() }),
  };
}
