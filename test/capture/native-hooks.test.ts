/**
 * The hooks blocks Tally writes for Gemini CLI and Qwen Code: Gemini's PreCompress hook fires for
 * a manual compression only (the automatic trigger fires before every model turn, compressing or
 * not); Qwen's http transport posts the fail-open events to the recorder and keeps the fail-closed
 * PreToolUse and SessionStart on the shim; its hooks of either kind are Tally's to remove.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { withoutQwenTallyHooks } from '../../src/capture/qwen-code/hooks.js';
import { INSTALLERS } from '../../src/cli/installers.js';
import type { JsonObject } from '../../src/core/json.js';

const wiring = (transport: 'http' | 'command') => ({ port: 4321, tally: 'tally', agent: 'coder', transport });

/** Each event's one Tally hook with its group's matcher. */
function hooksOf(block: Record<string, JsonObject[]>): Record<string, JsonObject & { matcher?: unknown }> {
  const out: Record<string, JsonObject & { matcher?: unknown }> = {};
  for (const [event, groups] of Object.entries(block)) {
    assert.equal(groups.length, 1, event);
    const group = groups[0]!;
    const hooks = group.hooks as JsonObject[];
    assert.equal(hooks.length, 1, event);
    out[event] = { ...hooks[0]!, ...(group.matcher !== undefined ? { matcher: group.matcher } : {}) };
  }
  return out;
}

describe('the Gemini CLI hooks block', () => {
  it('PreCompress matches the manual trigger only; the tool hooks match every tool', () => {
    const hooks = hooksOf(INSTALLERS['gemini-cli']!.hooks(null, wiring('command')));
    assert.equal(hooks.PreCompress?.matcher, 'manual');
    assert.equal(hooks.BeforeTool?.matcher, '');
    assert.equal(hooks.AfterTool?.matcher, '');
    assert.equal(hooks.BeforeAgent?.matcher, undefined);
    assert.match(String(hooks.BeforeTool?.command), /^tally hook gemini-cli --fail closed --agent coder$/);
  });
});

describe('the Qwen Code hooks block', () => {
  it('command transport: every event is the shim', () => {
    const hooks = hooksOf(INSTALLERS['qwen-code']!.hooks(null, wiring('command')));
    for (const [event, hook] of Object.entries(hooks)) assert.equal(hook.type, 'command', event);
    assert.deepEqual(
      INSTALLERS['qwen-code']!.plan(null, 'command').map((p) => p.transport),
      Object.keys(hooks).map(() => 'command'),
    );
  });

  it('http transport: fail-open events post to the recorder; PreToolUse and SessionStart stay on the shim', () => {
    const hooks = hooksOf(INSTALLERS['qwen-code']!.hooks(null, wiring('http')));
    assert.equal(hooks.PreToolUse?.type, 'command');
    assert.match(String(hooks.PreToolUse?.command), /--fail closed/);
    assert.equal(hooks.SessionStart?.type, 'command');
    for (const event of ['UserPromptSubmit', 'PostToolUse', 'Stop', 'Notification']) {
      const hook = hooks[event]!;
      assert.equal(hook.type, 'http', event);
      assert.equal(hook.url, 'http://127.0.0.1:4321/hooks/qwen-code?agent=coder');
      assert.deepEqual(hook.allowedEnvVars, ['TALLY_RECORDER_SECRET', 'TALLY_SESSION']);
      assert.equal((hook.headers as JsonObject).Authorization, 'Bearer $TALLY_RECORDER_SECRET');
    }
    assert.equal(hooks.PostToolUse?.matcher, '');
    const planned = Object.fromEntries(
      INSTALLERS['qwen-code']!.plan(null, 'http').map((p) => [p.event, p.transport]),
    );
    assert.deepEqual(
      planned,
      Object.fromEntries(Object.entries(hooks).map(([event, hook]) => [event, hook.type])),
    );
  });

  it('merge and remove: Tally hooks of both kinds come out, the user’s stay', () => {
    const mine = { type: 'http', url: 'http://127.0.0.1:9/mine' };
    const user = { ui: { theme: 'Default' }, hooks: { Stop: [{ hooks: [mine] }] } };
    const installer = INSTALLERS['qwen-code']!;
    const merged = installer.merge(user, installer.hooks(null, wiring('http')));
    const stop = (merged.hooks as Record<string, JsonObject[]>).Stop!;
    assert.equal(stop.length, 2);
    assert.deepEqual(withoutQwenTallyHooks(merged), user);
  });
});
