/**
 * Builds the web app (web/ → web/dist, served by express at /). `npm start`
 * runs it before starting and it builds only when web/dist is missing;
 * `--force` rebuilds (`npm run build:web`).
 */
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'vite';

const web = path.resolve(import.meta.dirname, '..', 'web');

/** Builds web/dist unless it is there already (or `force`); answers whether it built. */
export async function buildWebApp(options: { force?: boolean } = {}): Promise<boolean> {
  if (!options.force && fs.existsSync(path.join(web, 'dist', 'index.html'))) return false;
  await build({ configFile: path.join(web, 'vite.config.ts'), root: web });
  return true;
}

if (import.meta.main) {
  const built = await buildWebApp({ force: process.argv.includes('--force') });
  process.stderr.write(built ? 'web app built in web/dist\n' : 'web app already built (web/dist); npm run build:web rebuilds it\n');
}
