/**
 * Event payloads: one hand-written definition per catalogue event. The envelope stays open
 * (unknown top-level fields are kept and never rejected); nested protocol objects are closed.
 */
import { isJsonObject } from '../../core/json.js';
import type { Issue } from '../registration/types.js';
import { contentPart, message, messageWithRole, textPart, textParts } from './content.js';
import {
  batch,
  deniedIsPolicySkip,
  ENVELOPE_REQUIRED,
  type EnvelopeOptions,
  envelope,
  error,
  execution,
  fileChange,
  identity,
  tool,
} from './event-parts.js';
import { type EventDefinition, EXEC_PARTS, EXECUTION_DEFINITIONS } from './events-execution.js';
import { manifest } from './manifest.js';
import {
  anyObject,
  arr,
  bool,
  type Check,
  collect,
  constant,
  int,
  issue,
  nonEmpty,
  num,
  type ObjectRules,
  obj,
  oneOfValues,
  type Props,
  str,
} from './shape.js';

type Rule = NonNullable<ObjectRules['also']>;

const OPEN_MESSAGES: EnvelopeOptions = { closedTurn: false, items: 'messages' };
const OPEN_PARTS: EnvelopeOptions = { closedTurn: false, items: 'parts' };

const call = identity(true);
const toolFields: Props = { call, tool, path: nonEmpty, batch };
const TOOL_OUTCOMES = ['ok', 'error', 'denied', 'cancelled', 'timeout'] as const;

const configChange = (extra: Props): Check =>
  obj(
    {
      source: nonEmpty,
      scope: nonEmpty,
      settings: arr(nonEmpty),
      summary: nonEmpty,
      path: nonEmpty,
      ...extra,
    },
    { required: ['source', 'scope', 'settings', 'summary'], closed: true },
  );

const taskObject: Check = obj(
  {
    id: nonEmpty,
    operation: oneOfValues(['create', 'update', 'remove']),
    change: anyObject,
    prior: anyObject,
    synthesized: bool,
  },
  { required: ['id', 'operation', 'change'], closed: true },
);

const workspaceState = obj(
  { cwd: nonEmpty, workspaceRoots: arr(nonEmpty, { unique: true }) },
  { closed: true, minProperties: 1 },
);
const workspaceObject: Check = obj(
  {
    kind: oneOfValues(['cwd', 'roots', 'switch']),
    change: workspaceState,
    prior: workspaceState,
    reason: str(),
  },
  { required: ['kind', 'change'], closed: true },
);

const elicitationMode = oneOfValues(['form', 'url']);

const toolAfterRules: Rule = (event, pointer, out) => {
  if (event.outcome === 'error' && !('error' in event))
    issue(out, `${pointer}/error`, 'required', 'outcome "error" requires an error object');
  if ('outcome' in event && event.outcome !== 'error' && 'error' in event) {
    issue(out, `${pointer}/error`, 'forbidden', 'error is only allowed when outcome is "error"');
  }
  deniedIsPolicySkip(event, pointer, out);
  if (isJsonObject(event.execution) && event.execution.status === 'skipped') {
    for (const name of ['durationMs', 'fileChanges']) {
      if (name in event) issue(out, `${pointer}/${name}`, 'forbidden', `a skipped call has no ${name}`);
    }
  }
};

const batchCall: Check = obj(
  { ...toolFields, outcome: oneOfValues(TOOL_OUTCOMES), execution },
  { required: ['call', 'tool', 'path', 'outcome', 'execution'], closed: true, also: deniedIsPolicySkip },
);

const DEFINITIONS: Record<string, EventDefinition> = {
  'session.start': {
    envelope: OPEN_MESSAGES,
    props: {
      trigger: oneOfValues(['startup', 'resume', 'clear', 'compact', 'fork']),
      resumedFrom: identity(true),
      permissionMode: nonEmpty,
      harness: obj({ name: nonEmpty, version: nonEmpty }, { required: ['name', 'version'], closed: true }),
      manifest,
    },
    required: ['session', 'trigger', 'harness', 'permissionMode', 'manifest', 'items'],
    forbidden: ['tool', 'outcome'],
    also: (event, pointer, out) => {
      if ((event.trigger === 'clear' || event.trigger === 'fork') && !('resumedFrom' in event)) {
        issue(out, `${pointer}/resumedFrom`, 'required', `trigger "${event.trigger}" requires resumedFrom`);
      }
    },
  },
  'session.end': {
    envelope: OPEN_PARTS,
    props: {
      outcome: oneOfValues(['completed', 'cancelled', 'error', 'unknown']),
      reason: nonEmpty,
      counters: obj({}, { rest: int(0) }),
    },
    required: ['session', 'outcome', 'reason'],
    forbidden: ['tool'],
  },
  'tool.before': {
    envelope: OPEN_PARTS,
    props: { ...toolFields },
    required: ['call', 'tool', 'path'],
    forbidden: ['outcome', 'execution', 'durationMs', 'fileChanges'],
  },
  'tool.after': {
    envelope: OPEN_MESSAGES,
    props: {
      ...toolFields,
      outcome: oneOfValues(TOOL_OUTCOMES),
      execution,
      error,
      durationMs: num(0),
      fileChanges: arr(fileChange),
    },
    required: ['outcome', 'execution', 'call', 'tool', 'path', 'items'],
    also: toolAfterRules,
  },
  'tool.permission.request': {
    envelope: EXEC_PARTS,
    props: { ...toolFields, suggestions: arr(anyObject), sandboxBypass: bool },
    required: ['call', 'tool', 'path', 'suggestions', 'sandboxBypass'],
    forbidden: ['decision', 'decidedBy', 'outcome', 'execution'],
  },
  'tool.permission.resolved': {
    envelope: EXEC_PARTS,
    props: {
      ...toolFields,
      decision: oneOfValues(['allow', 'deny']),
      decidedBy: oneOfValues(['user', 'policy', 'hook', 'auto', 'classifier']),
    },
    required: ['call', 'tool', 'path', 'decision', 'decidedBy'],
  },
  'tool.progress': {
    envelope: EXEC_PARTS,
    props: { ...toolFields, partialOutput: message, backgrounded: bool },
    required: ['call', 'tool', 'path', 'partialOutput', 'backgrounded'],
    forbidden: ['outcome', 'execution'],
  },
  'tool.batch.after': {
    envelope: EXEC_PARTS,
    props: { batch: identity(true), calls: arr(batchCall, { min: 1 }) },
    required: ['batch', 'calls'],
  },
  ...EXECUTION_DEFINITIONS,
  'config.change.before': { envelope: OPEN_PARTS, props: { change: configChange({}) }, required: ['change'] },
  'config.change.after': {
    envelope: OPEN_PARTS,
    props: { change: configChange({ mcpServers: arr(anyObject) }) },
    required: ['change'],
  },
  'user.attention': {
    envelope: OPEN_PARTS,
    props: {
      attention: obj(
        { kind: nonEmpty, message: textParts, title: textParts },
        { required: ['kind', 'message', 'title'], closed: true },
      ),
    },
    required: ['attention'],
  },
  'user.elicitation.request': {
    envelope: OPEN_PARTS,
    props: {
      elicitation: obj(
        { server: nonEmpty, mode: elicitationMode, request: textPart },
        { required: ['server', 'mode'], closed: true },
      ),
    },
    required: ['elicitation'],
  },
  'user.elicitation.result': {
    envelope: OPEN_PARTS,
    props: {
      elicitation: obj(
        {
          server: nonEmpty,
          mode: elicitationMode,
          result: textPart,
          action: oneOfValues(['accept', 'decline', 'cancel']),
        },
        { required: ['server', 'mode', 'action'], closed: true },
      ),
    },
    required: ['elicitation', 'parentEventId'],
  },
  'user.message.inbound': {
    envelope: OPEN_PARTS,
    props: {
      message: obj(
        { channel: nonEmpty, sender: nonEmpty, messages: arr(messageWithRole('user')) },
        { required: ['channel', 'sender', 'messages'], closed: true },
      ),
    },
    required: ['message'],
  },
  'user.message.outbound': {
    envelope: OPEN_PARTS,
    props: {
      message: obj(
        { channel: nonEmpty, messages: arr(messageWithRole('assistant')) },
        { required: ['channel', 'messages'], closed: true },
      ),
    },
    required: ['message'],
  },
  'task.change.before': { envelope: OPEN_PARTS, props: { task: taskObject }, required: ['task'] },
  'task.change.after': { envelope: OPEN_PARTS, props: { task: taskObject }, required: ['task'] },
  'workspace.change.before': {
    envelope: OPEN_PARTS,
    props: { workspace: workspaceObject },
    required: ['workspace'],
  },
  'workspace.change.after': {
    envelope: OPEN_PARTS,
    props: { workspace: workspaceObject },
    required: ['workspace'],
  },
  'file.changed': {
    envelope: OPEN_PARTS,
    props: {
      changes: arr(
        obj(
          {
            path: nonEmpty,
            operation: oneOfValues(['create', 'update', 'remove']),
            agentCaused: bool,
            before: contentPart,
            after: contentPart,
          },
          { required: ['path', 'operation', 'agentCaused'], closed: true },
        ),
        { min: 1 },
      ),
    },
    required: ['changes'],
  },
  'hook.failure': {
    envelope: OPEN_PARTS,
    props: {
      failure: obj(
        { backendId: nonEmpty, reason: nonEmpty, policy: oneOfValues(['fail-open', 'fail-closed']) },
        { required: ['backendId', 'reason', 'policy'], closed: true },
      ),
    },
    required: ['failure', 'parentEventId'],
  },
};

const CHECKS: ReadonlyMap<string, Check> = new Map(
  Object.entries(DEFINITIONS).map(([type, def]) => {
    const props: Props = { ...envelope(def.envelope), type: constant(type), ...def.props };
    const rules: ObjectRules = { required: [...ENVELOPE_REQUIRED, ...def.required] };
    if (def.forbidden) rules.forbidden = def.forbidden;
    if (def.also) rules.also = def.also;
    return [type, obj(props, rules)];
  }),
);

/** The event types this validator knows: the 32 of the catalogue. */
export const VALIDATED_EVENT_TYPES: readonly string[] = [...CHECKS.keys()];

/** Check one event against the definition its `type` selects. Unknown types are unsupported. */
export const eventCheck: Check = (value, pointer, out) => {
  if (!isJsonObject(value)) return issue(out, pointer, 'type', 'an event must be an object');
  const type = value.type;
  const check = typeof type === 'string' ? CHECKS.get(type) : undefined;
  if (!check) {
    if (!('type' in value)) return issue(out, `${pointer}/type`, 'required', "'type' is required");
    return issue(
      out,
      `${pointer}/type`,
      'event.unknown-type',
      `unknown event type ${JSON.stringify(type)}: unsupported semantics, not an ignorable field`,
    );
  }
  check(value, pointer, out);
};

export function validateEvent(event: unknown, pointer = ''): Issue[] {
  return collect((out) => eventCheck(event, pointer, out));
}
