/**
 * The hook plan and the settings merge: deadlines are the sum of the event's intercept deadlines
 * plus a margin, fail-closed exactly where an intercept subscription is, the certificate judge is
 * always there; the user's settings survive install and uninstall byte for byte in meaning.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseRegistration } from '../../src/ahp/registration/registration.js';
import { withCertificateJudge } from '../../src/boundary/certificate-backend.js';
import { claudeCodeHooks, isTallyHook, planHooks } from '../../src/capture/claude-code/hooks.js';
import {
  checkHooksBlock,
  parseSettings,
  withoutTallyHooks,
  withTallyHooks,
} from '../../src/capture/claude-code/settings.js';
import { CaptureError } from '../../src/capture/types.js';

const sub = (events: string[], mode: 'intercept' | 'observe', extra: Record<string, unknown> = {}) => ({
  events,
  mode,
  content: { default: 'metadata' },
  ...(mode === 'intercept' ? { timeoutMs: 3000, failurePolicy: 'fail-open' } : {}),
  ...extra,
});
const backend = (id: string, subscriptions: unknown[]) => ({
  id,
  transport: { type: 'stdio', command: '/bin/guard', lifecycle: 'persistent' },
  subscriptions,
});

describe('the Claude Code hook plan', () => {
  it('the judge alone: PreToolUse fails closed with its deadline plus the margin; the rest record only', () => {
    const plans = planHooks(withCertificateJudge(null));
    const pre = plans.find((p) => p.event === 'PreToolUse')!;
    assert.deepEqual([pre.failClosed, pre.timeoutS, pre.backends], [true, 10, ['dev.tally.certificate']]);
    const post = plans.find((p) => p.event === 'PostToolUse')!;
    assert.deepEqual([post.failClosed, post.timeoutS], [false, 10]);
    assert.equal(plans.find((p) => p.event === 'SessionStart')!.transport, 'command');
  });

  it('deadlines add up (interceptors run one after another); one fail-closed subscription makes the hook fail closed', () => {
    const registration = parseRegistration({
      protocolVersion: 'draft',
      hooks: [
        backend('com.example.a', [sub(['tool.*'], 'intercept', { timeoutMs: 12_000 })]),
        backend('com.example.b', [
          sub(['turn.start'], 'intercept', { failurePolicy: 'fail-closed', timeoutMs: 2500 }),
        ]),
        backend('com.example.c', [sub(['*'], 'observe')]),
      ],
    }).registration;
    const plans = planHooks(withCertificateJudge(registration));
    const pre = plans.find((p) => p.event === 'PreToolUse')!;
    // 5 s (the judge) + 12 s, rounded up, + 5 s of margin.
    assert.equal(pre.timeoutS, 22);
    assert.deepEqual(pre.backends, ['dev.tally.certificate', 'com.example.a', 'com.example.c']);
    const prompt = plans.find((p) => p.event === 'UserPromptSubmit')!;
    assert.deepEqual([prompt.failClosed, prompt.timeoutS], [true, 8]);
    const post = plans.find((p) => p.event === 'PostToolUse')!;
    assert.equal(post.failClosed, false, 'tool.after: only fail-open interceptors');
  });

  it('http hooks carry the secret and session from the environment; onFailure block only where it fails closed', () => {
    const hooks = claudeCodeHooks(planHooks(withCertificateJudge(null)), {
      port: 4321,
      tally: 'tally',
      transport: 'http',
      agent: 'coder',
    });
    const pre = hooks.PreToolUse![0] as { matcher: string; hooks: Record<string, unknown>[] };
    assert.equal(pre.matcher, '');
    assert.deepEqual(pre.hooks[0], {
      type: 'http',
      url: 'http://127.0.0.1:4321/hooks/claude-code?agent=coder',
      headers: { Authorization: 'Bearer $TALLY_RECORDER_SECRET', 'X-Tally-Session': '$TALLY_SESSION' },
      allowedEnvVars: ['TALLY_RECORDER_SECRET', 'TALLY_SESSION'],
      timeout: 10,
      onFailure: 'block',
    });
    assert.equal((hooks.Stop![0] as { hooks: Record<string, unknown>[] }).hooks[0]!.onFailure, undefined);
    assert.equal((hooks.SessionStart![0] as { hooks: Record<string, unknown>[] }).hooks[0]!.type, 'command');
    checkHooksBlock(hooks);
  });
});

describe('merging into settings', () => {
  const ours = claudeCodeHooks(planHooks(withCertificateJudge(null)), {
    port: 1,
    tally: "'/x/node' '/y/bin/tally.js'",
    transport: 'command',
  });
  const user = {
    model: 'x',
    permissions: { allow: ['Read'] },
    hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'mine' }] }] },
  };

  it('install keeps every key and hook of the user; installing twice is installing once', () => {
    const once = withTallyHooks(user, ours);
    const twice = withTallyHooks(once, ours);
    assert.deepEqual(twice, once);
    assert.equal(once.model, 'x');
    const pre = (once.hooks as Record<string, { hooks: { command?: string }[] }[]>).PreToolUse!;
    assert.equal(pre[0]!.hooks[0]!.command, 'mine');
    assert.ok(isTallyHook(pre[1]!.hooks[0]));
  });

  it('uninstall removes only what Tally added', () => {
    assert.deepEqual(withoutTallyHooks(withTallyHooks(user, ours)), user);
    assert.deepEqual(withoutTallyHooks(withTallyHooks({}, ours)), {});
  });

  it('a settings file that is not a JSON object is refused, never overwritten; a bad hook is named', () => {
    assert.throws(() => parseSettings('{ not json', '/s.json'), CaptureError);
    assert.throws(() => parseSettings('[1]', '/s.json'), CaptureError);
    assert.deepEqual(parseSettings('', '/s.json'), {});
    assert.throws(
      () => checkHooksBlock({ PreToolUse: [{ hooks: [{ type: 'http', url: 'ftp://x' }] }] }),
      (e) => e instanceof CaptureError && e.detail?.pointer === '/hooks/PreToolUse/0/hooks/0/url',
    );
    assert.throws(() => checkHooksBlock({ PreToolUze: [] }), CaptureError);
  });
});
