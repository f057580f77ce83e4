/**
 * The spool's lines against a writer that did not finish: a shim killed while it wrote a large
 * payload leaves its line cut short (seen with a real kill -9 of the shim mid-write), and a shim
 * that opened the spool before the recorder took it goes on writing into the file taken. Neither
 * may cost a spooled event: the real shim, the real recorder and the real spool file.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, type Project, runTally, TALLY_BIN } from '../cli/tally-process.js';
import { packageRecords } from '../evidence/forge.js';
import { recorderProjects } from './projects.js';

const project = recorderProjects();

async function started(): Promise<{ p: Project; id: string; spool: string }> {
  const p = await project('tally-spool-torn-', [['init']], 5000);
  const id = jsonOut(await p.tally(['session', 'start', '--json'])).session as string;
  return { p, id, spool: join(p.home, 'spool') };
}

function pre(p: Project, call: string, command: string) {
  return {
    session_id: 'harness-1',
    transcript_path: join(p.dir, 't.jsonl'),
    cwd: p.root,
    hook_event_name: 'PreToolUse',
    tool_name: 'Bash',
    tool_input: { command },
    tool_use_id: call,
  };
}

/** The call ids of the tool.before records a sealed package holds, in order. */
function calls(pkg: string): string[] {
  return packageRecords(readFileSync(pkg))
    .filter((r) => r.event.type === 'tool.before')
    .map((r) => String((r.event as { call?: { id?: string } }).call?.id));
}

describe('the spool against a writer that did not finish', () => {
  it('a line a killed shim left cut short does not swallow the next spooled event', async () => {
    const { p, id, spool } = await started();
    // What a shim killed in the middle of writing a large payload leaves: the start of its line.
    const cut = JSON.stringify({
      id: 'evt_cut_1',
      received_at: new Date().toISOString(),
      channel: 'claude-code',
      session: id,
      payload: pre(p, 'cut', `ls ${'x'.repeat(4096)}`),
    }).slice(0, 3000);
    mkdirSync(spool, { recursive: true, mode: 0o700 });
    writeFileSync(join(spool, 'claude-code.jsonl'), cut, { mode: 0o600 });
    // The next hook while the recorder is down: spooled by the real shim.
    const shim = await runTally(['hook', 'claude-code'], {
      cwd: p.root,
      env: { ...p.env, TALLY_SESSION: id },
      stdin: JSON.stringify(pre(p, 'after-cut', 'ls after')),
    });
    assert.match(shim.stderr, /spooled/);
    const closed = jsonOut(await p.tally(['session', 'close', '--session', id, '--json']));
    assert.deepEqual(calls(String(closed.package)), ['after-cut'], 'the spooled event is recorded');
    assert.equal((await p.tally(['verify', String(closed.package)])).code, 0);
  });

  it('a line still being written when the recorder takes the spool is recorded whole, once', async () => {
    const { p, id, spool } = await started();
    const line = `\n${JSON.stringify({
      id: 'evt_slow_1',
      received_at: new Date().toISOString(),
      channel: 'claude-code',
      session: id,
      payload: pre(p, 'slow', 'ls slow'),
    })}\n`;
    const whole = await runTally(['hook', 'claude-code'], {
      cwd: p.root,
      env: { ...p.env, TALLY_SESSION: id },
      stdin: JSON.stringify(pre(p, 'first', 'ls first')),
    });
    assert.match(whole.stderr, /spooled/);
    // A shim that opened the spool (as a shim does, to append) and has written half of its line.
    const fd = openSync(join(spool, 'claude-code.jsonl'), 'a');
    writeSync(fd, line.slice(0, 200));
    // A recorder starts meanwhile and takes the spool; once it answers, it has ingested it.
    const recorder = spawn(process.execPath, [TALLY_BIN, 'recorder', 'run', '--ready'], {
      env: p.env,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const exited = new Promise((done) => recorder.once('exit', done));
    await new Promise((ready) => recorder.stdout.once('data', ready));
    assert.equal((await p.tally(['recorder', 'status'])).code, 0);
    // The rest of the line goes where the shim's descriptor points: the file the recorder took.
    writeSync(fd, line.slice(200));
    closeSync(fd);
    await p.tally(['recorder', 'stop']);
    await exited;
    // The close starts the recorder again: the spool names the session.
    const closed = jsonOut(await p.tally(['session', 'close', '--session', id, '--json']));
    assert.deepEqual(calls(String(closed.package)), ['first', 'slow']);
    assert.deepEqual(readdirSync(spool), [], 'nothing is left in the spool');
    assert.equal((await p.tally(['verify', String(closed.package)])).code, 0);
  });
});
