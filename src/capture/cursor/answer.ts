/**
 * The boundary's decision → Cursor's documented answers: the permission events
 * (`beforeShellExecution`, `beforeMCPExecution`, `beforeReadFile`) take `{permission:
 * "allow"|"deny"|"ask", user_message, agent_message}` (`agent_message` is what the model is told);
 * `beforeSubmitPrompt` takes `{continue: false, user_message}` to block. Cursor is an editor with a
 * person at it, so `ask` stays ask. Not verified against a running Cursor (none runs here).
 */
import type { BoundaryDecision } from '../../boundary/boundary.js';
import type { JsonObject } from '../../core/json.js';
import { resultDenied } from '../claude-code/answer.js';

const PERMISSION_EVENTS = new Set(['beforeShellExecution', 'beforeMCPExecution', 'beforeReadFile']);

export function cursorAnswer(nativeEvent: string, decision: BoundaryDecision | null): JsonObject {
  if (decision === null) return {};
  const reason = decision.reason ?? (decision.decision === 'deny' ? 'denied by policy' : undefined);
  if (PERMISSION_EVENTS.has(nativeEvent)) {
    if (decision.effects.input !== undefined && decision.decision === 'allow')
      return {
        permission: 'deny',
        user_message: 'a policy rewrote this call’s input, which Cursor cannot apply: denied',
        agent_message: 'a policy rewrote this call’s input, which Cursor cannot apply: denied',
      };
    if (decision.effects.result !== undefined && decision.decision === 'allow') {
      const why = resultDenied('Cursor');
      return { permission: 'deny', user_message: why, agent_message: why };
    }
    if (decision.permission === 'none') return {};
    return {
      permission: decision.decision,
      ...(reason !== undefined && decision.decision !== 'allow'
        ? { user_message: reason, agent_message: reason }
        : {}),
    };
  }
  if (nativeEvent === 'beforeSubmitPrompt')
    return decision.decision === 'allow'
      ? { continue: true }
      : { continue: false, user_message: reason ?? 'blocked by policy' };
  return {};
}

export const CURSOR_GAPS: readonly string[] = [
  'tested against Cursor’s documented hook format only: no Cursor CLI runs here',
  'beforeSubmitPrompt: a deny blocks the prompt, but Cursor has no field for the model (the reason goes to the person)',
  '`modify` of a tool input and `return` (a supplied result) have no answer in these events: both are refused as deny',
  'no before-edit hook: a write through Cursor’s own edit tool reaches Tally only after it is made (afterFileEdit), so a forbidden edit cannot be stopped: it is recorded, and verification’s unauthorized_calls fails on it (its shell commands and MCP calls are judged before they run)',
  'after* events are fire-and-forget in Cursor: recorded, never blocked',
  'no call id: a before/after pair is matched by its conversation, generation and command (or tool and input), each call with an id of its own',
  'Cursor runs every hook through a process: the command shim (tally hook cursor)',
];
