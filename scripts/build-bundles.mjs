// Builds the three bundles, from what tsc compiled into dist/. The browser verifier: one script from
// the same src/core and src/evidence modules the CLI runs, with the Node.js built-ins they import
// replaced by the browser seams of src/hub/pages/verifier/ (WebCrypto-checked signatures, a
// synchronous SHA-256, POSIX paths). The command hook shim, and the CLI (below).
import { readFileSync, rmSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
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

// The command hook shim (bin/tally.js hook …), on the hot path of every hook: hook-process.ts and
// its few imports as one CommonJS file, so a hook loads one file and starts no ES module loader.
// The recorder's client, loaded only when a SessionStart finds no recorder, stays the compiled ES
// module beside it.
await build({
  entryPoints: ['src/cli/hook-process.ts'],
  outfile: 'dist/src/cli/hook-process.cjs',
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  logLevel: 'warning',
  plugins: [
    {
      name: 'recorder-client-stays-outside',
      setup(b) {
        b.onResolve({ filter: /\/recorder\/client\.js$/ }, (args) => ({ path: args.path, external: true }));
      },
    },
  ],
});

// The CLI (bin/tally.js runs dist/cli/main.js when it is there): the ES modules tsc wrote under
// dist/src, bundled into a few files, one entry and a chunk per command loaded on demand (each of
// main.js's `import()`s), so a command loads a handful of files instead of one to three hundred
// modules, each resolved, read, compiled and linked on its own (`tally run` 85 → 26 ms,
// `tally recorder run` 84 → 31 ms). Packages stay outside, loaded from node_modules as before.
// A module that finds files from where it is (`import.meta.url`: bin/tally.js, the page verifier,
// the log verifier's worker, better-sqlite3 through createRequire) is given the URL it has under
// dist/src, computed from the chunk's own URL, so it finds them as it does unbundled.
const CLI_OUT = 'dist/cli';
rmSync(CLI_OUT, { recursive: true, force: true });
await build({
  entryPoints: ['dist/src/cli/main.js'],
  outdir: CLI_OUT,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: '[name]-[hash]',
  logLevel: 'warning',
  plugins: [
    {
      name: 'import-meta-url-as-unbundled',
      setup(b) {
        b.onLoad({ filter: /[\\/]dist[\\/]src[\\/].*\.js$/ }, (args) => {
          const source = readFileSync(args.path, 'utf8');
          if (!source.includes('import.meta.url')) return undefined;
          const from = relative(resolve(CLI_OUT), args.path).split('\\').join('/');
          return {
            contents: source.replaceAll('import.meta.url', `new URL(${JSON.stringify(from)}, import.meta.url).href`),
            loader: 'js',
            resolveDir: dirname(args.path),
          };
        });
      },
    },
  ],
});
