/**
 * Commands the agent can type into later. Codex's `exec_command` keeps a process running and its
 * `write_stdin` sends it text with no hook of its own (measured with the pinned Codex: a
 * `write_stdin` into `exec_command {cmd: "bash", tty: true}` created a file under a forbidden
 * folder, and no PreToolUse fired for it; into a session without `tty`, Codex answered "stdin is
 * closed for this session"). Oracles: those measurements and what the programs do with their
 * input (bash with no script reads commands from it; `less` runs `!cmd`; `git log` pages on a
 * terminal; `echo` and `ls` read nothing), against the certificate of that finding.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type ActionPolicy, evaluateAction } from '../../src/evidence/policy/patterns.js';

const POLICY: ActionPolicy = {
  allow: ['Bash', 'Write(*.txt)', 'Edit(*.txt)'],
  forbid: ['Write(protected/**)'],
  escalate: [],
};
const exec = (cmd: string, tty?: boolean) => ({
  tool: 'exec_command',
  input: { command: cmd, ...(tty === undefined ? {} : { tty }) },
});

describe('a command the agent can type into later is opaque', () => {
  it('on a terminal, anything not known to ignore it', () => {
    for (const cmd of ['bash', 'sh -i', 'python3', 'git log', 'less README.md', 'vim a.txt', 'npm init']) {
      const v = evaluateAction(POLICY, exec(cmd, true));
      assert.equal(v.verdict, 'escalate', cmd);
      assert.match(String(v.reason), /type into later/, cmd);
      assert.equal(evaluateAction({ ...POLICY, opaqueShell: 'deny' }, exec(cmd, true)).verdict, 'forbidden');
    }
    for (const cmd of ['echo ok > ok.txt', 'ls -la', 'cat README.md | wc -l', 'cd src && grep -r x .'])
      assert.equal(evaluateAction(POLICY, exec(cmd, true)).verdict, 'allowed', cmd);
    // What the line itself shows is still judged first.
    assert.equal(evaluateAction(POLICY, exec('echo x > protected/a', true)).verdict, 'forbidden');
  });

  it('without a terminal, the programs that read commands from their input', () => {
    for (const cmd of [
      'bash',
      'sh -s',
      'python3',
      'node -i app.js',
      'ed a.txt',
      'git rebase -i HEAD~2',
      'sqlite3 db',
      'sudo -s',
      'su',
      'su - root',
      'chroot /srv/jail',
      'timeout 60 bash',
    ])
      assert.equal(evaluateAction(POLICY, exec(cmd, false)).verdict, 'escalate', cmd);
    for (const cmd of [
      'bash build.sh',
      'python3 -m http.server',
      'git log',
      'npm test',
      'bash -c "echo x > y.txt"',
      'sudo ls',
      'env',
    ])
      assert.equal(evaluateAction(POLICY, exec(cmd)).verdict, 'allowed', cmd);
  });

  it('only for tools whose processes take later input, and only where a forbid could apply', () => {
    // Claude Code's Bash takes no input after the call.
    assert.equal(evaluateAction(POLICY, { tool: 'Bash', input: { command: 'bash' } }).verdict, 'allowed');
    // A certificate with nothing to hide from lets its allows decide.
    const open: ActionPolicy = { allow: ['Bash'], forbid: [], escalate: [] };
    assert.equal(evaluateAction(open, exec('bash', true)).verdict, 'allowed');
  });
});
