/**
 * A tool use the agent's transcript shows, as the event the close records: through the same
 * preparation as a channel's event (redacted, validated), since the transcript is input the agent
 * wrote like any other. An input too large or too deeply nested to record is left out and the event
 * says so; a use whose event still cannot be recorded is named in the pass's summary instead, so no
 * transcript can stop a close.
 */
import { BoundaryError, eventId, prepareEvent } from '../boundary/prepare.js';
import type { TranscriptToolUse } from '../capture/claude-code/transcript.js';
import { CanonicalError, canonicalize } from '../core/canonical.js';
import type { CanonicalEvent } from '../core/event.js';
import { redactText } from '../evidence/redact.js';

/** The largest tool input (canonical JSON bytes) recorded from a transcript. */
export const TRANSCRIPT_INPUT_MAX_BYTES = 1024 * 1024;
/** The largest event recorded from a transcript (a call id or a tool name past this is not one). */
const EVENT_MAX_BYTES = 2 * TRANSCRIPT_INPUT_MAX_BYTES;
export const TRANSCRIPT_URI = 'urn:tally:transcript';

export interface UseContext {
  session: string;
  harnessSession: string;
  eventSource?: string;
  cwd?: string;
  /** No record of the session has its call: the transcript alone saw it. */
  only: boolean;
}

function useEvent(
  use: TranscriptToolUse,
  context: UseContext,
  input: Record<string, unknown>,
  omitted?: string,
): Record<string, unknown> {
  const base = {
    id: eventId(),
    time: new Date().toISOString(),
    source: context.eventSource ?? TRANSCRIPT_URI,
    session: { id: context.harnessSession, ...(context.cwd ? { cwd: context.cwd } : {}) },
    call: { id: use.id },
    path: 'native',
    tool: { name: use.name, input, origin: use.name.startsWith('mcp__') ? 'mcp' : 'native' },
    extensions: {
      'dev.tally.transcript': {
        file: use.file,
        seen_only_in_transcript: context.only,
        ...(omitted ? { input_omitted: omitted } : {}),
      },
    },
  };
  if (use.result === undefined) return { ...base, type: 'tool.before' };
  if (use.result.blockedByHook)
    return {
      ...base,
      type: 'tool.after',
      outcome: 'denied',
      execution: { status: 'skipped', reason: 'policy', detail: 'the transcript shows a hook stopped it' },
      items: [],
    };
  return {
    ...base,
    type: 'tool.after',
    outcome: use.result.isError ? 'error' : 'ok',
    execution: { status: 'executed' },
    items: [],
    ...(use.result.isError
      ? { error: { class: 'tool', message: 'the transcript shows an error result' } }
      : {}),
  };
}

/** Why an input is not recorded, or nothing when it is. */
function inputFault(input: Record<string, unknown>): string | undefined {
  let bytes: number;
  try {
    bytes = Buffer.byteLength(canonicalize(input));
  } catch (error) {
    if (error instanceof CanonicalError) return `the input is not recordable JSON: ${error.message}`;
    throw error;
  }
  return bytes > TRANSCRIPT_INPUT_MAX_BYTES
    ? `the input is ${bytes} bytes; at most ${TRANSCRIPT_INPUT_MAX_BYTES} are recorded from a transcript`
    : undefined;
}

function prepared(raw: Record<string, unknown>, session: string): CanonicalEvent | string {
  try {
    const { event } = prepareEvent(raw, session, new Date());
    const bytes = Buffer.byteLength(canonicalize(event));
    if (bytes > EVENT_MAX_BYTES)
      return `its event would be ${bytes} bytes; at most ${EVENT_MAX_BYTES} are recorded from a transcript`;
    return event;
  } catch (error) {
    // Nesting that exhausts the stack while it is redacted is said like any other fault.
    if (error instanceof BoundaryError || error instanceof CanonicalError || error instanceof RangeError)
      return redactText(error.message);
    throw error;
  }
}

/** The redacted event of a use, or why it cannot be recorded. */
export function transcriptUseEvent(use: TranscriptToolUse, context: UseContext): CanonicalEvent | string {
  const fault = inputFault(use.input);
  const whole = fault === undefined ? prepared(useEvent(use, context, use.input), context.session) : fault;
  if (typeof whole !== 'string') return whole;
  return prepared(useEvent(use, context, {}, whole), context.session);
}
