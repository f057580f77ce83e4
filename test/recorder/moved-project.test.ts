/**
 * An agent that moves its whole project while its session is open (the recorder holding the
 * session's log): the run still seals the session, where the project is now; the log's lock goes
 * with the recorder's hold instead of staying behind in the moved folder; and the receipt says the
 * workspace could not be compared with the start (the recorded root is gone), so it does not
 * claim a completeness it cannot show. Oracles: the kernel's rename (the folder moved under the
 * open log), git, and `tally verify`'s own check list.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject } from '../cli/tally-process.js';
import { runAgentScript } from './agent-script.js';

describe('a project moved while its session is held', () => {
  it('is sealed where it went, its lock released, and its receipt says the start root is gone', async () => {
    const p = makeProject('tally-moved-');
    assert.equal((await p.tally(['init'])).code, 0);
    const moved = join(p.dir, 'moved-repo');
    // The "agent": writes a file, then moves the project (its own working folder) elsewhere.
    const run = runAgentScript(
      p,
      ['#!/bin/sh', 'echo new > made.txt', `mv '${p.root}' '${moved}'`].join('\n'),
    );
    let stderr = '';
    run.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    run.stdout.resume();
    const code = await new Promise<number | null>((resolve) => run.on('close', resolve));
    const status = jsonOut(await p.tally(['recorder', 'status', '--json'], { cwd: p.dir }));
    await p.tally(['recorder', 'stop'], { cwd: p.dir });

    assert.doesNotMatch(stderr, /could not be sealed/, stderr);
    const sealed = /(\d+) records sealed in (.*\.tally)\n/.exec(stderr);
    assert.ok(sealed, stderr);
    assert.ok(sealed[2]!.startsWith(join(moved, '.tally', 'packages')), sealed[2]);
    assert.ok(existsSync(sealed[2]!));
    // The package did not verify (below): the run says so with its exit code.
    assert.equal(code, 1, stderr);
    // The recorder let the session go, and no lock is left in the moved session's folder.
    assert.deepEqual(status.sessions, []);
    const sessions = join(moved, '.tally', 'sessions');
    for (const id of readdirSync(sessions))
      assert.deepEqual(
        readdirSync(join(sessions, id)).filter((f) => f.includes('.lock')),
        [],
        `a lock left in ${id}`,
      );
    // A close in the new place finds nothing open (the session is sealed), at once.
    const again = await p.tally(['session', 'close', '--json'], { cwd: moved });
    assert.doesNotMatch(again.stderr + again.stdout, /locked by process/);

    const verified = await p.tally(['verify', sealed[2]!, '--json'], { cwd: moved });
    const checks = jsonOut(verified).checks as {
      check: string;
      ok: boolean;
      code?: string;
      detail?: unknown;
    }[];
    const reconciled = checks.find((c) => c.check === 'workspace_reconciled')!;
    assert.equal(reconciled.ok, false);
    assert.match(JSON.stringify(reconciled), new RegExp(`${p.root.replaceAll('/', '\\/')} is no longer`));
    // Said to a person with where in the log it was found: a record, not a byte.
    const human = await p.tally(['verify', sealed[2]!], { cwd: moved });
    assert.match(human.stdout, /✗ workspace_reconciled +reconcile-failed: .* \(seq \d+\)\n/);
    assert.ok(
      checks
        .filter((c) => c.check !== 'workspace_reconciled' && c.check !== 'harness_reported')
        .every((c) => c.ok),
      JSON.stringify(checks.filter((c) => !c.ok)),
    );
  });
});
