import type { Config } from './config.ts';
import type { Database } from './db/database.ts';
import type { Log } from './log.ts';
import type { Metrics } from './metrics.ts';
import type { Boss } from './queue/boss.ts';

/** Time is a dependency so tests can move it (token expiry, hold windows). */
export type Clock = { now: () => Date };
export const systemClock: Clock = { now: () => new Date() };

/**
 * What every domain function may receive first. Entry files (server/main.ts,
 * jobs/main.ts, tests) build it once; nothing below them creates singletons.
 */
export type Deps = {
  config: Config;
  db: Database;
  boss: Boss;
  log: Log;
  clock: Clock;
  databaseUrl: string;
  metrics: Metrics;
};
