// Builds the three bundles, from what tsc compiled into dist/. The browser verifier: one script from
// the same src/core and src/evidence modules the CLI runs, with the Node.js built-ins they import
// replaced by the browser seams of src/hub/pages/verifier/ (WebCrypto-checked signatures, a
// synchronous SHA-256, POSIX paths). The command hook shim, and the CLI (below).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
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
  // No import() in the bundle (bin/tally.js loadShim: a script compiled from a code cache cannot
  // run one): built-ins are required; the recorder's client is loaded by bin/tally.js.
  supported: { 'dynamic-import': false },
  logLevel: 'warning',
  plugins: [
    {
      name: 'recorder-client-stays-outside',
      setup(b) {
        b.onResolve({ filter: /\/recorder\/client\.js$/ }, (args) => ({ path: args.path, external: true }));
      },
    },
    {
      // node:os costs a hook 0.2 ms to load, for homedir() alone, called only when TALLY_HOME is
      // unset: loaded then.
      name: 'os-when-needed',
      setup(b) {
        b.onResolve({ filter: /^node:os$/ }, (args) =>
          args.namespace === 'os-when-needed'
            ? { path: 'node:os', external: true }
            : { path: 'node:os', namespace: 'os-when-needed' },
        );
        b.onLoad({ filter: /.*/, namespace: 'os-when-needed' }, () => ({
          contents: "export function homedir() { return require('node:os').homedir(); }",
          loader: 'js',
        }));
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
            contents: source.replaceAll(
              'import.meta.url',
              `new URL(${JSON.stringify(from)}, import.meta.url).href`,
            ),
            loader: 'js',
            resolveDir: dirname(args.path),
          };
        });
      },
    },
  ],
});

// The command shim's V8 code cache (bin/tally.js loadShim): made by one run of the shim through
// the hot path — a PreToolUse delivered to a stand-in recorder on 127.0.0.1 that answers as the
// recorder does — so that the functions every hook runs are in it already compiled. Only a speed-up:
// where it cannot be made (no loopback, no temporary folder) the build says so and goes on, and
// hooks compile the bundle from its source.
try {
  await shimCodeCache('dist/src/cli/hook-process.code-cache');
} catch (error) {
  rmSync('dist/src/cli/hook-process.code-cache', { force: true });
  console.warn(
    `build-bundles: no code cache for the hook shim (${error.message}); hooks compile it from source`,
  );
}

async function shimCodeCache(out) {
  rmSync(out, { force: true });
  const answer = JSON.stringify({
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' },
  });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) });
      res.end(answer);
    });
  });
  await new Promise((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', done);
  });
  let home;
  try {
    home = mkdtempSync(join(tmpdir(), 'tally-shim-cache-'));
    mkdirSync(join(home, 'run'), { mode: 0o700 });
    writeFileSync(join(home, 'recorder.json'), JSON.stringify({ port: server.address().port }));
    writeFileSync(join(home, 'run', 'recorder.secret'), '0'.repeat(64), { mode: 0o600 });
    const payload = JSON.stringify({
      session_id: 'build',
      cwd: home,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'true' },
      tool_use_id: 'toolu_build',
    });
    const running = promisify(execFile)(
      process.execPath,
      ['scripts/shim-code-cache.cjs', out, 'claude-code', '--fail', 'closed'],
      { env: { PATH: process.env.PATH, TALLY_HOME: home } },
    );
    running.child.stdin.end(payload);
    const { code, stdout, stderr } = await running.then(
      (done) => ({ code: 0, ...done }),
      (failed) => ({ code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' }),
    );
    // A run that did not take the hot path (no answer from the stand-in) made a cache of another path.
    if (code !== 0 || stdout !== answer)
      throw new Error(`its run answered ${JSON.stringify(stdout)} (exit ${code}) ${stderr.trim()}`.trim());
    if (!existsSync(out)) throw new Error('its run wrote no cache');
  } finally {
    server.close();
    if (home !== undefined) rmSync(home, { recursive: true, force: true });
  }
}
