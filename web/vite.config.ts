import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

/**
 * The console's front end, built into dist/console (shipped in the npm package, so `tack console` needs no build
 * on the user's machine). Relative asset URLs: the server serves index.html at `/` and the files under
 * `/assets/`. No inline script or style is emitted (the page's Content-Security-Policy allows neither), and no
 * module preload polyfill (it would be one more script; every browser the console targets has modulepreload).
 */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('../dist/console', import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1200,
    target: 'es2022',
    // Rolldown's plugin-timing notice on a loaded machine is noise in `npm run build`, not a problem to act on.
    rolldownOptions: { checks: { pluginTimings: false } },
  },
});
