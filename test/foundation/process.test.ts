import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..', '..');

function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('npm start with no configuration', () => {
  it('starts embedded PostgreSQL, serves, and leaves no postgres behind after SIGTERM', { timeout: 90_000 }, async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-start-'));
    await fs.chmod(dataDir, 0o755);
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, FOLIO_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn' };
    const child = spawn(process.execPath, ['server/main.ts'], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const base = await waitFor(() => /Folio is running at (http:\/\/\S+)/.exec(output)?.[1], 60_000, `the start banner; output so far:\n${output}`);
      expect(output).toContain(`${base}/docs`);
      const health = await fetch(`${base}/health`);
      expect(await health.json()).toEqual({ status: 'ok', database: 'ok', queue: 'ok' });
      const pid = Number((await fs.readFile(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8')).split('\n')[0]);
      expect(alive(pid)).toBe(true);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      await waitFor(() => (alive(pid) ? undefined : true), 10_000, 'postgres to stop');
      // Data survives: the folder is still an initialised cluster for the next start.
      await expect(fs.stat(path.join(dataDir, 'pg', 'PG_VERSION'))).resolves.toBeDefined();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
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
    const child = spawn(process.execPath, ['server/main.ts'], { cwd: root, env: { PATH: process.env.PATH, PORT: 'eighty' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stderr.on('data', (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(1);
    expect(output).toMatch(/PORT/);
  });
});
