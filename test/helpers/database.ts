import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, inject } from 'vitest';
import { createDatabase, type Database } from '../../server/db/database.ts';

export type TestDatabase = { url: string; db: Database; name: string };

function withDatabase(url: string, database: string) {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function admin<T>(templateUrl: string, run: (client: pg.Client) => Promise<T>) {
  const client = new pg.Client({ connectionString: withDatabase(templateUrl, 'postgres') });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/**
 * A fresh, migrated database for one test file, cloned from the template the
 * global setup prepared. Dropped after the file's tests unless KEEP_TEST_DB is
 * set (handy to inspect a failure).
 */
export async function createTestDatabase(options: { poolSize?: number } = {}): Promise<TestDatabase> {
  const templateUrl = inject('templateDatabaseUrl');
  const template = new URL(templateUrl).pathname.slice(1);
  const name = `folio_test_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  // CREATE DATABASE ... TEMPLATE fails while anything is connected to the
  // template; files start at once, so retry briefly.
  for (let attempt = 0; ; attempt++) {
    try {
      await admin(templateUrl, (client) => client.query(`create database ${name} template ${template}`));
      break;
    } catch (error) {
      if (attempt >= 50 || !/being accessed by other users/.test(String(error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 200));
    }
  }
  const url = withDatabase(templateUrl, name);
  const db = await createDatabase(url, { maximumPoolSize: options.poolSize ?? 10 });
  afterAll(async () => {
    await db.end();
    if (!process.env.KEEP_TEST_DB) {
      await admin(templateUrl, (client) => client.query(`drop database if exists ${name} with (force)`));
    }
  });
  return { url, db, name };
}
