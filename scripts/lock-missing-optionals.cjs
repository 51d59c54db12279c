// The registry these machines reach lacks some platform builds of native
// packages (e.g. @napi-rs/canvas-darwin-arm64@1.1.1). `npm install` then
// leaves their optional entries out of package-lock.json, and `npm ci` refuses
// the lock as "out of sync". This adds a stub entry (version, os, cpu,
// optional) for each missing optional platform package: npm ci skips them on
// this platform as it would any foreign-platform optional. Run after every
// `npm install`: `node scripts/lock-missing-optionals.cjs`.
const fs = require('node:fs');
const path = require('node:path');

const lockPath = path.join(__dirname, '..', 'package-lock.json');
const lock = JSON.parse(fs.readFileSync(lockPath, 'utf8'));
const packages = lock.packages;
const PLATFORM =
  /-(android|darwin|freebsd|linux|win32|openharmony)-(arm64|x64|arm|ia32|riscv64|s390x|ppc64|loong64)(?:-(gnu|musl|msvc|gnueabihf|musleabihf|eabi))?$/;
let added = 0;
for (const [key, entry] of Object.entries(packages)) {
  for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
    const match = PLATFORM.exec(name);
    if (!match) continue;
    const base = key === '' ? '' : `${key}/`;
    const nested = `${base}node_modules/${name}`;
    const hoisted = `node_modules/${name}`;
    if (packages[nested] || packages[hoisted]) continue;
    const [, os, cpu, libc] = match;
    packages[hoisted] = {
      version,
      cpu: [cpu],
      os: [os],
      ...(libc?.startsWith('gnu') ? { libc: ['glibc'] } : libc?.startsWith('musl') ? { libc: ['musl'] } : {}),
      optional: true,
    };
    added++;
  }
}
const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
lock.packages = sorted;
fs.writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`lock-missing-optionals: added ${added} stub entr${added === 1 ? 'y' : 'ies'}`);
