/**
 * Builds the web app (web/ → web/dist, served by express at /). `npm start`
 * and the browser tests run it; it builds only when web/dist is missing or
 * older than a source of the app (web/, client-sdk/); `--force` rebuilds
 * (`npm run build:web`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'vite';

const web = path.resolve(import.meta.dirname, '..', 'web');
const SOURCES = [path.join(web, 'index.html'), path.join(web, 'vite.config.ts'), path.join(web, 'src'), path.resolve(web, '..', 'client-sdk')];

function newestSource(entry: string): number {
  const stat = fs.statSync(entry, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  return fs
    .readdirSync(entry)
    .filter((name) => name !== 'dist' && name !== 'node_modules')
    .reduce((newest, name) => Math.max(newest, newestSource(path.join(entry, name))), 0);
}

/** Builds web/dist when it is missing, older than a source, or `force`; answers whether it built. */
export async function buildWebApp(options: { force?: boolean } = {}): Promise<boolean> {
  const built = fs.statSync(path.join(web, 'dist', 'index.html'), { throwIfNoEntry: false });
  if (!options.force && built && built.mtimeMs >= Math.max(...SOURCES.map(newestSource))) return false;
  await build({ configFile: path.join(web, 'vite.config.ts'), root: web });
  return true;
}

if (import.meta.main) {
  const built = await buildWebApp({ force: process.argv.includes('--force') });
  process.stderr.write(built ? 'web app built in web/dist\n' : 'web app up to date in web/dist\n');
}
