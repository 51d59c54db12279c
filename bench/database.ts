import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDatabase, type Database } from '../server/db/database.ts';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../server/db/embedded.ts';
import { migrate } from '../server/db/migrate.ts';

export type BenchDatabase = { url: string; db: Database; close: () => Promise<void> };

let server: { adminUrl: string; embedded?: EmbeddedDatabase; tempDir?: string; users: number } | undefined;

/**
 * A fresh migrated database for one benchmark: on BENCH_DATABASE_URL (or
 * TEST_DATABASE_URL) when set, else on an embedded PostgreSQL shared by the
 * benchmarks of this run and stopped when the last one closes.
 */
export async function openBenchDatabase(options: { poolSize?: number } = {}): Promise<BenchDatabase> {
  if (!server) {
    const given = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
    if (given) server = { adminUrl: given, users: 0 };
    else {
      const tempDir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-bench-pg-'));
      await fs.chmod(tempDir, 0o755);
      const embedded = await startEmbeddedPostgres({ dataDir: path.join(tempDir, 'data'), database: 'postgres' });
      server = { adminUrl: embedded.url, embedded, tempDir, users: 0 };
    }
  }
  const current = server;
  current.users++;
  const name = `folio_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: current.adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const parsed = new URL(current.adminUrl);
  parsed.pathname = `/${name}`;
  const url = parsed.toString();
  await migrate(url);
  const db = await createDatabase(url, { maximumPoolSize: options.poolSize ?? 20 });
  return {
    url,
    db,
    close: async () => {
      await db.end();
      const dropper = new pg.Client({ connectionString: current.adminUrl });
      await dropper.connect();
      await dropper.query(`drop database if exists ${name} with (force)`);
      await dropper.end();
      current.users--;
      if (current.users === 0 && current.embedded) {
        await current.embedded.stop();
        if (current.tempDir) await fs.rm(current.tempDir, { recursive: true, force: true });
        server = undefined;
      }
    },
  };
}
