#!/usr/bin/env node
// CommonJS (bin/package.json), so that `tally hook …`, on the hot path of every hook an agent runs,
// starts no ES module loader: it loads one bundled file, the shim alone, not the CLI.
'use strict';
const argv = process.argv.slice(2);
if (require.main === module) {
  if (argv[0] === 'hook' && !argv.includes('--help') && !argv.includes('-h')) {
    let shim;
    try {
      shim = loadShim().shim;
    } catch (error) {
      // Built by tsc alone (no bundle): the same shim as ES modules, a few milliseconds slower.
      if (error.code !== 'ENOENT') throw error;
    }
    // import() here, in a module Node compiled, for the bundle (see loadShim).
    if (shim)
      shim.runHookProcess(argv.slice(1), { recorderClient: () => import('../dist/src/recorder/client.js') });
    else import('../dist/src/cli/hook-process.js').then((m) => m.runHookProcess(argv.slice(1)));
  } else {
    import(cliEntry())
      .then(({ main }) => main(argv))
      .then((code) => {
        process.exitCode = code;
      });
  }
}

/**
 * The bundled shim (dist/src/cli/hook-process.cjs), compiled with the V8 code cache the build made
 * of it after one run (hook-process.code-cache, scripts/build-bundles.mjs): every function a hook
 * runs is then read as compiled code instead of being parsed and compiled on its first call, about a
 * millisecond of each hook's start (docs/performance.md). V8 checks a cache's header against its
 * own version (not the patches Node applies to it), its flags and the source's length, not its
 * contents: a cache damaged past its header makes V8 abort the process (no answer, no spool), and
 * one made for another source of the same length runs that source's code. So V8 is given the cache
 * only when the file was made by this very Node for this very source and holds two identical
 * copies of it (shimCacheFile); otherwise the source is compiled alone. A script compiled from a
 * code cache runs no import() (Node 20 loses the loader it was given), so the bundle has none: its
 * built-ins are required, and the recorder's client, an ES module, is loaded by the caller
 * (runHookProcess's `recorderClient`). Throws ENOENT when there is no bundle. `cache: false` reads
 * none (the build's run that makes it); `source` is what was compiled.
 */
function loadShim({ cache = true } = {}) {
  const { readFileSync } = require('node:fs');
  const { join } = require('node:path');
  const dir = join(__dirname, '..', 'dist', 'src', 'cli');
  const file = join(dir, 'hook-process.cjs');
  const source = readFileSync(file);
  let cachedData;
  try {
    if (cache) cachedData = cacheIn(readFileSync(join(dir, 'hook-process.code-cache')), source);
  } catch {
    // no cache: compiled from the source alone
  }
  const script = new (require('node:vm').Script)(
    `(function (exports, require, module, __filename, __dirname) {${source.toString('utf8')}\n})`,
    { filename: file, cachedData },
  );
  const compiled = { exports: {} };
  // The bundle requires Node's built-ins only; anything else is resolved from where it lives.
  const requireIn = (id) =>
    id.startsWith('node:') ? require(id) : require('node:module').createRequire(file)(id);
  script.runInThisContext()(compiled.exports, requireIn, compiled, file, dir);
  return { shim: compiled.exports, script, source };
}

/** The Node a cache was made by: its version (patches to V8 included), its platform and CPU. */
function runtimeId() {
  return `${process.version} ${process.platform} ${process.arch} v8 ${process.versions.v8}`;
}

/**
 * The code-cache file: three lengths (32-bit little-endian: the runtime id's, the source's, the
 * cache's), the runtime id (latin1), the source, and the cache twice. Two copies compared byte for
 * byte catch a torn or damaged file at the cost of a memory compare, where a checksum computed in
 * JavaScript would cost a hook what the cache saves.
 */
function shimCacheFile(source, cachedData) {
  const id = Buffer.from(runtimeId(), 'latin1');
  const head = Buffer.alloc(12);
  head.writeUInt32LE(id.length, 0);
  head.writeUInt32LE(source.length, 4);
  head.writeUInt32LE(cachedData.length, 8);
  return Buffer.concat([head, id, source, cachedData, cachedData]);
}

/** The cache a code-cache file holds for `source` and this Node, or undefined when it is not whole or not theirs. */
function cacheIn(bytes, source) {
  if (bytes.length < 12) return undefined;
  const k = bytes.readUInt32LE(0);
  const s = bytes.readUInt32LE(4);
  const n = bytes.readUInt32LE(8);
  if (n === 0 || bytes.length !== 12 + k + s + 2 * n) return undefined;
  if (bytes.toString('latin1', 12, 12 + k) !== runtimeId()) return undefined;
  if (!bytes.subarray(12 + k, 12 + k + s).equals(source)) return undefined;
  const at = 12 + k + s;
  const one = bytes.subarray(at, at + n);
  return one.equals(bytes.subarray(at + n)) ? one : undefined;
}

module.exports = { loadShim, shimCacheFile };

/**
 * The bundled CLI (dist/cli, scripts/build-bundles.mjs), unless there is none or it is older than
 * what tsc last wrote (a build by tsc alone after a full one): then the modules under dist/src.
 */
function cliEntry() {
  const { statSync } = require('node:fs');
  const { join } = require('node:path');
  const bundled = join(__dirname, '..', 'dist', 'cli', 'main.js');
  const compiled = join(__dirname, '..', 'dist', 'src', 'cli', 'main.js');
  try {
    if (statSync(bundled).mtimeMs >= statSync(compiled).mtimeMs) return '../dist/cli/main.js';
  } catch {
    // no bundle
  }
  return '../dist/src/cli/main.js';
}
