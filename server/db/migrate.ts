import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

export const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'sql');

// Any constant works; it only has to be the same in every process that migrates.
const MIGRATION_LOCK_KEY = 4_206_217_001;
const MIGRATION_FILE = /^(\d{3,})_[\w-]+\.sql$/;

export type MigrationResult = { applied: string[] };

export async function listMigrations(dir = MIGRATIONS_DIR) {
  const names = (await fs.readdir(dir)).filter((name) => MIGRATION_FILE.test(name)).sort();
  const seen = new Map<string, string>();
  for (const name of names) {
    const number = MIGRATION_FILE.exec(name)![1]!;
    const clash = seen.get(number);
    if (clash) throw new Error(`Two migrations share number ${number}: ${clash} and ${name}`);
    seen.set(number, name);
  }
  return names;
}

/**
 * Applies each numbered file in sql/ once, in order, each in its own
 * transaction, recording it in folio_migrations. A session advisory lock makes
 * concurrent starts queue up: the second one finds everything applied.
 */
export async function migrate(databaseUrl: string, options: { dir?: string; log?: (message: string) => void } = {}): Promise<MigrationResult> {
  const dir = options.dir ?? MIGRATIONS_DIR;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const applied: string[] = [];
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    await client.query(`create table if not exists folio_migrations (
      name text primary key,
      applied_at timestamptz not null default now()
    )`);
    const done = new Set((await client.query<{ name: string }>('select name from folio_migrations')).rows.map((row) => row.name));
    for (const name of await listMigrations(dir)) {
      if (done.has(name)) continue;
      const text = await fs.readFile(path.join(dir, name), 'utf8');
      await client.query('begin');
      try {
        await client.query(text);
        await client.query('insert into folio_migrations (name) values ($1)', [name]);
        await client.query('commit');
      } catch (error) {
        await client.query('rollback');
        throw new Error(`Migration ${name} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(name);
      options.log?.(`applied migration ${name}`);
    }
  } finally {
    await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {});
    await client.end();
  }
  return { applied };
}
