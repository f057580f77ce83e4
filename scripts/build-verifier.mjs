// Builds the browser verifier: one script from the same src/core and src/evidence modules the CLI
// runs, with the Node.js built-ins they import replaced by the browser seams of
// src/hub/pages/verifier/ (WebCrypto-checked signatures, a synchronous SHA-256, POSIX paths).
import { build } from 'esbuild';

const seams = 'src/hub/pages/verifier';
const absent = `./${seams}/browser-absent.ts`;
await build({
  entryPoints: [`${seams}/entry.ts`],
  outfile: 'dist/src/hub/pages/verifier.js',
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: ['chrome120', 'firefox120', 'safari17'],
  minify: true,
  legalComments: 'eof',
  logLevel: 'warning',
  alias: {
    'node:crypto': `./${seams}/browser-crypto.ts`,
    'node:path': `./${seams}/browser-path.ts`,
    'node:fs': absent,
    'node:fs/promises': absent,
    'node:os': absent,
    'node:worker_threads': absent,
    'node:timers/promises': absent,
    'node:dns': absent,
    'node:net': absent,
  },
  inject: [`./${seams}/buffer-global.ts`],
  // The worker pool (import.meta.url) is never started in a page: the verifier runs with workers: 0.
  logOverride: { 'empty-import-meta': 'silent' },
});
