// V8's code cache of the bundled command hook shim (dist/src/cli/hook-process.cjs), which
// bin/tally.js compiles from on every hook instead of parsing and compiling the bundle afresh.
// The cache is taken from a process that has just run one hook the way an agent runs it (a
// PreToolUse payload on stdin, answered by a server on 127.0.0.1 standing in for the recorder), so
// it holds the functions that path compiles, not only the top level. The file is the bundle's
// first line (its build tag), then V8's bytes; bin/tally.js uses it only for that bundle.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(root, 'bin', 'tally.js');
export const HOOK_BUNDLE = join(root, 'dist', 'src', 'cli', 'hook-process.cjs');
export const HOOK_CODE_CACHE = `${HOOK_BUNDLE}.cache`;

// Runs in the child: the shim as bin/tally.js runs it, the cache written as the process exits.
const CHILD = `
const { writeFileSync } = require('node:fs');
const bundle = require(process.env.TALLY_BIN).loadHookBundle();
const exit = process.exit;
process.exit = (code) => {
  writeFileSync(process.env.CACHE_OUT, Buffer.concat([Buffer.from(bundle.tag, 'latin1'), bundle.script.createCachedData()]));
  exit(code);
};
bundle.exports.runHookProcess(['claude-code', '--fail', 'open'], () => Promise.reject(new Error('no client here')));
`;

export async function writeHookCodeCache() {
  const dir = mkdtempSync(join(tmpdir(), 'tally-hook-cache-'));
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  try {
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    const home = join(dir, 'home');
    mkdirSync(join(home, 'run'), { recursive: true });
    writeFileSync(join(home, 'recorder.json'), JSON.stringify({ port: server.address().port }));
    writeFileSync(join(home, 'run', 'recorder.secret'), '0'.repeat(64), { mode: 0o600 });
    const out = join(dir, 'cache');
    const payload = JSON.stringify({
      session_id: 'code-cache',
      cwd: dir,
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'git status' },
      tool_use_id: 'toolu_code_cache',
    });
    // Not spawnSync: this process's server answers the child.
    const ran = await run(payload, { TALLY_HOME: home, TALLY_BIN: BIN, CACHE_OUT: out, PATH: process.env.PATH });
    if (ran.status !== 0 || ran.stdout !== '{}')
      throw new Error(`the hook shim did not answer while its code cache was made: ${ran.stderr}`);
    renameSync(out, HOOK_CODE_CACHE);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function run(input, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['-e', CHILD], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (status) => resolve({ status, stdout, stderr }));
    child.stdin.end(input);
  });
}
