// Runs every compiled test file under dist/test with node's own test runner.
// Node 20's `--test` takes no globs, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function testFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...testFiles(path));
    else if (entry.name.endsWith('.test.js')) out.push(path);
  }
  return out.sort();
}

const only = process.argv.slice(2);
const files = testFiles('dist/test').filter((f) => only.length === 0 || only.some((o) => f.includes(o)));
if (files.length === 0) {
  console.error('no test files found under dist/test (did the build run?)');
  process.exit(2);
}
// The agent tests run the real agent CLIs, installed out of the repository by their own script.
// A failed install does not stop the other tests: the agent tests then fail, each with the reason.
if (files.some((f) => f.includes(join('dist', 'test', 'agents')))) {
  console.error('agent tests selected: installing the pinned agent CLIs (node scripts/agents-install.mjs)');
  const install = spawnSync(process.execPath, [join('scripts', 'agents-install.mjs')], { stdio: 'inherit' });
  if (install.status !== 0) console.error('agent install failed; the agent tests will fail with the reason');
}
// Every test process gets a temp dir of this run's own; whatever is left in it afterwards is
// reported (a test that does not clean up is a defect) and then removed.
const runTmp = mkdtempSync(join(tmpdir(), 'tally-test-run-'));
const result = spawnSync(process.execPath, ['--test', '--test-reporter=spec', ...files], {
  stdio: 'inherit',
  env: { ...process.env, TMPDIR: runTmp },
});
const left = readdirSync(runTmp);
if (left.length > 0) {
  const shown = left.slice(0, 10).join(', ');
  console.error(`\n${left.length} temp entr${left.length === 1 ? 'y was' : 'ies were'} left by the tests: ${shown}${left.length > 10 ? ', …' : ''}`);
}
rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
process.exit(result.status ?? 1);
