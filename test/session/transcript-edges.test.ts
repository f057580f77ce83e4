/**
 * The transcript witness at its edges (docs/reconcile.md): a use only one harness session's
 * transcript shows is that harness session's agent's; another harness's transcript format is said
 * unread, not read as empty (the real Qwen Code transcript of the fixtures holds two calls); a
 * transcript past the byte budget has its first part read; a transcript of more uses than a close
 * records has the rest counted, not recorded.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { readTranscript } from '../../src/capture/claude-code/transcript.js';
import {
  reconcileTranscripts,
  rememberTranscript,
  TRANSCRIPT_MAX_RECORDED,
} from '../../src/session/transcripts.js';
import { openFixture } from '../boundary/fixture.js';
import { tempDir } from '../temp.js';

const SESSION = 'ses_20260101T000000Z_0000beef';
const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const use = (id: string, input: Record<string, unknown> = { file_path: `${id}.txt` }) =>
  line({ type: 'assistant', message: { content: [{ type: 'tool_use', id, name: 'Write', input }] } });
const result = (id: string) =>
  line({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: id, content: 'ok' }] } });

type Fixture = Awaited<ReturnType<typeof openFixture>>;

/**
 * The close's transcript pass over `entry` (one transcript a harness named) in a session of the
 * fixture: what it recorded, and its summary's entry for that transcript.
 */
async function witnessed(
  f: Fixture,
  entry: { harness: string; harness_session: string; path: string },
): Promise<{ recorded: number | undefined; summary: Record<string, unknown> }> {
  const state = join(f.dir, 'state');
  mkdirSync(join(state, 'sessions', SESSION), { recursive: true });
  rememberTranscript(state, SESSION, entry);
  const done = await reconcileTranscripts({
    state,
    session: SESSION,
    records: await f.records(),
    boundary: f.boundary,
  });
  const record = (await f.records()).find((r) => r.event.type === 'tally.transcript.summary')!;
  const extensions = record.event.extensions as Record<string, { transcripts: Record<string, unknown>[] }>;
  return { recorded: done?.recorded, summary: extensions['dev.tally.transcript']!.transcripts[0]! };
}

describe('the transcript witness at its edges', () => {
  it("a use only h2's transcript shows is h2's agent, not the first harness session's", async () => {
    const f = await openFixture(null, null);
    try {
      // Two Claude Code sessions in one Tally session (a second terminal, or `/clear`): h1 then h2.
      const h1 = { name: 'claude-code', instance: 'h1', harness: 'claude-code' };
      await f.boundary.observe({ type: 'user.prompt', session: { id: 'h1' } }, { source: 'hook', agent: h1 });
      const t2 = join(f.dir, 'h2.jsonl');
      writeFileSync(t2, use('toolu_h2') + result('toolu_h2'));
      await witnessed(f, { harness: 'claude-code', harness_session: 'h2', path: t2 });
      const seen = (await f.records()).find(
        (r) => r.source === 'transcript' && r.event.type === 'tool.after',
      );
      assert.equal((seen!.event.session as { id: string }).id, 'h2', 'the event names h2');
      assert.equal(seen!.agent?.instance, 'h2', `attributed to ${JSON.stringify(seen!.agent)}`);
    } finally {
      await f.close();
    }
  });

  it("a Qwen Code transcript's tool calls are not summarised as 'read, 0 tool uses'", async () => {
    // The real Qwen Code chat recorded in test/agents/fixtures (two functionCall parts, each answered).
    const fixture = fileURLToPath(
      new URL(
        '../../../test/agents/fixtures/qwen-code/write-shell/files/.qwen/projects/-home-user-project/chats/ee4d16f0-4482-485c-9f70-ae6be915d3c9.jsonl',
        import.meta.url,
      ),
    );
    const f = await openFixture(null, null);
    try {
      const chats = join(f.dir, 'chats');
      mkdirSync(chats);
      const transcript = join(chats, basename(fixture));
      copyFileSync(fixture, transcript);
      // What server.ts does for every Claude-family hook that carries transcript_path (Qwen's included).
      const { summary } = await witnessed(f, {
        harness: 'qwen-code',
        harness_session: 'q1',
        path: transcript,
      });
      // Its format is not read: the summary says so rather than "read, no tool use".
      assert.equal(summary.files, 0, JSON.stringify(summary));
      assert.match(JSON.stringify(summary.unread), /the qwen-code transcript format is not read/);
    } finally {
      await f.close();
    }
  });

  it('a transcript past the byte budget still has its first part read (docs: "what is past 256 MiB … is not read")', async () => {
    const transcript = join(tempDir('tally-transcript-budget-'), 'big.jsonl');
    // 10 uses, then padding that takes the file past the (scaled-down) budget.
    let text = '';
    for (let i = 0; i < 10; i++) text += use(`toolu_${i}`) + result(`toolu_${i}`);
    text += line({ type: 'attachment', pad: 'x'.repeat(8192) });
    writeFileSync(transcript, text);
    const reading = readTranscript(transcript, 4096);
    assert.equal(reading.uses.length, 10, `read: ${JSON.stringify(reading.unread)}`);
    assert.ok(reading.uses.every((u) => u.result !== undefined));
    assert.match(reading.unread[0]?.reason ?? '', /read up to byte \d+ only/);
  });

  it("records at most the close's bound of uses and counts the rest whole", async () => {
    const f = await openFixture(null, null);
    try {
      const over = TRANSCRIPT_MAX_RECORDED + 3;
      const blocks = Array.from({ length: over }, (_, i) => ({
        type: 'tool_use',
        id: `t${i}`,
        name: 'W',
        input: {},
      }));
      const transcript = join(f.dir, 'flood.jsonl');
      writeFileSync(transcript, line({ type: 'assistant', message: { content: blocks } }));
      const { recorded, summary } = await witnessed(f, {
        harness: 'claude-code',
        harness_session: 'h1',
        path: transcript,
      });
      assert.equal(recorded, TRANSCRIPT_MAX_RECORDED);
      assert.equal(summary.tool_uses, over);
      assert.equal(summary.unrecorded_count, 3);
    } finally {
      await f.close();
    }
  });
});
