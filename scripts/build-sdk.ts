/**
 * Builds client-sdk/dist for `npm pack` in client-sdk/: one ES module
 * (@trpc/client stays a dependency) and type declarations. The router's
 * type is declared by the server, so its declaration file ships too; what it
 * names of the server's context (AppContext, OpenApiMeta: server-side only,
 * no client sees them) is cut to `object`, and the build fails if any other
 * server module or package would be needed by the published types.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'vite';

const root = path.resolve(import.meta.dirname, '..');
const sdk = path.join(root, 'client-sdk');
const dist = path.join(sdk, 'dist');
const declarations = path.join(root, '.folio', 'sdk-declarations');
/** Packages the published types may name: the SDK's own dependencies. */
const ALLOWED_PACKAGES = new Set(['@trpc/client', '@trpc/server']);
/** Server-only types in the router's declaration that a client never uses. */
const CUT = [/import\("[./]+\/trpc\/context\.ts"\)\.AppContext/g, /import\("trpc-to-openapi"\)\.OpenApiMeta/g];

fs.rmSync(dist, { recursive: true, force: true });
fs.rmSync(declarations, { recursive: true, force: true });

await build({
  configFile: false,
  logLevel: 'warn',
  build: {
    lib: { entry: path.join(sdk, 'index.ts'), formats: ['es'], fileName: () => 'index.js' },
    outDir: dist,
    emptyOutDir: false,
    minify: false,
    target: 'es2022',
    rollupOptions: { external: [/^@trpc\//] },
  },
});

execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', path.join(sdk, 'tsconfig.build.json')], {
  stdio: 'inherit',
});

const IMPORT = /(from\s+|import\()(['"])([^'"]+)\2/g;
const pending = ['client-sdk/index.d.ts'];
const copied = new Set<string>();
while (pending.length > 0) {
  const relative = pending.pop()!;
  if (copied.has(relative)) continue;
  copied.add(relative);
  let text = fs.readFileSync(path.join(declarations, relative), 'utf8');
  for (const pattern of CUT) text = text.replace(pattern, 'object');
  text = text.replace(IMPORT, (_whole, head: string, quote: string, specifier: string) => {
    if (specifier.startsWith('.')) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(relative), specifier.replace(/\.ts$/, '.d.ts')));
      pending.push(target);
      return `${head}${quote}${specifier.replace(/\.ts$/, '.js')}${quote}`;
    }
    const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0]!;
    if (!ALLOWED_PACKAGES.has(name)) throw new Error(`${relative} needs ${specifier}: the published types may only name ${[...ALLOWED_PACKAGES].join(', ')}`);
    return `${head}${quote}${specifier}${quote}`;
  });
  const out = path.join(dist, 'types', relative);
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, text);
}
process.stderr.write(`client-sdk/dist: index.js and ${copied.size} declaration files\n`);
