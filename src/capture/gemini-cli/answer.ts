/**
 * The boundary's decision → the exact answer Gemini CLI honours (verified against the pinned
 * version, test/agents/README.md): `{"decision": "deny", "reason"}` stops BeforeTool (the model
 * gets `Tool execution blocked: <reason>`), BeforeAgent (the prompt) and AfterTool (the result).
 * Claude Code's `hookSpecificOutput.permissionDecision` is ignored by Gemini, so it is never sent.
 * `ask` hangs a headless Gemini forever (it waits for a person who is not there), so an escalation
 * is answered deny, with the reason saying a person's approval was needed.
 */
import type { BoundaryDecision } from '../../boundary/boundary.js';
import type { JsonObject } from '../../core/json.js';
import { contextAnswer, contextOf, resultDenied } from '../claude-code/answer.js';

/** The reason an escalation is denied with, where the agent cannot ask a person. */
export function askDenied(reason: string | undefined, agent: string): string {
  return `${reason ?? 'this action needs a person’s approval'} (it needs a person’s approval, which ${agent} cannot ask for here: denied)`;
}

export function geminiCliAnswer(nativeEvent: string, decision: BoundaryDecision | null): JsonObject {
  if (decision === null) return {};
  const reason = decision.reason ?? (decision.decision === 'deny' ? 'denied by policy' : undefined);
  const context = contextOf(decision);
  if (nativeEvent === 'BeforeTool') {
    if (decision.decision === 'ask') return { decision: 'deny', reason: askDenied(reason, 'Gemini CLI') };
    if (decision.decision === 'deny') return { decision: 'deny', reason: reason ?? 'denied by policy' };
    if (decision.effects.input !== undefined)
      return {
        decision: 'deny',
        reason: 'a policy rewrote this call’s input, which Gemini CLI cannot apply: denied',
      };
    if (decision.effects.result !== undefined)
      return { decision: 'deny', reason: resultDenied('Gemini CLI') };
    return decision.permission === 'allow' ? { decision: 'allow' } : {};
  }
  if (nativeEvent === 'BeforeAgent' || nativeEvent === 'AfterTool') {
    if (decision.decision === 'deny') return { decision: 'deny', reason: reason ?? 'blocked by policy' };
    return contextAnswer(nativeEvent, context);
  }
  return nativeEvent === 'SessionStart' ? contextAnswer(nativeEvent, context) : {};
}

/** What Gemini CLI's native answers cannot say, for the installer to print. */
export const GEMINI_CLI_GAPS: readonly string[] = [
  'ask: a headless Gemini CLI waits forever for a person; Tally answers deny, with the reason saying approval was needed',
  'BeforeTool: `modify` of the tool input and `return` (a supplied result) have no answer Tally sends; both are refused as deny',
  'AfterTool: `modify` of the tool output has no native answer',
  'no http hooks: every event goes through the command shim (tally hook gemini-cli), a process per hook',
  'a shim that outlives its timeout is killed and Gemini CLI goes on (fails open); the shim itself answers the fail-closed policy when the recorder is unreachable',
  'BeforeModel, AfterModel, BeforeToolSelection are not hooked (model requests, not actions; a process per model turn)',
  'an automatic history compression is not recorded: Gemini CLI fires PreCompress (trigger auto) before every model turn, compressing or not, so Tally hooks only a manual /compress',
  'no tool call id: BeforeTool/AfterTool are paired by a digest of the session, tool and input',
];
