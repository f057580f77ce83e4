/**
 * The boundary's decision → the exact answer Claude Code honours (verified against the pinned
 * binary, test/agents/README.md): PreToolUse takes `hookSpecificOutput.permissionDecision`
 * (`allow`, `deny` with a reason the model sees, `ask` — which headless `-p` treats as deny) and
 * `updatedInput`; UserPromptSubmit and PostToolUse take `decision: "block"` and
 * `additionalContext`. No opinion is `{}`.
 */
import type { BoundaryDecision } from '../../boundary/boundary.js';
import type { JsonObject } from '../../core/json.js';

/** Context the model should see, from the decision's messages and text injections. */
export function contextOf(decision: BoundaryDecision): string | undefined {
  const texts = [...decision.effects.messages];
  for (const injection of decision.effects.injections) {
    if (typeof injection === 'string') texts.push(injection);
    else if (injection && typeof injection === 'object') {
      const value =
        (injection as { text?: unknown; value?: unknown }).text ?? (injection as { value?: unknown }).value;
      if (typeof value === 'string') texts.push(value);
    }
  }
  return texts.length > 0 ? texts.join('\n') : undefined;
}

/** Context for the model in the answer to `nativeEvent` (the field both Claude Code and Gemini CLI read). */
export function contextAnswer(nativeEvent: string, context: string | undefined): JsonObject {
  return context === undefined
    ? {}
    : { hookSpecificOutput: { hookEventName: nativeEvent, additionalContext: context } };
}

/** The reason a supplied result (the `return` effect) is denied with: no agent can return it. */
export function resultDenied(agent: string): string {
  return `a policy supplied this call’s result instead of running it, which ${agent} cannot return: denied`;
}

/** The JSON body for a native event's answer (what an http hook returns, a command hook prints). */
export function claudeCodeAnswer(nativeEvent: string, decision: BoundaryDecision | null): JsonObject {
  if (decision === null) return {};
  const reason = decision.reason ?? (decision.decision === 'deny' ? 'denied by policy' : undefined);
  if (nativeEvent === 'PreToolUse') {
    // A supplied result has no native answer: the tool would run as if nothing had been said.
    if (decision.effects.result !== undefined && decision.decision === 'allow')
      return {
        hookSpecificOutput: {
          hookEventName: 'PreToolUse',
          permissionDecision: 'deny',
          permissionDecisionReason: resultDenied('Claude Code'),
        },
      };
    if (decision.permission === 'none' && decision.effects.input === undefined) return {};
    const out: JsonObject = { hookEventName: 'PreToolUse', permissionDecision: decision.decision };
    if (reason !== undefined && decision.decision !== 'allow') out.permissionDecisionReason = reason;
    // A modified input is applied only with an explicit allow (headless refuses it otherwise).
    if (decision.effects.input !== undefined && decision.decision === 'allow')
      out.updatedInput = decision.effects.input;
    return { hookSpecificOutput: out };
  }
  const context = contextOf(decision);
  if (nativeEvent === 'UserPromptSubmit' || nativeEvent === 'PostToolUse') {
    if (decision.decision === 'deny') return { decision: 'block', reason: reason ?? 'blocked by policy' };
    return contextAnswer(nativeEvent, context);
  }
  return nativeEvent === 'SessionStart' ? contextAnswer(nativeEvent, context) : {};
}

/**
 * What the native answers cannot say, for the installer to print: effects of the protocol that
 * Claude Code has no field for at a given event.
 */
export const CLAUDE_CODE_GAPS: readonly string[] = [
  'PreToolUse: `return` (a supplied result instead of running the tool) has no native answer; it is refused as deny',
  'PreToolUse: injected context has no native field before a tool runs; it is delivered after it (PostToolUse)',
  'PostToolUse: `modify` of the tool output has no native answer',
  'ask: in headless -p mode Claude Code refuses the call (there is no one to ask)',
  'SessionStart: http hooks are not sent by Claude Code; a command hook (tally hook claude-code) carries it',
];
