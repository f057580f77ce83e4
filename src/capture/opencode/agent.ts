/**
 * Which OpenCode agent a plugin payload came from. The pinned OpenCode runs a subagent (its `task`
 * tool) in a child session of its own, whose info names its `parentID`, its `agent` and its
 * `model`; every hook the subagent fires carries the child's session id, never the parent's
 * (test/agents/opencode-subagent.test.ts). Tally's plugin posts OpenCode's info of the hook's
 * session as `session` and the session the user started as `session_id`, so one Tally session
 * holds the subagents too: a child session is an instance of its own whose parent is the session
 * that ran its task, and its type the agent it runs (`general`, `explore`, a configured one).
 */
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { CaptureError, type HarnessAgent } from '../types.js';

export interface OpenCodeActor {
  /** The session the user started: the harness session of the Tally session. */
  harnessSession: string;
  agent: HarnessAgent;
  /** The provider of `agent.model`, as OpenCode names it. */
  provider?: string;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The session id the hook itself carries (a tool or chat hook's `input`, an event's properties). */
function hookSession(payload: JsonObject): string | undefined {
  if (isJsonObject(payload.input)) return text(payload.input.sessionID);
  const event = payload.event;
  if (isJsonObject(event) && isJsonObject(event.properties)) return text(event.properties.sessionID);
  return undefined;
}

export function actorOf(payload: JsonObject, root: string): OpenCodeActor {
  const own = hookSession(payload) ?? root;
  const info = isJsonObject(payload.session) ? payload.session : {};
  if (info.id !== undefined && info.id !== own)
    throw new CaptureError(
      'bad-payload',
      `/session/id: the session info is not of the hook's own session ${own}`,
      { pointer: '/session/id' },
    );
  const parent = text(info.parentID);
  if (parent === undefined && own !== root)
    throw new CaptureError(
      'bad-payload',
      `/session/parentID: session ${own} is not ${root} and names no parent`,
      { pointer: '/session/parentID' },
    );
  const model = isJsonObject(info.model) ? text(info.model.id) : undefined;
  const provider = isJsonObject(info.model) ? text(info.model.providerID) : undefined;
  const type = parent === undefined ? undefined : (text(info.agent) ?? 'subagent');
  return {
    harnessSession: root,
    agent: {
      instance: own,
      ...(parent ? { parent } : {}),
      ...(type ? { type } : {}),
      ...(model ? { model } : {}),
    },
    ...(model && provider ? { provider } : {}),
  };
}
