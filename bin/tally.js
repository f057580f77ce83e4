#!/usr/bin/env node
// CommonJS (bin/package.json), so that `tally hook …`, on the hot path of every hook an agent runs,
// starts no ES module loader: it compiles one bundled file, the shim alone, not the CLI.
'use strict';
const { existsSync, readFileSync } = require('node:fs');
const { join } = require('node:path');
const { Script } = require('node:vm');

const BUNDLE_DIR = join(__dirname, '..', 'dist', 'src', 'cli');
const BUNDLE = join(BUNDLE_DIR, 'hook-process.cjs');
/** V8's code cache of the bundle, written by the build (scripts/hook-code-cache.mjs). */
const CODE_CACHE = `${BUNDLE}.cache`;

/**
 * The bundled shim, compiled from V8's code cache of it where the build left one for exactly this
 * bundle, or null when there is no bundle (a build by tsc alone). The cache starts with the
 * bundle's first line (its build tag), then V8's bytes: a cache of another build is not used, and V8
 * itself refuses one of another V8 or other flags (`cachedDataRejected`), compiling the source as
 * it would without. Compiled in a CommonJS wrapper of its own, as `require` would, so the bundle
 * must hold no `import()` (the build turns its imports of built-ins into `require`).
 */
function loadHookBundle() {
  let source;
  try {
    source = readFileSync(BUNDLE, 'utf8');
  } catch (error) {
    if (error.code === 'ENOENT') return null;
    throw error;
  }
  const tag = source.slice(0, source.indexOf('\n') + 1);
  let cachedData;
  try {
    const bytes = readFileSync(CODE_CACHE);
    if (tag !== '' && bytes.length > tag.length && bytes.toString('latin1', 0, tag.length) === tag)
      cachedData = bytes.subarray(tag.length);
  } catch {
    // no cache: compiled from the source
  }
  const script = new Script(`(function (exports, require, module, __filename, __dirname) {${source}\n})`, {
    filename: BUNDLE,
    cachedData,
  });
  const module = { exports: {} };
  script.runInThisContext().call(module.exports, module.exports, require, module, BUNDLE, BUNDLE_DIR);
  return { exports: module.exports, script, tag, cached: cachedData !== undefined && !script.cachedDataRejected };
}

module.exports = { loadHookBundle, CODE_CACHE };

if (require.main === module) {
  const argv = process.argv.slice(2);
  if (argv[0] === 'hook' && !argv.includes('--help') && !argv.includes('-h')) {
    // Loaded only when a SessionStart finds no recorder: the rest of the recorder's client.
    const recorderClient = () => import('../dist/src/recorder/client.js');
    const bundle = loadHookBundle();
    // Built by tsc alone (no bundle): the same shim as ES modules, a few milliseconds slower.
    if (bundle) bundle.exports.runHookProcess(argv.slice(1), recorderClient);
    else
      import('../dist/src/cli/hook-process.js').then((m) => m.runHookProcess(argv.slice(1), recorderClient));
  } else {
    // The bundled CLI (dist/cli, scripts/build-bundles.mjs), or the modules tsc wrote where there
    // is none (a build by tsc alone).
    const bundled = existsSync(join(__dirname, '..', 'dist', 'cli', 'main.js'));
    import(bundled ? '../dist/cli/main.js' : '../dist/src/cli/main.js')
      .then(({ main }) => main(argv))
      .then((code) => {
        process.exitCode = code;
      });
  }
}
