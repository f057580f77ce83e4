/**
 * What every capture channel hands the boundary: a canonical AHP event, whether it can still be
 * stopped (`decide`) or already happened (`observe`), and who in the harness it came from. Channels
 * translate; they never record (the layer rule keeps them away from the evidence layer).
 */
import { TallyError } from '../core/errors.js';

/** The agent an event came from, as the harness identifies it (the recorder names the session's). */
export interface HarnessAgent {
  /** The harness's id of this agent instance (Claude Code: the session id, or a subagent's id). */
  instance: string;
  /** The agent's type when it is a subagent (Claude Code `agent_type`), else undefined. */
  type?: string;
  /** The instance that spawned it, for subagents. */
  parent?: string;
  model?: string;
}

export interface Captured {
  mode: 'decide' | 'observe';
  /** The canonical AHP event, without `id`/`time` when the channel has none (the boundary fills them). */
  event: Record<string, unknown>;
  /** The harness's own session id (several Tally sessions never share one). */
  harnessSession: string;
  /** The working directory the harness reported: where the event's relative paths start. */
  cwd?: string;
  /** The harness's own transcript of the session, when it names one: a second witness at close. */
  transcriptPath?: string;
  agent: HarnessAgent;
  /** The native event name (`PreToolUse`, …), for the native answer. */
  nativeEvent: string;
}

export type CaptureErrorCode = 'bad-payload' | 'unknown-event';

/** A native payload that cannot be translated; `detail.pointer` names the field at fault. */
export class CaptureError extends TallyError<CaptureErrorCode> {}
