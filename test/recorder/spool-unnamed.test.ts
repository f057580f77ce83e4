/**
 * A payload a shim spooled without naming a session (no `tally run` set one, no recorder was up to
 * ask) belongs to the session open for its project. `tally session close` has the recorder ingest
 * the spool before it seals when a line may be this session's: one that names it, or one that names
 * none. Before, only lines naming the session were looked for, and the package was sealed without
 * the spooled call. Oracle: the call the shim spooled (its tool_use_id) is in the sealed package.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { decodedPayloads, jsonOut, runTally } from '../cli/tally-process.js';
import { recorderProjects } from './projects.js';

const project = recorderProjects();

describe('a spooled payload that names no session', () => {
  it('is ingested into the session open for its project before that session is sealed', async () => {
    const p = await project('tally-spool-unnamed-', [['init'], ['session', 'start']]);
    // No recorder is up and none is started for a PreToolUse: the shim spools it, naming no session.
    const payload = {
      session_id: 'harness-s',
      cwd: p.root,
      transcript_path: join(p.dir, 'none.jsonl'),
      hook_event_name: 'PreToolUse',
      tool_name: 'Write',
      tool_input: { file_path: join(p.root, 'src/new.js'), content: 'x' },
      tool_use_id: 'toolu_spooled_1',
    };
    const hook = await runTally(['hook', 'claude-code'], {
      cwd: p.root,
      env: p.env,
      stdin: JSON.stringify(payload),
    });
    assert.equal(hook.code, 0, hook.stderr);
    const spool = readFileSync(join(String(p.env.TALLY_HOME), 'spool', 'claude-code.jsonl'), 'utf8');
    assert.match(spool, /toolu_spooled_1/);
    assert.doesNotMatch(spool, /"session":/);
    const closed = await p.tally(['session', 'close', '--json']);
    assert.equal(closed.code, 0, closed.stderr);
    const pkg = readFileSync(String(jsonOut(closed).package));
    assert.match(decodedPayloads(pkg), /toolu_spooled_1/, 'the spooled call is not in the package');
  });
});
