/**
 * Build and test configuration of the dashboard. Run from the repository
 * root: `vite build --config ui/vite.config.ts` writes dist/ui (served by
 * the apiserver under /ui/), `vitest run --config ui/vite.config.ts` runs
 * the unit tests of the pure state logic.
 *
 * For development against a running apiserver, `CAIRN_API=https://127.0.0.1:PORT
 * npx vite --config ui/vite.config.ts` proxies the API (watches and the
 * console WebSocket included) to it; its certificate is not checked.
 */
import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vitest/config';

const apiTarget = process.env.CAIRN_API;
const proxied = { target: apiTarget, changeOrigin: true, secure: false, ws: true };

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/ui/',
  // Keep Vite's and Vitest's caches with the repository's dependencies, not in a ui/node_modules.
  cacheDir: '../node_modules/.vite/ui',
  plugins: [preact({ devToolsEnabled: false, prefreshEnabled: !!apiTarget })],
  build: {
    outDir: '../dist/ui',
    emptyOutDir: true,
    // Every file but index.html carries a content hash, so /ui/assets/ can be cached forever.
    assetsDir: 'assets',
    target: 'es2022',
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
    // The YAML parser (create dialog) is loaded on demand; a readable name instead of its entry file's.
    rollupOptions: { output: { manualChunks: { yaml: ['yaml'] } } },
  },
  server: apiTarget ? { proxy: { '/api': proxied, '/apis': proxied } } : undefined,
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
