/**
 * The POSIX sh hook shim (bin/tally-hook) answers exactly as the Node shim does, through the real
 * recorder, with the secret never in a process's arguments; when it cannot reach the recorder it
 * hands the payload to the Node shim, which applies the failure policy and spools.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { makeProject, type Project, type Ran, runProcess, runTally } from './tally-process.js';

const SH_SHIM = fileURLToPath(new URL('../../../bin/tally-hook', import.meta.url));
/** dash itself, found on this process's PATH (a test may give the shim a PATH without it). */
const DASH = execFileSync('sh', ['-c', 'command -v dash'], { encoding: 'utf8' }).trim();
const projects: Project[] = [];
after(async () => {
  for (const p of projects) await p.tally(['recorder', 'stop']);
});

function shShim(
  p: Project,
  payload: unknown,
  env: NodeJS.ProcessEnv = p.env,
  options: { lead?: string[]; text?: string } = {},
): Promise<Ran> {
  const argv = [SH_SHIM, ...(options.lead ?? []), 'claude-code', '--fail', 'closed'];
  return runProcess(DASH, argv, { cwd: p.root, env, stdin: options.text ?? JSON.stringify(payload) });
}

function pre(p: Project, id: string, command: string) {
  return {
    session_id: 'harness-sh',
    transcript_path: join(p.dir, 't.jsonl'),
    cwd: p.root,
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command },
    tool_use_id: id,
  };
}

async function started(): Promise<Project> {
  const p = makeProject('tally-shshim-');
  p.env.TALLY_RECORDER_IDLE_MS = '5000';
  projects.push(p);
  for (const args of [
    ['init'],
    ['agent', 'register', '--name', 'coder', '--allow', 'Bash(ls*)', '--forbid', 'Bash(rm -rf *)'],
  ])
    assert.equal((await p.tally(args)).code, 0);
  const start = await runTally(['hook', 'claude-code', '--agent', 'coder'], {
    cwd: p.root,
    env: p.env,
    stdin: JSON.stringify({ ...pre(p, 'x', 'ls'), hook_event_name: 'SessionStart', source: 'startup' }),
  });
  assert.equal(start.code, 0, start.stderr);
  return p;
}

describe('the POSIX sh hook shim', () => {
  it('answers as the Node shim does: a forbidden call denied, an allowed one allowed', async () => {
    const p = await started();
    for (const [id, command, decision] of [
      ['s1', 'rm -rf /', 'deny'],
      ['s2', 'ls -la', 'allow'],
    ] as const) {
      const sh = await shShim(p, pre(p, id, command));
      assert.equal(sh.code, 0, sh.stderr);
      const node = await runTally(['hook', 'claude-code', '--fail', 'closed'], {
        cwd: p.root,
        env: p.env,
        stdin: JSON.stringify(pre(p, `${id}-node`, command)),
      });
      const [a, b] = [JSON.parse(sh.stdout), JSON.parse(node.stdout)];
      assert.equal(a.hookSpecificOutput.permissionDecision, decision);
      assert.deepEqual(a, b, 'the same native answer as the Node shim');
    }
  });

  it('never puts the secret in an argument; a failing curl hands over to the Node shim', async () => {
    const p = await started();
    const stubs = join(p.dir, 'stub-bin');
    mkdirSync(stubs);
    const argvFile = join(p.dir, 'curl-argv');
    writeFileSync(join(stubs, 'curl'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${argvFile}'\nexit 7\n`);
    chmodSync(join(stubs, 'curl'), 0o755);
    const env = { ...p.env, PATH: `${stubs}:${p.env.PATH}` };
    const denied = await shShim(p, pre(p, 's3', 'rm -rf /'), env);
    assert.equal(JSON.parse(denied.stdout).hookSpecificOutput.permissionDecision, 'deny');
    assert.match(JSON.parse(denied.stdout).hookSpecificOutput.permissionDecisionReason, /forbidden/);
    const secret = readFileSync(join(p.home, 'run', 'recorder.secret'), 'utf8').trim();
    const argv = readFileSync(argvFile, 'utf8');
    assert.match(argv, /\/hooks\/claude-code/, 'curl was called');
    assert.ok(!argv.includes(secret), 'the secret is not in curl’s arguments');
  });

  it('with the recorder stopped, fails closed through the Node shim and spools the payload', async () => {
    const p = await started();
    assert.equal((await p.tally(['recorder', 'stop'])).code, 0);
    const ran = await shShim(p, pre(p, 's4', 'ls'));
    const answer = JSON.parse(ran.stdout).hookSpecificOutput;
    assert.equal(answer.permissionDecision, 'deny');
    assert.match(answer.permissionDecisionReason, /unreachable/);
    const spool = join(p.home, 'spool', 'claude-code.jsonl');
    assert.ok(existsSync(spool) && readFileSync(spool, 'utf8').includes('"s4"'));
  });

  it('takes a payload of many lines whole, as the Node shim does', async () => {
    const p = await started();
    // Pretty-printed, 20,000 lines: a line-by-line read in sh would take minutes here.
    const payload = { ...pre(p, 's5', 'ls -la'), extra: Array.from({ length: 20_000 }, (_, i) => `v${i}`) };
    const sh = await shShim(p, null, p.env, { text: `${JSON.stringify(payload, null, 1)}\n\n` });
    assert.equal(sh.code, 0, sh.stderr);
    assert.equal(JSON.parse(sh.stdout).hookSpecificOutput.permissionDecision, 'allow');
    assert.equal(sh.stderr, '', 'answered by the recorder, not through the Node shim');
  });

  it('falls back through the node that --node names, with no node on the PATH', async () => {
    const p = await started();
    assert.equal((await p.tally(['recorder', 'stop'])).code, 0);
    // A PATH with sh's tools but no node: the Node shim runs only through --node.
    const bare = join(p.dir, 'bare-bin');
    mkdirSync(bare);
    for (const tool of ['cat', 'curl'])
      writeFileSync(join(bare, tool), `#!/bin/sh\nexec /usr/bin/${tool} "$@"\n`, { mode: 0o755 });
    const env = { ...p.env, PATH: bare };
    const ran = await shShim(p, pre(p, 's6', 'ls'), env, { lead: ['--node', process.execPath] });
    assert.equal(JSON.parse(ran.stdout).hookSpecificOutput.permissionDecision, 'deny');
    assert.match(ran.stderr, /spooled/);
  });
});
