// Runs every compiled test file under dist/test with node's own test runner.
// Node 20's `--test` takes no globs, so the files are listed here.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

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
// The oracles many tests read — the official AHP schemas, fixtures and interop scenarios, real
// agent payloads, the reference digests and vectors — live beside the project in ../shared and
// are read from there, never copied in. Without them those tests could only fail one by one with
// ENOENT, so the whole suite stops here and says where they were looked for.
const shared = resolve('..', 'shared');
if (!existsSync(join(shared, 'ahp')) || !existsSync(join(shared, 'reference'))) {
  const why = `the test oracles are not at ${shared} (its ahp/ and reference/ folders): clone the project beside them`;
  if (only.length === 0) {
    console.error(`cannot run the test suite: ${why}`);
    process.exit(2);
  }
  console.error(`warning: ${why}; tests that read them will fail`);
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
// Every process a test started carries this run's TMPDIR: any still alive (a recorder, a backend)
// outlived the suite, which is a failure; it is named and stopped.
const outlived = [];
for (const entry of readdirSync('/proc')) {
  if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
  try {
    const env = readFileSync(`/proc/${entry}/environ`, 'latin1').split('\0');
    if (!env.includes(`TMPDIR=${runTmp}`)) continue;
    const cmd = readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0').join(' ').trim();
    outlived.push(`${entry} ${cmd.slice(0, 160)}`);
    process.kill(Number(entry), 'SIGKILL');
  } catch {
    // gone meanwhile, or not ours to read
  }
}
if (outlived.length > 0)
  console.error(
    `\n${outlived.length} process(es) outlived the tests (stopped now):\n  ${outlived.join('\n  ')}`,
  );
const left = readdirSync(runTmp);
if (left.length > 0) {
  const shown = left.slice(0, 10).join(', ');
  console.error(
    `\n${left.length} temp entr${left.length === 1 ? 'y was' : 'ies were'} left by the tests: ${shown}${left.length > 10 ? ', …' : ''}`,
  );
}
rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
process.exit(outlived.length > 0 ? 1 : (result.status ?? 1));
