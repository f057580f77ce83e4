/**
 * The close's transcript pass names a subagent as the hooks named it: a tool use only a nested
 * subagent's transcript shows (Claude Code's `<session>/subagents/agent-<id>.jsonl`, lines shaped as
 * in test/agents/fixtures/claude-code/nested-subagent) is recorded under that subagent's type and the
 * parent its hook records carry, not as an untyped child of the session.
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { reconcileTranscripts, rememberTranscript } from '../../src/session/transcripts.js';
import { certificateFor, openFixture } from '../boundary/fixture.js';

const SESSION = 'ses_20260101T000000Z_0000beef';

function line(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

describe('transcript pass: subagent attribution', () => {
  it("a use only B's transcript shows is B's, under A, with B's type", async () => {
    const f = await openFixture(certificateFor({ allow: ['Write'] }), null);
    try {
      const state = join(f.dir, 'state');
      mkdirSync(join(state, 'sessions', SESSION), { recursive: true });
      const transcript = join(f.dir, 'h1.jsonl');
      writeFileSync(transcript, '');
      mkdirSync(join(f.dir, 'h1', 'subagents'), { recursive: true });
      const side = { isSidechain: true, agentId: 'agent-b', sessionId: 'h1' };
      writeFileSync(
        join(f.dir, 'h1', 'subagents', 'agent-agent-b.jsonl'),
        line({
          ...side,
          type: 'assistant',
          message: {
            model: 'claude-haiku-5-5',
            content: [{ type: 'tool_use', id: 'toolu_b', name: 'Write', input: { file_path: 'g.txt' } }],
          },
        }) +
          line({
            ...side,
            type: 'user',
            message: { content: [{ type: 'tool_result', tool_use_id: 'toolu_b' }] },
          }),
      );
      rememberTranscript(state, SESSION, {
        harness: 'claude-code',
        harness_session: 'h1',
        path: transcript,
        event_source: 'urn:tally:claude-code',
      });
      const b = { name: 'general-purpose', instance: 'agent-b', parent: 'agent-a', harness: 'claude-code' };
      await f.boundary.observe(
        {
          type: 'dev.tally.agent.start',
          session: { id: 'h1', agent: { id: 'agent-b', type: 'general-purpose' } },
        },
        { source: 'hook', agent: b },
      );
      await reconcileTranscripts({
        state,
        session: SESSION,
        records: await f.records(),
        boundary: f.boundary,
      });
      const fromTranscript = (await f.records()).filter(
        (r) => r.source === 'transcript' && r.event.type.startsWith('tool.'),
      );
      assert.equal(fromTranscript.length, 1);
      assert.deepEqual(fromTranscript[0]!.agent, b);
    } finally {
      await f.close();
    }
  });
});
