/**
 * What a scripted model answers. A script is a list of steps; each step is one model turn: one or
 * more tool calls, or a final text. The servers are stateless: the step to answer is read from the
 * number of tool results the request already carries, so a retried request gets the same answer.
 *
 * Agents with subagents (Claude Code's Agent tool) send the subagent's turns to the same server as
 * a conversation of its own, which starts again at zero tool results; a thread names such a
 * conversation by a string its first user message contains and gives it its own steps.
 */

export interface ToolCall {
  tool: string;
  /** The tool's arguments; a string is a freeform (custom) tool input, e.g. Codex's apply_patch. */
  input: Record<string, unknown> | string;
  /** The tool's namespace, for APIs that group tools (Codex's `collaboration` tools on the Responses API). */
  namespace?: string;
  /**
   * Arguments computed from the request being answered, for what only the agent knows by then (the
   * id Codex gave a spawned agent). Used by the Responses server; `input` is the stand-in elsewhere.
   */
  inputFrom?: (request: Record<string, unknown>) => Record<string, unknown>;
}

export type Step = { calls: ToolCall[] } | { text: string };

export interface Thread {
  /** A request belongs to this thread when its first user message contains this text. */
  match: string;
  steps: Step[];
}

export interface Script {
  steps: Step[];
  threads?: Thread[];
  /** Runs once per (thread, step) before the server answers that step: a person editing by hand. */
  beforeStep?: (k: number, thread: string) => void | Promise<void>;
  /** Text answered after the steps run out (an agent may ask once more). */
  fallbackText?: string;
}

/** A tool call step. */
export function call(tool: string, input: Record<string, unknown> | string): Step {
  return { calls: [{ tool, input }] };
}

/** A call of a tool offered inside a namespace (Responses API `namespace` tools). */
export function namespacedCall(
  namespace: string,
  tool: string,
  input: Record<string, unknown> | ((request: Record<string, unknown>) => Record<string, unknown>),
): Step {
  return typeof input === 'function'
    ? { calls: [{ tool, input: {}, namespace, inputFrom: input }] }
    : { calls: [{ tool, input, namespace }] };
}

/** Several tool calls in one model turn. */
export function calls(...list: ToolCall[]): Step {
  return { calls: list };
}

export function text(value: string): Step {
  return { text: value };
}

export type ScriptInput = Script | Step[];

export function toScript(input: ScriptInput): Script {
  return Array.isArray(input) ? { steps: input } : input;
}

/** The name of the thread a conversation belongs to: 'main' or a thread's match text. */
export function threadOf(script: Script, firstUserText: string): { name: string; steps: Step[] } {
  for (const thread of script.threads ?? []) {
    if (firstUserText.includes(thread.match)) return { name: thread.match, steps: thread.steps };
  }
  return { name: 'main', steps: script.steps };
}

/**
 * The index of the step to answer once `results` tool results are in the conversation: the first
 * step whose calls are not all answered yet. Past the end it is steps.length (the fallback text).
 */
export function stepIndex(steps: Step[], results: number): number {
  let answered = 0;
  for (let k = 0; k < steps.length; k++) {
    const step = steps[k]!;
    if (!('calls' in step)) return k;
    if (answered + step.calls.length > results) return k;
    answered += step.calls.length;
  }
  return steps.length;
}

/** The step to answer, or the fallback final text after the script. */
export function stepAt(script: Script, steps: Step[], k: number): Step {
  return steps[k] ?? { text: script.fallbackText ?? 'Done.' };
}
