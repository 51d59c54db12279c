import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `npm run bench`: runs every bench/*.bench.ts in turn; each prints one JSON
 * line per figure ({ bench, figure, value, unit, ...context }). Pass names to
 * run only some: `npm run bench -- credits email`.
 */
const dir = path.dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = (await fs.readdir(dir)).filter((name) => name.endsWith('.bench.ts')).sort();
for (const file of files) {
  const name = file.replace(/\.bench\.ts$/, '');
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  const module = (await import(path.join(dir, file))) as { run: () => Promise<void> };
  await module.run();
}
