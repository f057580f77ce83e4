/**
 * The transcript pass killed before its summary, and run again. Each use it recorded is recorded
 * once, by its call id: the rerun does not record again what the dead attempt recorded whole. A
 * use the dead attempt could only begin (no result yet) gets its end from the rerun, still seen
 * only in the transcript: the dead attempt's record of it is the transcript's word, not a channel's.
 * Oracle: the transcript the test wrote, and the records the store holds.
 */
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { reconcileTranscripts, rememberTranscript } from '../../src/session/transcripts.js';
import { openFixture } from '../boundary/fixture.js';

const SESSION = 'ses_20260101T000000Z_0000beef';

function line(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

function used(id: string): string {
  const input = { file_path: `${id}.txt` };
  return line({ type: 'assistant', message: { content: [{ type: 'tool_use', id, name: 'Write', input }] } });
}

function result(id: string): string {
  return line({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: id }] } });
}

describe('transcript pass: a close killed before its summary, and the pass run again', () => {
  it('what the dead attempt recorded whole is not recorded again; a use it began ends seen only in the transcript', async () => {
    // Killed once the second record is durable: `whole` ended, `begun` begun, no summary.
    let left = 2;
    const f = await openFixture(null, null, {
      onRecorded: () => {
        if (--left === 0) throw new Error('killed');
      },
    });
    try {
      const state = join(f.dir, 'state');
      mkdirSync(join(state, 'sessions', SESSION), { recursive: true });
      const transcript = join(f.dir, 'h1.jsonl');
      writeFileSync(transcript, used('whole') + result('whole') + used('begun'));
      rememberTranscript(state, SESSION, { harness: 'claude-code', harness_session: 'h1', path: transcript });
      const pass = async () =>
        reconcileTranscripts({ state, session: SESSION, records: await f.records(), boundary: f.boundary });
      await assert.rejects(pass(), /killed/);
      appendFileSync(transcript, result('begun'));
      await pass();
      const uses = (await f.records())
        .filter((r) => r.source === 'transcript' && r.event.type.startsWith('tool.'))
        .map((r) => {
          const call = (r.event.call as { id: string }).id;
          const seen = (r.event.extensions as Record<string, { seen_only_in_transcript: boolean }>)[
            'dev.tally.transcript'
          ]!.seen_only_in_transcript;
          return [call, r.event.type, seen];
        });
      assert.deepEqual(uses, [
        ['whole', 'tool.after', true],
        ['begun', 'tool.before', true],
        ['begun', 'tool.after', true],
      ]);
    } finally {
      await f.close();
    }
  });
});
