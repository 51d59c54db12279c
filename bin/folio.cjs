#!/usr/bin/env node
// The `folio` command. A global install or `npx folio` runs this with whatever
// `node` is first on PATH, which may be the machine's Node 20; Folio's code is
// TypeScript that only Node 24 runs, so an older Node hands over to the Node 24
// that came with Folio's own dependencies (the `node` package).
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const entry = path.join(__dirname, 'folio.ts');
const args = process.argv.slice(2);
if (Number(process.versions.node.split('.')[0]) >= 24) {
  // before the entry's imports are compiled: later runs load them from V8's cached code
  require('node:module').enableCompileCache?.();
  import(require('node:url').pathToFileURL(entry).href);
} else {
  let node24;
  try {
    node24 = require.resolve('node/bin/node', { paths: [path.join(__dirname, '..')] });
  } catch {
    console.error(
      `folio needs Node 24; this is Node ${process.versions.node} and Folio's own Node 24 is not installed (run npm install in ${path.join(__dirname, '..')}).`,
    );
    process.exit(1);
  }
  const run = spawnSync(node24, [__filename, ...args], { stdio: 'inherit' });
  if (run.error) {
    console.error(`folio: could not start ${node24}: ${run.error.message}`);
    process.exit(1);
  }
  if (run.signal) process.kill(process.pid, run.signal);
  process.exit(run.status ?? 1);
}
