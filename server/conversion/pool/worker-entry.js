import module from 'node:module';

// JavaScript, not TypeScript: the entry is the one module a worker thread loads before it can turn its
// compile cache on, and a TypeScript entry makes every worker start Node's type stripper (swc in
// WebAssembly) first, ~0.1 s, where with the cache on the stripped code of the modules after it is read back.
// A worker thread does not share its process's compile cache: turned on here, before the worker's
// imports are compiled, pdf.js, jsdom and axe load from V8's cached code (jsdom's import: 0.46 → 0.33 s CPU).
module.enableCompileCache?.();
await import('./worker.ts');
