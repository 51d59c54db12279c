import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually, until } from '../helpers/wait.ts';

const root = path.resolve(import.meta.dirname, '..', '..');

function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

type Started = { child: ChildProcess; output: () => string; exited: Promise<number | null> };

function startFolio(dataDir: string): Started {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, FOLIO_DATA_DIR: dataDir, PORT: '0', INTAKE_SMTP_PORT: '0', LOG_LEVEL: 'warn' };
  const child = spawn(process.execPath, ['server/main.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function healthyBase(started: Started) {
  const base = await eventually(() => /Folio is running at (http:\/\/\S+)/.exec(started.output())?.[1], 60_000, 'the start banner').catch((error: Error) => {
    throw new Error(`${error.message}; output so far:\n${started.output()}`);
  });
  const health = await fetch(`${base}/health`);
  // npm start runs the convert-by-email SMTP listener too (on a free port here; 2525 by default).
  expect(await health.json()).toMatchObject({ status: 'ok', database: 'ok', queue: 'ok', intake: { smtp: 'listening', mailApi: 'unconfigured' } });
  expect(started.output()).toMatch(/Convert by email: SMTP on port \d+ for \*@intake\.folio\.localhost/);
  return base;
}

async function postmasterPid(dataDir: string) {
  return Number((await fs.readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

describe('npm start with no configuration', () => {
  // mkdtemp makes the folder 0700: as root (CI), PostgreSQL's own user must still reach it.
  it('starts embedded PostgreSQL in a private folder, serves, and leaves no postgres behind after SIGTERM', { timeout: 90_000 }, async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-start-'));
    const folio = startFolio(dataDir);
    try {
      const base = await healthyBase(folio);
      expect(folio.output()).toContain(`${base}/docs`);
      const pid = await postmasterPid(dataDir);
      expect(alive(pid)).toBe(true);
      folio.child.kill('SIGTERM');
      expect(await folio.exited).toBe(0);
      await until(
        () => alive(pid),
        (running) => !running,
        10_000,
        'postgres to stop',
      );
      // Data survives: the folder is still an initialised cluster for the next start.
      await expect(fs.stat(path.join(dataDir, 'pg', 'PG_VERSION'))).resolves.toBeDefined();
    } finally {
      if (folio.child.exitCode === null) folio.child.kill('SIGKILL');
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses a second Folio on a live one's folder, and after a SIGKILL takes the orphaned PostgreSQL back", { timeout: 120_000 }, async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-restart-'));
    const first = startFolio(dataDir);
    let third: Started | undefined;
    try {
      await healthyBase(first);
      const orphan = await postmasterPid(dataDir);

      const second = startFolio(dataDir);
      expect(await second.exited).toBe(1);
      expect(second.output()).toContain(`Another Folio (pid ${first.child.pid}) is using ${path.join(dataDir, 'pg')}`);
      expect(alive(orphan)).toBe(true);

      first.child.kill('SIGKILL');
      await first.exited;
      expect(alive(orphan)).toBe(true);

      third = startFolio(dataDir);
      await healthyBase(third);
      expect(alive(orphan)).toBe(false);
      const fresh = await postmasterPid(dataDir);
      third.child.kill('SIGTERM');
      expect(await third.exited).toBe(0);
      await until(
        () => alive(fresh),
        (running) => !running,
        10_000,
        'postgres to stop',
      );
    } finally {
      for (const started of [first, third]) if (started && started.child.exitCode === null) started.child.kill('SIGKILL');
      const left = await postmasterPid(dataDir).catch(() => 0);
      if (left && alive(left)) process.kill(left, 'SIGINT');
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });

  it('the worker process alone refuses to start without DATABASE_URL', async () => {
    const child = spawn(process.execPath, ['jobs/main.ts'], { cwd: root, env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(output).toContain('DATABASE_URL');
  });

  it('a bad variable stops the start with its name', async () => {
    const child = spawn(process.execPath, ['server/main.ts'], {
      cwd: root,
      env: { PATH: process.env.PATH, PORT: 'eighty' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stderr.on('data', (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(output).toMatch(/PORT/);
  });
});
