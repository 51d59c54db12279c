import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { listMigrations, migrate, MIGRATIONS_DIR } from '../../server/db/migrate.ts';
import { createTestDatabase } from '../helpers/database.ts';

describe('migration runner', () => {
  it('applies each migration once when two processes migrate at the same time', async () => {
    const { url } = await createTestDatabase();
    // A scratch folder so the count does not depend on what sql/ holds today.
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-migrations-'));
    await fs.writeFile(path.join(dir, '001_counter.sql'), 'create table counter (n integer); insert into counter values (1);');
    await fs.writeFile(path.join(dir, '002_bump.sql'), 'update counter set n = n + 1; select pg_sleep(0.2);');
    const results = await Promise.all([migrate(url, { dir }), migrate(url, { dir }), migrate(url, { dir })]);
    expect(results.map((r) => r.applied.length).sort()).toEqual([0, 0, 2]);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query('select n from counter');
    await client.end();
    expect(rows).toEqual([{ n: 2 }]);
    await fs.rm(dir, { recursive: true });
  });

  it('rolls a failing migration back whole and reports its name', async () => {
    const { url } = await createTestDatabase();
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-migrations-'));
    await fs.writeFile(path.join(dir, '001_half.sql'), 'create table half (n integer); select no_such_function();');
    await expect(migrate(url, { dir })).rejects.toThrow(/001_half\.sql/);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query(`select to_regclass('half') as t`);
    await client.end();
    expect(rows).toEqual([{ t: null }]);
    await fs.rm(dir, { recursive: true });
  });

  it('finds the template database already at the latest migration', async () => {
    const { url } = await createTestDatabase();
    expect((await migrate(url)).applied).toEqual([]);
    expect((await listMigrations(MIGRATIONS_DIR)).length).toBeGreaterThan(0);
  });
});
