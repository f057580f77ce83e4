/**
 * `tally wrap -- <cmd…>` as a real process around real commands in a real git repository.
 * Oracles: the shell's own exit status (and 128+n for a signal, as POSIX shells report it), the
 * files the command really changed (written by the test's own shell script), git's `.gitignore`
 * (an ignored file is not reported), the certificate (a forbidden command does not run), and the
 * package verifier.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Receipt } from '../../src/evidence/receipt/receipt.js';
import { git } from '../session/fixture.js';
import { tallyOnPty } from './pty.js';
import { decodedPayloads, jsonOut, makeProject, type Project, TALLY_BIN } from './tally-process.js';

function receiptOf(pkg: string): Receipt {
  const lines = readFileSync(pkg, 'utf8').trimEnd().split('\n');
  const seal = JSON.parse(lines.at(-1)!) as { receipt: { payload: string } };
  return JSON.parse(Buffer.from(seal.receipt.payload, 'base64').toString('utf8')) as Receipt;
}

/** What `wrap` itself recorded: `[path, operation]` of its `file.changed` events, in order. */
function wrapChanges(pkg: string): [string, string][] {
  const rows: [string, string][] = [];
  for (const line of readFileSync(pkg, 'utf8').trim().split('\n')) {
    const payload = (JSON.parse(line) as { payload?: string }).payload;
    if (payload === undefined) continue;
    const { event } = JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as {
      event?: { type?: string; source?: string; changes?: { path: string; operation: string }[] };
    };
    if (event?.type !== 'file.changed' || event.source !== 'urn:tally:wrap') continue;
    for (const change of event.changes ?? []) rows.push([change.path, change.operation]);
  }
  return rows;
}

async function ok(p: Project, args: string[]) {
  const ran = await p.tally(args);
  assert.equal(ran.code, 0, `tally ${args.join(' ')} exited ${ran.code}:\n${ran.stderr}`);
  return ran;
}

const SCRIPT = [
  'set -e',
  'mkdir -p build/out/deep',
  'echo generated > build/out/deep/gen.js',
  "sed -i 's/1/2/' src/app.js",
  'rm README.md',
  'mv keep.txt moved.txt',
  'echo ignored > cache.log',
].join('\n');

describe('tally wrap', () => {
  it('outside a session: records the command and every change it made in a session of its own, sealed', async () => {
    const p = makeProject('tally-wrap-');
    await ok(p, ['init']);
    writeFileSync(join(p.root, '.gitignore'), '*.log\n.tally/\n');
    writeFileSync(join(p.root, 'keep.txt'), 'kept\n');
    writeFileSync(join(p.root, 'run.sh'), SCRIPT);
    const ran = await p.tally(['wrap', '--json', '--', 'sh', 'run.sh']);
    assert.equal(ran.code, 0, ran.stderr);
    const out = jsonOut(ran);
    assert.equal(out.exit_code, 0);
    assert.equal(out.skipped, 0);
    const receipt = receiptOf(String(out.package));
    const rows = receipt.files_written.map((r) => [r.path, r.operation, r.from ?? null]);
    assert.deepEqual(rows, [
      ['README.md', 'deleted', null],
      ['build/out/deep/gen.js', 'created', null],
      ['moved.txt', 'renamed', 'keep.txt'],
      ['src/app.js', 'modified', null],
    ]);
    for (const row of receipt.files_written) assert.ok(row.sources.includes('wrap'), JSON.stringify(row));
    assert.equal(receipt.processes.length, 1);
    assert.equal(receipt.processes[0]!.exit_code, 0);
    assert.equal(receipt.processes[0]!.command, 'sh run.sh');
    const verified = await p.tally(['verify', String(out.package), '--json']);
    assert.equal(verified.code, 0, verified.stdout);
  });

  it('propagates the exit code, and a signal as 128+n', async () => {
    const p = makeProject('tally-wrap-exit-');
    await ok(p, ['init']);
    await ok(p, ['session', 'start']);
    const secret = 'sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789';
    const failed = await p.tally(['wrap', '--', 'sh', '-c', `exit 7 # ${secret}`]);
    assert.equal(failed.code, 7);
    const killed = await p.tally(['wrap', '--', 'sh', '-c', 'kill -TERM $$']);
    assert.equal(killed.code, 128 + 15);
    const missing = await p.tally(['wrap', '--', 'no-such-command-anywhere']);
    assert.equal(missing.code, 127);
    // Found but not executable: 126, as the shell and env(1) say.
    writeFileSync(join(p.root, 'not-executable.sh'), '#!/bin/sh\necho ran\n', { mode: 0o644 });
    const notExecutable = await p.tally(['wrap', '--', './not-executable.sh']);
    assert.equal(notExecutable.code, 126, notExecutable.stderr);
    // Inside the open session: recorded into it, not sealed by wrap.
    const closed = jsonOut(await ok(p, ['session', 'close', '--json']));
    const receipt = receiptOf(String(closed.package));
    assert.deepEqual(
      receipt.processes.map((r) => r.exit_code),
      [7, 143, 127, 126],
    );
    // The command is recorded redacted: the key is in neither the records nor the receipt.
    const payloads = decodedPayloads(readFileSync(String(closed.package)));
    assert.ok(payloads.includes('exit 7'), 'the command was not recorded');
    assert.ok(!payloads.includes(secret), 'a secret was recorded unredacted');
  });

  it('Ctrl-C on the terminal reaches the command once, not twice', async () => {
    const p = makeProject('tally-wrap-ctrl-c-');
    await ok(p, ['init']);
    await ok(p, ['session', 'start']);
    // Exits with the number of SIGINTs it got: a second Ctrl-C is "quit now" to many programs.
    const counter = `let n = 0; process.on('SIGINT', () => n++); console.log('ready'); setTimeout(() => process.exit(n), 1500);`;
    const ran = await tallyOnPty(['wrap', '--', process.execPath, '-e', counter], [['ready', '\x03']], {
      cwd: p.root,
      env: p.env,
    });
    assert.equal(ran.code, 1, `${ran.screen}${ran.stderr}`);
  });

  for (const signal of ['SIGHUP', 'SIGQUIT'] as const)
    it(`${signal} to wrap (a terminal closed) is sent on to the command, and its own session is sealed`, async () => {
      const p = makeProject('tally-wrap-hup-');
      await ok(p, ['init']);
      const child = spawn(
        process.execPath,
        [
          TALLY_BIN,
          'wrap',
          '--json',
          '--',
          process.execPath,
          '-e',
          "console.log('ready'); setTimeout(() => {}, 5000)",
        ],
        { cwd: p.root, env: p.env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      const ended = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      await new Promise<void>((resolve) =>
        child.stdout.on('data', (d) => {
          stdout += d;
          if (stdout.includes('ready')) resolve();
        }),
      );
      child.kill(signal);
      const number = { SIGHUP: 1, SIGQUIT: 3 }[signal];
      assert.equal(await ended, 128 + number);
      const out = JSON.parse(stdout.slice(stdout.indexOf('{'))) as Record<string, unknown>;
      assert.equal(out.exit_code, 128 + number);
      const receipt = receiptOf(String(out.package));
      assert.deepEqual(
        receipt.processes.map((r) => r.exit_code),
        [128 + number],
      );
      const status = await p.tally(['session', 'status']);
      assert.match(status.stdout + status.stderr, /no open session/);
    });

  it('a wrap killed outright: the next one seals the session it left open, then records in its own', async () => {
    const p = makeProject('tally-wrap-killed-');
    await ok(p, ['init']);
    const child = spawn(
      process.execPath,
      [TALLY_BIN, 'wrap', '--', process.execPath, '-e', "console.log('ready'); setTimeout(() => {}, 30000)"],
      { cwd: p.root, env: p.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
    );
    const ended = new Promise((resolve) => child.on('close', resolve));
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (d) => String(d).includes('ready') && resolve()),
    );
    // wrap and its command, in a group of their own: both killed at once, nothing sealed.
    process.kill(-child.pid!, 'SIGKILL');
    await ended;
    const left = await p.tally(['session', 'status']);
    assert.doesNotMatch(left.stdout + left.stderr, /no open session/);
    const next = await ok(p, ['wrap', '--json', '--', 'true']);
    const sealed = /left open by a tally wrap that is gone \(pid (\d+)\), sealed: (\S+)/.exec(next.stderr);
    assert.ok(sealed, next.stderr);
    assert.equal(Number(sealed[1]), child.pid);
    assert.ok(existsSync(sealed[2]!));
    const out = jsonOut(next);
    assert.notEqual(out.package, sealed[2], 'the new run sealed a session of its own');
    assert.equal(receiptOf(String(out.package)).processes.length, 1);
    const status = await p.tally(['session', 'status']);
    assert.match(status.stdout + status.stderr, /no open session/);
  });

  it('a command the certificate forbids does not run and is recorded as denied', async () => {
    const p = makeProject('tally-wrap-deny-');
    await ok(p, ['init']);
    await ok(p, ['agent', 'register', '--name', 'coder', '--allow', 'Bash', '--forbid', 'Bash(rm -rf *)']);
    await ok(p, ['session', 'start', '--agent', 'coder']);
    mkdirSync(join(p.root, 'precious'));
    writeFileSync(join(p.root, 'precious/x'), 'x');
    const denied = await p.tally(['wrap', '--', 'rm', '-rf', 'precious']);
    assert.equal(denied.code, 1, denied.stderr);
    assert.ok(existsSync(join(p.root, 'precious/x')), 'the forbidden command ran');
    const closed = jsonOut(await ok(p, ['session', 'close', '--json']));
    const receipt = receiptOf(String(closed.package));
    assert.equal(receipt.processes.length, 0);
    assert.equal(receipt.decisions.filter((d) => d.decision === 'deny').length, 1);
  });

  it('a command that needs a person’s approval does not run: tally wrap has no one to ask', async () => {
    const p = makeProject('tally-wrap-ask-');
    await ok(p, ['init']);
    await ok(p, ['agent', 'register', '--name', 'coder', '--allow', 'Bash', '--escalate', 'Bash(rm *)']);
    await ok(p, ['session', 'start', '--agent', 'coder']);
    mkdirSync(join(p.root, 'precious'));
    writeFileSync(join(p.root, 'precious/x'), 'x');
    const asked = await p.tally(['wrap', '--', 'rm', '-rf', 'precious']);
    assert.equal(asked.code, 1, asked.stderr);
    assert.match(asked.stderr, /needs a person's approval/);
    assert.ok(existsSync(join(p.root, 'precious/x')), 'the command that needed approval ran');
    const closed = jsonOut(await ok(p, ['session', 'close', '--json']));
    const receipt = receiptOf(String(closed.package));
    assert.equal(receipt.decisions.filter((d) => d.decision === 'ask').length, 1);
    // Attempted, never run: no exit code, no process.exit record.
    assert.ok(
      receipt.processes.every((r) => r.exit_code === undefined),
      JSON.stringify(receipt.processes),
    );
    const verified = await p.tally(['verify', String(closed.package), '--certificate', 'coder', '--json']);
    assert.equal(verified.code, 0, verified.stdout + verified.stderr);
    const escalations = (
      jsonOut(verified).checks as {
        check: string;
        detail: { calls: { approved: boolean; blocked: boolean }[] };
      }[]
    ).find((c) => c.check === 'escalations')!;
    assert.deepEqual(
      escalations.detail.calls.map((c) => [c.approved, c.blocked]),
      [[false, true]],
      'the escalation was counted as approved',
    );
  });

  it('a file the command hides by its .gitignore is compared by its path, not taken as deleted', async () => {
    const p = makeProject('tally-wrap-hide-');
    await ok(p, ['init']);
    writeFileSync(join(p.root, '.gitignore'), '.tally/\n');
    writeFileSync(join(p.root, 'notes.txt'), 'notes\n');
    writeFileSync(join(p.root, 'kept.txt'), 'kept\n');
    await ok(p, ['session', 'start']);
    const script = 'echo changed > notes.txt; printf "notes.txt\\nkept.txt\\n" >> .gitignore';
    await ok(p, ['wrap', '--', 'sh', '-c', script]);
    // git's own view: both files are there, now ignored.
    assert.equal(git(p.root, 'check-ignore', 'notes.txt', 'kept.txt').trim(), 'notes.txt\nkept.txt');
    const closed = jsonOut(await ok(p, ['session', 'close', '--json']));
    assert.deepEqual(wrapChanges(String(closed.package)), [
      ['.gitignore', 'update'],
      ['notes.txt', 'update'],
    ]);
  });

  it('past the nested repositories listed, the rest of the tree is compared and what they hold is counted', async () => {
    const p = makeProject('tally-wrap-nested-');
    await ok(p, ['init']);
    // A file the index names, in a folder made a repository of its own after: compared by its path.
    mkdirSync(join(p.root, 'a100'));
    writeFileSync(join(p.root, 'a100', 'tracked.js'), 'one\n');
    git(p.root, 'add', 'a100/tracked.js');
    git(p.root, 'commit', '-qm', 'tracked');
    // 101 repositories that sort before the tree's files: `a000`…`a099` are listed, `a100` is not.
    for (let i = 0; i <= 100; i++) {
      const dir = join(p.root, `a${String(i).padStart(3, '0')}`);
      mkdirSync(dir, { recursive: true });
      git(dir, 'init', '-q');
    }
    const script =
      "echo in > a100/in.txt; echo two >> a100/tracked.js; echo new > z.txt; sed -i 's/1/2/' src/app.js";
    const ran = await p.tally(['wrap', '--json', '--', 'sh', '-c', script]);
    assert.equal(ran.code, 0, ran.stderr);
    const out = jsonOut(ran);
    assert.equal(out.skipped, 1);
    assert.deepEqual(wrapChanges(String(out.package)), [
      ['a100/tracked.js', 'update'],
      ['src/app.js', 'update'],
      ['z.txt', 'create'],
    ]);
  });

  it('a tree the command leaves uncomparable still gives its exit code and a sealed session', async () => {
    const p = makeProject('tally-wrap-fifo-');
    await ok(p, ['init']);
    // The command can write git's own files: a FIFO for the index stops git from listing the tree.
    const ran = await p.tally([
      'wrap',
      '--json',
      '--',
      'sh',
      '-c',
      'rm .git/index && mkfifo .git/index; exit 5',
    ]);
    assert.equal(ran.code, 5, ran.stderr);
    assert.match(ran.stderr, /\.git\/index is a FIFO/);
    const out = jsonOut(ran);
    assert.equal(out.exit_code, 5);
    assert.ok(existsSync(String(out.package)), 'the session of its own was not sealed');
    const status = await p.tally(['session', 'status']);
    assert.match(status.stdout + status.stderr, /no open session/);
    const verified = await p.tally(['verify', String(out.package), '--json']);
    const failed = (jsonOut(verified).checks as { check: string; ok: boolean }[]).filter((c) => !c.ok);
    assert.deepEqual(
      failed.map((c) => c.check),
      ['workspace_reconciled'],
    );
  });

  it('a file too large to read in the time given is reported unreadable, not waited for', async () => {
    const p = makeProject('tally-wrap-sparse-');
    await ok(p, ['init']);
    writeFileSync(join(p.root, '.gitignore'), '.tally/\n');
    await ok(p, ['session', 'start']);
    // A sparse file of a terabyte costs the command nothing; read whole, it would take hours.
    const script = 'truncate -s 1T big.bin && echo small > small.txt';
    const running = p.tally(['wrap', '--max-seconds', '1', '--json', '--', 'sh', '-c', script]);
    const ran = await Promise.race([running, sleep(120_000).then(() => 'hung' as const)]);
    assert.notEqual(ran, 'hung', 'tally wrap was still reading after 120 s');
    const out = jsonOut(ran as Awaited<typeof running>);
    assert.equal(out.exit_code, 0);
    // Past the time given nothing more is read: the tree is cut there, as by the limit, and the
    // paths after it (the small file among them) are counted, not compared.
    assert.deepEqual(out.unreadable, ['big.bin']);
    assert.ok(Number(out.skipped) >= 1, JSON.stringify(out));
    rmSync(join(p.root, 'big.bin'));
    const closed = jsonOut(await ok(p, ['session', 'close', '--json']));
    assert.deepEqual(wrapChanges(String(closed.package)), [['big.bin', 'create']]);
  });

  it('a command that closes the session it runs in: its own exit code, and what it did after said unrecorded', async () => {
    const p = makeProject('tally-wrap-closes-');
    await ok(p, ['init']);
    const tally = `"${process.execPath}" "${TALLY_BIN}"`;
    const script = `echo a > before.txt && ${tally} session close >/dev/null && echo b > after.txt; exit 3`;
    // In a session the user opened, then in wrap's own.
    await ok(p, ['session', 'start']);
    const inOpen = await p.tally(['wrap', '--json', '--', 'sh', '-c', script]);
    assert.equal(inOpen.code, 3, inOpen.stderr);
    assert.match(inOpen.stderr, /was closed while the command ran/);
    assert.equal(jsonOut(inOpen).compared, false);
    const own = await p.tally(['wrap', '--json', '--', 'sh', '-c', script.replace(/before|after/g, 'x$&')]);
    assert.equal(own.code, 3, own.stderr);
    const out = jsonOut(own);
    assert.ok(existsSync(String(out.package)), 'the package its close sealed is named');
    const verified = await p.tally(['verify', String(out.package), '--json']);
    assert.equal(verified.code, 0, verified.stdout);
  });

  it('refuses a missing command and a bad --max-files or --max-seconds, naming the flag', async () => {
    const p = makeProject('tally-wrap-usage-');
    const none = await p.tally(['wrap']);
    assert.equal(none.code, 2);
    const bad = await p.tally(['wrap', '--max-files', 'lots', '--', 'true']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--max-files/);
    const zero = await p.tally(['wrap', '--max-seconds', '0', '--', 'true']);
    assert.equal(zero.code, 2);
    assert.match(zero.stderr, /--max-seconds/);
  });
});
