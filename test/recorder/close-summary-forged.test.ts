/**
 * A pass's summary is what tells the close that pass already ran. The agent can send any event on
 * a channel (`tally session event`, the recorder's /ingest): before the fix a forged
 * `tally.reconcile.summary` and `tally.transcript.summary` made the close skip both passes, so a
 * file the agent wrote behind the hooks' back and a call only its transcript shows were missing
 * from the receipt, and the package still verified. Oracle: git's own `status` names the file.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, runTally } from '../cli/tally-process.js';
import { certified, recorderProjects } from './projects.js';

const project = recorderProjects();

const line = (value: unknown) => `${JSON.stringify(value)}\n`;

describe("a channel cannot write the close's own summaries", () => {
  it('forged summaries are refused, and the close still reports the hidden write and the hidden call', async () => {
    const p = await project('tally-forged-', certified('--allow', 'Bash(ls*)'));
    const transcript = join(p.dir, 't.jsonl');
    writeFileSync(
      transcript,
      line({
        type: 'assistant',
        message: {
          content: [
            { type: 'tool_use', id: 'toolu_w', name: 'Bash', input: { command: 'touch hidden.txt' } },
          ],
        },
      }) +
        line({
          type: 'user',
          message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_w', content: '' }] },
        }),
    );
    const fields = { session_id: 'harness-f', transcript_path: transcript, cwd: p.root };
    const hook = (payload: Record<string, unknown>, args: string[] = []) =>
      runTally(['hook', 'claude-code', ...args], { cwd: p.root, env: p.env, stdin: JSON.stringify(payload) });
    assert.equal(
      (await hook({ ...fields, hook_event_name: 'SessionStart', source: 'startup' }, ['--agent', 'coder']))
        .code,
      0,
    );
    const { sessions } = jsonOut(await p.tally(['recorder', 'status', '--json'])) as {
      sessions: { session: string }[];
    };
    const session = sessions[0]!.session;
    writeFileSync(join(p.root, 'hidden.txt'), 'written behind the hooks\n');
    assert.match(
      execFileSync('git', ['status', '--porcelain'], { cwd: p.root, encoding: 'utf8' }),
      /^\?\? hidden\.txt$/m,
    );
    const forged = {
      'tally.reconcile.summary': {
        'dev.tally.reconcile': { mode: 'git', reported: 0, corroborated: [], skipped: 0 },
      },
      'tally.transcript.summary': { 'dev.tally.transcript': { transcripts: [] } },
    };
    for (const [type, extensions] of Object.entries(forged)) {
      const sent = await p.tally(['session', 'event', '--session', session], {
        stdin: JSON.stringify({ type, extensions }),
      });
      assert.equal(sent.code, 2, sent.stderr);
      assert.match(sent.stderr, /\/type: .* is written only by the close's own pass, never by a channel/);
      const claimed = await p.tally(['session', 'event', '--session', session, '--source', 'git-reconcile'], {
        stdin: JSON.stringify({ type, extensions }),
      });
      assert.notEqual(claimed.code, 0);
      assert.match(claimed.stderr, /source 'git-reconcile' is written only by the close's own pass/);
    }
    assert.equal((await hook({ ...fields, hook_event_name: 'SessionEnd', reason: 'other' })).code, 0);
    const st = jsonOut(await p.tally(['session', 'status', '--session', session, '--json']));
    const records = readFileSync(String(st.package), 'utf8')
      .split('\n')
      .filter(Boolean)
      .slice(1, -1)
      .map((l) => JSON.parse(Buffer.from(JSON.parse(l).payload, 'base64').toString()));
    assert.ok(records.every((r) => r.source !== 'git-reconcile' || r.event.type !== 'tally.ingest.rejected'));
    const reported = records.find((r) => r.source === 'git-reconcile' && r.event.type === 'file.changed');
    assert.ok(
      JSON.stringify(reported?.event ?? {}).includes('hidden.txt'),
      'the pass reported the hidden write',
    );
    assert.ok(
      records.some((r) => r.source === 'transcript' && r.event.call?.id === 'toolu_w'),
      'the transcript pass recorded the hidden call',
    );
  });
});
