// Run by scripts/build-bundles.mjs: the command shim, loaded as bin/tally.js loads it but compiled
// without a cache, answers one hook (the recorder named by TALLY_HOME, here the build's stand-in);
// as it exits, the V8 code cache of everything that run compiled is written to the file named by
// argv[2], in the form bin/tally.js reads (shimCacheFile), with the source it compiled. Its
// argv[3…] are the shim's.
'use strict';
const { renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { loadShim, shimCacheFile } = require(join(__dirname, '..', 'bin', 'tally.js'));

const [out, ...args] = process.argv.slice(2);
const { shim, script, source } = loadShim({ cache: false });
const exit = process.exit;
process.exit = (code) => {
  // Whole or not at all: written beside it, then renamed over it.
  writeFileSync(`${out}.tmp`, shimCacheFile(source, script.createCachedData()));
  renameSync(`${out}.tmp`, out);
  exit.call(process, code);
};
shim.runHookProcess(args);
