/**
 * The command-hook shim bin/tally-hook, under dash (one curl) and under bash (bash's own /dev/tcp,
 * no other process), answers exactly as the Node shim does, through the real recorder, with the
 * secret never in a process's arguments; when it cannot reach the recorder, or the answer is lost,
 * it hands the payload to the Node shim, which applies the failure policy and spools.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, connect as netConnect, type Server } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { logContent } from '../log-content.js';
import {
  decodedPayloads,
  makeProject,
  type Project,
  type Ran,
  runProcess,
  runTally,
} from './tally-process.js';

const SH_SHIM = fileURLToPath(new URL('../../../bin/tally-hook', import.meta.url));
/** dash itself, found on this process's PATH (a test may give the shim a PATH without it). */
const DASH = execFileSync('sh', ['-c', 'command -v dash'], { encoding: 'utf8' }).trim();
const projects: Project[] = [];
after(async () => {
  for (const p of projects) await p.tally(['recorder', 'stop']);
});

type Shell = 'dash' | 'bash';
const SHELLS: Record<Shell, string> = { dash: DASH, bash: '/bin/bash' };

function shShim(
  p: Project,
  payload: unknown,
  env: NodeJS.ProcessEnv = p.env,
  options: { lead?: string[]; text?: string; shell?: Shell } = {},
): Promise<Ran> {
  const argv = [SH_SHIM, ...(options.lead ?? []), 'claude-code', '--fail', 'closed'];
  const shell = SHELLS[options.shell ?? 'dash'];
  return runProcess(shell, argv, { cwd: p.root, env, stdin: options.text ?? JSON.stringify(payload) });
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

/** The decoded records of every session log under the project and the home. */
function loggedRecords(p: Project): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const base of [p.root, p.home])
    for (const name of readdirSync(base, { recursive: true }) as string[])
      if (name.endsWith('events.log'))
        for (const text of decodedPayloads(logContent(join(base, name))).split('\n'))
          if (text.trim()) out.push(JSON.parse(text));
  return out;
}

for (const shell of ['dash', 'bash'] as const) {
  describe(`the command-hook shim under ${shell}`, () => {
    it('answers as the Node shim does: a forbidden call denied, an allowed one allowed', async () => {
      const p = await started();
      for (const [id, command, decision] of [
        ['s1', 'rm -rf /', 'deny'],
        ['s2', 'ls -la', 'allow'],
      ] as const) {
        const sh = await shShim(p, pre(p, id, command), p.env, { shell });
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
    it('with the recorder stopped, fails closed through the Node shim and spools the payload', async () => {
      const p = await started();
      assert.equal((await p.tally(['recorder', 'stop'])).code, 0);
      const ran = await shShim(p, pre(p, `s4-${shell}`, 'ls'), p.env, { shell });
      const answer = JSON.parse(ran.stdout).hookSpecificOutput;
      assert.equal(answer.permissionDecision, 'deny');
      assert.match(answer.permissionDecisionReason, /unreachable/);
      const spool = join(p.home, 'spool', 'claude-code.jsonl');
      assert.ok(existsSync(spool) && readFileSync(spool, 'utf8').includes(`"s4-${shell}"`));
    });
    it('takes a payload of many lines whole, as the Node shim does', async () => {
      const p = await started();
      // Pretty-printed, 20,000 lines: a line-by-line read in sh would take minutes here.
      const payload = { ...pre(p, 's5', 'ls -la'), extra: Array.from({ length: 20_000 }, (_, i) => `v${i}`) };
      const sh = await shShim(p, null, p.env, { text: `${JSON.stringify(payload, null, 1)}\n\n`, shell });
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
      const ran = await shShim(p, pre(p, 's6', 'ls'), env, { lead: ['--node', process.execPath], shell });
      assert.equal(JSON.parse(ran.stdout).hookSpecificOutput.permissionDecision, 'deny');
      assert.match(ran.stderr, /spooled/);
    });

    it('counts a payload in bytes: text beyond ASCII arrives whole', async () => {
      const p = await started();
      const payload = pre(p, `s10-${shell}`, "ls 'héllo wörld ✓ 漢字 🙂'");
      const ran = await shShim(p, payload, p.env, { shell });
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(JSON.parse(ran.stdout).hookSpecificOutput.permissionDecision, 'allow');
      assert.equal(ran.stderr, '', 'answered by the recorder, not through the Node shim');
      const call = loggedRecords(p).find((r) => JSON.stringify(r.event).includes(`"s10-${shell}"`));
      assert.ok(call, 'recorded');
      assert.match(JSON.stringify(call.event), /héllo wörld ✓ 漢字 🙂/);
    });
  });
}

describe('the shim under dash: curl', () => {
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

  it('sends an event id, so a retry after a lost answer is answered the same and recorded once', async () => {
    const p = await started();
    const stubs = join(p.dir, 'lossy-bin');
    mkdirSync(stubs);
    // The real curl delivers the request and the recorder answers; the answer never arrives.
    const curl = execFileSync('sh', ['-c', 'command -v curl'], { encoding: 'utf8' }).trim();
    writeFileSync(join(stubs, 'curl'), `#!/bin/sh\n'${curl}' "$@" >/dev/null 2>&1\nexit 52\n`, {
      mode: 0o755,
    });
    const env = { ...p.env, PATH: `${stubs}:${p.env.PATH}` };
    const ran = await shShim(p, pre(p, 's7', 'rm -rf /'), env);
    const answer = JSON.parse(ran.stdout).hookSpecificOutput;
    assert.equal(answer.permissionDecision, 'deny');
    assert.match(answer.permissionDecisionReason, /forbidden/, 'the recorder’s answer, replayed');
    assert.doesNotMatch(ran.stderr, /spooled/);
    const calls = loggedRecords(p).filter((r) => JSON.stringify(r.event).includes('"s7"'));
    assert.equal(calls.length, 1, 'recorded once, though the recorder was asked twice');
    const event = calls[0]!.event as { id: string };
    assert.match(event.id, /^evt_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.equal((calls[0]!.decision as { decision: string }).decision, 'deny');
  });
});

describe('the shim under bash: /dev/tcp', () => {
  it('starts no process of its own: no cat, no curl, the secret in no argument', async () => {
    const p = await started();
    // Every program a shell could start, as stubs that leave a mark; node only through --node.
    const stubs = join(p.dir, 'marking-bin');
    mkdirSync(stubs);
    const marks = join(p.dir, 'marks');
    for (const tool of ['cat', 'curl', 'node', 'sh', 'dash'])
      writeFileSync(join(stubs, tool), `#!/bin/sh\necho ${tool} "$@" >> '${marks}'\nexit 9\n`, {
        mode: 0o755,
      });
    const env = { ...p.env, PATH: stubs };
    const ran = await shShim(p, pre(p, 'b1', 'rm -rf /'), env, {
      shell: 'bash',
      lead: ['--node', process.execPath],
    });
    const answer = JSON.parse(ran.stdout).hookSpecificOutput;
    assert.equal(answer.permissionDecision, 'deny');
    assert.match(answer.permissionDecisionReason, /forbidden/);
    assert.equal(ran.stderr, '');
    assert.ok(!existsSync(marks), existsSync(marks) ? readFileSync(marks, 'utf8') : 'nothing started');
  });

  it('a lost answer: the Node shim retries under the same event id, recorded once', async () => {
    const p = await started();
    const config = join(p.home, 'recorder.json');
    const original = readFileSync(config, 'utf8');
    const { port } = JSON.parse(original) as { port: number };
    // A relay in front of the recorder that delivers the first request and loses its answer.
    let connections = 0;
    const relay: Server = createServer((client) => {
      const first = connections++ === 0;
      const upstream = netConnect(port, '127.0.0.1');
      client.pipe(upstream);
      if (first) upstream.once('data', () => client.destroy());
      else upstream.pipe(client);
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayPort = (relay.address() as { port: number }).port;
    writeFileSync(config, JSON.stringify({ ...JSON.parse(original), port: relayPort }));
    try {
      const ran = await shShim(p, pre(p, 'b2', 'rm -rf /'), p.env, { shell: 'bash' });
      const answer = JSON.parse(ran.stdout).hookSpecificOutput;
      assert.equal(answer.permissionDecision, 'deny');
      assert.match(answer.permissionDecisionReason, /forbidden/, 'the recorder’s answer, replayed');
      assert.doesNotMatch(ran.stderr, /spooled/);
      assert.equal(connections, 2, 'the shim, then the Node shim');
    } finally {
      writeFileSync(config, original);
      await new Promise((resolve) => relay.close(resolve));
    }
    const calls = loggedRecords(p).filter((r) => JSON.stringify(r.event).includes('"b2"'));
    assert.equal(calls.length, 1, 'recorded once, though the recorder was asked twice');
    assert.match((calls[0]!.event as { id: string }).id, /^evt_[0-9a-f]{8}-/);
  });

  it('a payload longer than a body may be goes to the Node shim whole', async () => {
    const p = await started();
    // 16 MiB and a little more: bash reads the limit, the Node shim gets it and the rest of stdin.
    const payload = { ...pre(p, 'b3', 'ls'), pad: 'x'.repeat(16 * 1024 * 1024) };
    const text = JSON.stringify(payload);
    const ran = await shShim(p, null, p.env, { shell: 'bash', text });
    assert.equal(ran.code, 0, ran.stderr);
    // The recorder refuses a body that large; the Node shim applies the failure policy and spools it.
    assert.match(ran.stderr, /the event was spooled/);
    const spool = readFileSync(join(p.home, 'spool', 'claude-code.jsonl'), 'utf8');
    const entry = JSON.parse(spool.trim().split('\n').pop()!) as {
      payload: { pad: string; tool_use_id: string };
    };
    assert.equal(entry.payload.tool_use_id, 'b3');
    assert.equal(entry.payload.pad.length, 16 * 1024 * 1024, 'nothing of it lost on the way');
  });
});

describe('the recorder and a reused event id', () => {
  it('judges and records anew an event id sent again with other bytes (a replay buys no answer)', async () => {
    const p = await started();
    const { port } = JSON.parse(readFileSync(join(p.home, 'recorder.json'), 'utf8')) as { port: number };
    const secret = readFileSync(join(p.home, 'run', 'recorder.secret'), 'utf8').trim();
    const send = async (payload: unknown) => {
      const res = await fetch(`http://127.0.0.1:${port}/hooks/claude-code`, {
        method: 'POST',
        headers: { authorization: `Bearer ${secret}`, 'x-tally-event-id': 'evt_reused' },
        body: JSON.stringify(payload),
      });
      return ((await res.json()) as { hookSpecificOutput: { permissionDecision: string } })
        .hookSpecificOutput;
    };
    assert.equal((await send(pre(p, 's8', 'ls'))).permissionDecision, 'allow');
    assert.equal((await send(pre(p, 's9', 'rm -rf /'))).permissionDecision, 'deny');
    assert.equal(
      (await send(pre(p, 's9', 'rm -rf /'))).permissionDecision,
      'deny',
      'a retry: the same answer',
    );
    const calls = loggedRecords(p).filter((r) => /"s[89]"/.test(JSON.stringify(r.event)));
    assert.deepEqual(
      calls.map((r) => (r.decision as { decision: string }).decision),
      ['allow', 'deny'],
      'both calls recorded, the retry of the second once',
    );
    const ids = calls.map((r) => (r.event as { id: string }).id);
    assert.equal(ids[0], 'evt_reused');
    assert.notEqual(ids[1], 'evt_reused', 'the reused id is not recorded twice');
  });
});
