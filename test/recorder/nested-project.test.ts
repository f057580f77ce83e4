/**
 * A project nested in another project's repository: repository A with its own `.tally/`, and
 * repository B (its own `.git` and `.tally/`) inside it at `sub/b`, a session open in each at once
 * and one recorder for both. Oracles: which session the recorder says each harness session joined,
 * and the receipts of both packages, each verified.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, type Project, runTally } from '../cli/tally-process.js';
import { git, packageReceipt } from '../session/fixture.js';
import { recorderProjects } from './projects.js';

const project = recorderProjects();

function hook(p: Project, cwd: string, payload: Record<string, unknown>): Promise<void> {
  return runTally(['hook', 'claude-code'], { cwd, env: p.env, stdin: JSON.stringify(payload) }).then((ran) =>
    assert.equal(ran.code, 0, ran.stderr),
  );
}

function rows(pkg: string): [string, string, string[]][] {
  return packageReceipt(readFileSync(pkg)).files_written.map((row) => [
    row.path,
    row.operation,
    [...row.sources].sort(),
  ]);
}

describe('a project nested in another project', () => {
  it("each session gets its own project's events; the outer close reports the inner changes once, as no channel's", async () => {
    const a = await project('tally-nested-project-', []);
    const b = join(a.root, 'sub', 'b');
    mkdirSync(b, { recursive: true });
    writeFileSync(join(b, 'b.txt'), 'b\n');
    git(b, 'init', '-q');
    assert.equal((await a.tally(['init'])).code, 0);
    assert.equal((await a.tally(['init'], { cwd: b })).code, 0);
    git(b, 'add', '.');
    git(b, 'commit', '-qm', 'b');
    git(a.root, 'add', '.tally');
    git(a.root, 'commit', '-qm', 'tally');
    const sessionA = String(jsonOut(await a.tally(['session', 'start', '--json'])).session);
    const sessionB = String(jsonOut(await a.tally(['session', 'start', '--json'], { cwd: b })).session);
    const event = (cwd: string, harness: string, name: string, extra: Record<string, unknown> = {}) => ({
      session_id: harness,
      transcript_path: join(a.dir, `${harness}.jsonl`),
      cwd,
      hook_event_name: name,
      ...extra,
    });
    const write = (file: string, id: string) => ({
      tool_name: 'Write',
      tool_input: { file_path: file, content: 'hook\n' },
      tool_response: { filePath: file },
      tool_use_id: id,
    });
    await hook(a, a.root, event(a.root, 'ha', 'SessionStart', { source: 'startup' }));
    await hook(a, b, event(b, 'hb', 'SessionStart', { source: 'startup' }));
    writeFileSync(join(b, 'new.txt'), 'hook\n');
    await hook(a, b, event(b, 'hb', 'PostToolUse', write(join(b, 'new.txt'), 'tb1')));
    writeFileSync(join(b, 'b.txt'), 'b\nchanged by a shell command\n'); // no hook saw it
    writeFileSync(join(a.root, 'x.txt'), 'hook\n');
    await hook(a, a.root, event(a.root, 'ha', 'PostToolUse', write(join(a.root, 'x.txt'), 'ta1')));
    // A harness session first seen in B, from a folder below B's top: B's.
    mkdirSync(join(b, 'deep'));
    await hook(a, join(b, 'deep'), event(join(b, 'deep'), 'hc', 'UserPromptSubmit', { prompt: 'hi' }));
    const held = jsonOut(await a.tally(['recorder', 'status', '--json'])).sessions as {
      session: string;
      root: string;
      harness_sessions: string[];
    }[];
    assert.deepEqual(
      held.map((s) => [s.session, s.root, s.harness_sessions]).sort(),
      [
        [sessionA, a.root, ['ha']],
        [sessionB, b, ['hb', 'hc']],
      ].sort(),
    );
    const pkgB = String(jsonOut(await a.tally(['session', 'close', '--json'], { cwd: b })).package);
    const pkgA = String(jsonOut(await a.tally(['session', 'close', '--json'])).package);
    for (const pkg of [pkgA, pkgB]) {
      const verified = await a.tally(['verify', pkg]);
      assert.equal(verified.code, 0, verified.stdout + verified.stderr);
    }
    // B's pass sees B alone; its hook saw new.txt, the pass alone b.txt.
    assert.deepEqual(rows(pkgB), [
      ['b.txt', 'modified', ['git-reconcile']],
      ['new.txt', 'created', ['git-reconcile', 'hook']],
    ]);
    // A's pass sees B's files as files of A's tree, each once, reported by no channel of A's
    // session (B's hook is not A's); B's package, written under B's `.tally/`, is one of them.
    assert.deepEqual(rows(pkgA), [
      [`sub/b/.tally/packages/${sessionB}.tally`, 'created', ['git-reconcile']],
      ['sub/b/b.txt', 'modified', ['git-reconcile']],
      ['sub/b/new.txt', 'created', ['git-reconcile']],
      ['x.txt', 'created', ['git-reconcile', 'hook']],
    ]);
  });
});
