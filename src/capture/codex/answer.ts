/**
 * The boundary's decision → the answer Codex honours (verified against the pinned version,
 * test/agents/README.md): PreToolUse takes Claude Code's `hookSpecificOutput.permissionDecision:
 * "deny"` (the model sees `Command blocked by PreToolUse hook: <reason>`). Codex does not support
 * `ask` — it fails open, the command runs — so an escalation is answered deny, with the reason
 * saying a person's approval was needed; a rewritten input cannot be applied, so it is denied too.
 * An allow is no answer (Codex's own approval mode decides, as it would without Tally).
 */
import type { BoundaryDecision } from '../../boundary/boundary.js';
import type { JsonObject } from '../../core/json.js';
import { claudeCodeAnswer, resultDenied } from '../claude-code/answer.js';
import { askDenied } from '../gemini-cli/answer.js';

function deny(reason: string): JsonObject {
  return {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: reason,
    },
  };
}

export function codexAnswer(nativeEvent: string, decision: BoundaryDecision | null): JsonObject {
  if (decision === null) return {};
  if (nativeEvent === 'PreToolUse') {
    const reason = decision.reason ?? 'denied by policy';
    if (decision.decision === 'ask') return deny(askDenied(decision.reason, 'Codex'));
    if (decision.decision === 'deny') return deny(reason);
    if (decision.effects.input !== undefined)
      return deny('a policy rewrote this call’s input, which Codex cannot apply: denied');
    if (decision.effects.result !== undefined) return deny(resultDenied('Codex'));
    return {};
  }
  return claudeCodeAnswer(nativeEvent, decision);
}

/** What Codex's native answers cannot say, for the installer to print. */
export const CODEX_GAPS: readonly string[] = [
  'ask: Codex does not support it and lets the call run; Tally answers deny, with the reason saying approval was needed',
  'PreToolUse: `modify` (a rewritten input) and `return` (a supplied result) have no answer Codex applies; both are refused as deny',
  'PostToolUse: `modify` of the tool output has no native answer',
  'write_stdin fires no hook: what it types into a process exec_command left running is not judged; an exec_command whose program could take commands typed later is judged opaque instead',
  'no http hooks: every event goes through the command shim (tally hook codex), a process per hook',
  'hooks run only once trusted: tally install trusts its own hooks through Codex (codex app-server), never the user’s; editing them makes them untrusted again, and Codex then skips them without a word',
  'a shim that outlives its timeout is killed and Codex goes on (fails open); the shim itself answers the fail-closed policy when the recorder is unreachable',
];
