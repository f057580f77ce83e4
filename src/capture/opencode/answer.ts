/**
 * The boundary's decision → what Tally's OpenCode plugin does with it: `{decision: "deny",
 * reason}` makes it throw in `tool.execute.before`, which stops the tool (the model's tool message
 * is the thrown message; verified, test/agents/README.md). A headless OpenCode rejects what needs
 * asking and the plugin has no way to ask, so an escalation is a deny with the reason saying so; a
 * rewritten input is not applied, so it is denied too. Everything else is `{}`.
 */
import type { BoundaryDecision } from '../../boundary/boundary.js';
import type { JsonObject } from '../../core/json.js';
import { resultDenied } from '../claude-code/answer.js';
import { askDenied } from '../gemini-cli/answer.js';

export function openCodeAnswer(nativeEvent: string, decision: BoundaryDecision | null): JsonObject {
  if (decision === null || nativeEvent !== 'tool.execute.before') return {};
  if (decision.decision === 'ask')
    return { decision: 'deny', reason: askDenied(decision.reason, 'OpenCode') };
  if (decision.decision === 'deny')
    return { decision: 'deny', reason: decision.reason ?? 'denied by policy' };
  if (decision.effects.input !== undefined)
    return {
      decision: 'deny',
      reason: 'a policy rewrote this call’s input, which Tally does not apply in OpenCode: denied',
    };
  if (decision.effects.result !== undefined) return { decision: 'deny', reason: resultDenied('OpenCode') };
  return {};
}

export const OPENCODE_GAPS: readonly string[] = [
  'ask: the plugin cannot ask a person (headless OpenCode rejects what needs asking); Tally answers deny, with the reason saying approval was needed',
  'tool.execute.before: `modify` of the input and `return` (a supplied result) are refused as deny',
  'prompts (chat.message) and tool results (tool.execute.after) are recorded, not judged: the plugin stops only tool calls',
  'no session end event: a session the recorder opened for OpenCode stays open until closed (tally run closes its own)',
  'the plugin runs inside OpenCode, as the user: the agent can delete it for its next session (as with any project or user scope)',
];
