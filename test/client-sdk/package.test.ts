import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SDK = path.join(ROOT, 'client-sdk');

const CONSUMER = `import { createFolioClient, FolioError, toFolioError, type ConversionEvent } from '@folio/client-sdk';

const folio = createFolioClient({ baseUrl: process.env.FOLIO_URL!, token: process.env.FOLIO_TOKEN });
const me = await folio.account.me.query();
const left: number = me.balance.freePagesLeft;
// @ts-expect-error the router's types reach the consumer: a procedure that does not exist fails the type check
folio.account.doesNotExist;
const done = (event: ConversionEvent) => (event.type === 'completed' ? event.downloadUrl : undefined);
const missing = await folio.conversion.downloadLink.query({ fileId: '00000000-0000-4000-8000-000000000000' }).catch(toFolioError);
console.log(JSON.stringify({ email: me.email, left, code: missing instanceof FolioError ? missing.code : null, done: typeof done }));
`;

let app: TestApp;
let scratch: string;

beforeAll(async () => {
  app = await startTestApp();
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'folio-sdk-consumer-'));
}, 60_000);
afterAll(() => fs.rm(scratch, { recursive: true, force: true }));

describe('client-sdk as a package', () => {
  it('npm pack gives a tarball an outside project installs, type-checks against and calls', async () => {
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: SDK, encoding: 'utf8' })) as Array<{
      filename: string;
      files: Array<{ path: string }>;
    }>;
    const files = packed[0]!.files.map((file) => file.path);
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/types/client-sdk/index.d.ts');
    expect(files.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);

    // Install as npm would from the tarball: the package under node_modules, its dependencies beside it.
    const installed = path.join(scratch, 'node_modules', '@folio', 'client-sdk');
    await fs.mkdir(installed, { recursive: true });
    execFileSync('tar', ['-xzf', path.join(scratch, packed[0]!.filename), '-C', installed, '--strip-components=1']);
    const manifest = JSON.parse(await fs.readFile(path.join(installed, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    for (const dependency of Object.keys(manifest.dependencies)) {
      await fs.mkdir(path.dirname(path.join(scratch, 'node_modules', dependency)), { recursive: true });
      await fs.symlink(path.join(ROOT, 'node_modules', dependency), path.join(scratch, 'node_modules', dependency));
    }
    const bundle = await fs.readFile(path.join(installed, 'dist', 'index.js'), 'utf8');
    expect(bundle).not.toMatch(/from ["'][./]*server\//);

    await fs.writeFile(path.join(scratch, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    await fs.writeFile(path.join(scratch, 'main.ts'), CONSUMER);
    await fs.writeFile(
      path.join(scratch, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          lib: ['es2022', 'dom'],
          types: [],
          strict: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          skipLibCheck: true,
        },
        files: ['main.ts', 'process.d.ts'],
      }),
    );
    await fs.writeFile(path.join(scratch, 'process.d.ts'), 'declare const process: { env: Record<string, string | undefined> };\n');
    execFileSync(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', scratch], { cwd: scratch, encoding: 'utf8' });

    const token = await app.token('consumer@example.com');
    // Not execFileSync: the app answering the consumer runs in this process.
    const { stdout } = await promisify(execFile)(process.execPath, ['main.ts'], {
      cwd: scratch,
      env: { ...process.env, FOLIO_URL: app.baseUrl, FOLIO_TOKEN: token },
    });
    expect(JSON.parse(stdout.trim().split('\n').at(-1)!)).toEqual({ email: 'consumer@example.com', left: 10, code: 'NOT_FOUND', done: 'function' });
  }, 180_000);
});
