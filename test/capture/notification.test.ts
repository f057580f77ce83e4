/**
 * A harness's Notification becomes AHP's `user.attention`, valid against the AHP event schema
 * (attention: kind, and title and message as text parts). The Qwen Code payload is the one the
 * pinned CLI sends once per session after signing in (`notification_type: "auth_success"`); before,
 * every such event was recorded as `tally.ingest.rejected`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateEvent } from '../../src/ahp/messages/index.js';
import { prepareEvent } from '../../src/boundary/prepare.js';
import { adapterOf } from '../../src/capture/adapters.js';

const cases: [string, Record<string, unknown>, { kind: string; title: string; message: string }][] = [
  [
    'qwen-code',
    {
      session_id: 's1',
      cwd: '/repo',
      hook_event_name: 'Notification',
      notification_type: 'auth_success',
      message: 'Signed in',
    },
    { kind: 'auth_success', title: 'Notification', message: 'Signed in' },
  ],
  [
    'claude-code',
    {
      session_id: 's2',
      cwd: '/repo',
      transcript_path: '/repo/t.jsonl',
      hook_event_name: 'Notification',
      title: 'Permission needed',
      message: 'Claude needs your permission to use Bash',
    },
    { kind: 'notification', title: 'Permission needed', message: 'Claude needs your permission to use Bash' },
  ],
];

describe('Notification → user.attention', () => {
  for (const [harness, payload, expected] of cases)
    it(`${harness}: a valid AHP event, its text kept`, () => {
      const captured = adapterOf(harness)!.translate(payload);
      const { event } = prepareEvent(captured.event, 'ses_test', new Date());
      const issues = validateEvent(event).filter((i) => i.rule !== 'unknown-field');
      assert.deepEqual(issues, []);
      assert.equal(event.type, 'user.attention');
      const attention = event.attention as {
        kind: string;
        title: { text: string }[];
        message: { text: string }[];
      };
      assert.equal(attention.kind, expected.kind);
      assert.equal(attention.title[0]!.text, expected.title);
      assert.equal(attention.message[0]!.text, expected.message);
    });
});
