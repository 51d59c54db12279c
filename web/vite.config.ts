import { defineConfig } from 'vite';

// Preact through the bundler's own automatic JSX runtime: no framework plugin needed.
export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022', sourcemap: false },
});
