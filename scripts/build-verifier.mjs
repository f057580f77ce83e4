// Builds the two bundles. The browser verifier: one script from the same src/core and src/evidence
// modules the CLI runs, with the Node.js built-ins they import replaced by the browser seams of
// src/hub/pages/verifier/ (WebCrypto-checked signatures, a synchronous SHA-256, POSIX paths). And
// the command hook shim (below).
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { build } from 'esbuild';
import { HOOK_BUNDLE, HOOK_CODE_CACHE, writeHookCodeCache } from './hook-code-cache.mjs';

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

// The command hook shim (bin/tally.js hook …), on the hot path of every hook: hook-process.ts and
// its few imports as one CommonJS file, so a hook loads one file and starts no ES module loader.
// The recorder's client, loaded only when a SessionStart finds no recorder, stays the compiled ES
// module beside it, imported by bin/tally.js. bin/tally.js compiles the bundle with node:vm, where
// `import()` is not available: imports of built-ins become `require`. The first line tags this
// build; V8's code cache of the bundle, written next (./hook-code-cache.mjs), starts with it.
rmSync(HOOK_CODE_CACHE, { force: true });
await build({
  entryPoints: ['src/cli/hook-process.ts'],
  outfile: HOOK_BUNDLE,
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  supported: { 'dynamic-import': false },
  banner: { js: `// tally hook shim, build ${randomBytes(8).toString('hex')}` },
  logLevel: 'warning',
});
await writeHookCodeCache();
