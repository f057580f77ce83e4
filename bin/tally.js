#!/usr/bin/env node
// CommonJS (bin/package.json), so that `tally hook …`, on the hot path of every hook an agent runs,
// starts no ES module loader: it loads one bundled file, the shim alone, not the CLI.
'use strict';
const argv = process.argv.slice(2);
if (argv[0] === 'hook' && !argv.includes('--help') && !argv.includes('-h')) {
  let shim;
  try {
    shim = require('../dist/src/cli/hook-process.cjs');
  } catch (error) {
    // Built by tsc alone (no bundle): the same shim as ES modules, a few milliseconds slower. Only
    // the bundle itself missing: the first line names the module that was not found.
    if (error.code !== 'MODULE_NOT_FOUND' || !error.message.split('\n')[0].includes('hook-process.cjs'))
      throw error;
  }
  if (shim) shim.runHookProcess(argv.slice(1));
  else import('../dist/src/cli/hook-process.js').then((m) => m.runHookProcess(argv.slice(1)));
} else {
  import(cliEntry())
    .then(({ main }) => main(argv))
    .then((code) => {
      process.exitCode = code;
    });
}

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
