/**
 * The agent graph: every agent that acted in the session, keyed by its instance (or its name when
 * it reported none), linked to the agent that spawned it, with the models it used.
 */
import { compareCodeUnits, sortedUnique, stringField } from '../normalize.js';
import type { EventRecord } from '../record/record.js';
import { agentId } from './calls.js';

export interface ModelUse {
  model: string;
  provider?: string;
}

export interface AgentNode {
  id: string;
  name: string;
  instance?: string;
  parent?: string;
  /** False when `parent` names an agent that never produced a record in this session. */
  parent_seen?: boolean;
  children: string[];
  models: ModelUse[];
  event_count: number;
  tool_calls: number;
  first_seq: number;
  last_seq: number;
}

export interface AgentGraph {
  agents: AgentNode[];
  /** Agents with no parent, or whose parent never appeared. */
  roots: string[];
  /** Records carrying no agent attribution (a reconcile pass, the CLI). */
  unattributed_events: number;
}

/**
 * Models an event names: model events carry `{id, provider}`; any event may name the model its
 * agent runs in `session.model` (harnesses that report it on every hook, e.g. Codex), with its
 * provider in the `dev.tally.model` extension when the adapter learned it.
 */
function modelsOfEvent(event: EventRecord['event']): ModelUse[] {
  const found: ModelUse[] = [];
  const fromObject = (value: unknown): void => {
    const id = stringField(value, 'id');
    if (id === undefined) return;
    const provider = stringField(value, 'provider');
    found.push(provider === undefined ? { model: id } : { model: id, provider });
  };
  switch (event.type) {
    case 'model.request.before':
    case 'model.response.after':
    case 'model.error':
      fromObject(event.model);
      break;
    case 'model.switch.after':
      fromObject(event.current);
      break;
  }
  const model = stringField(event.session, 'model');
  if (model !== undefined && !found.some((use) => use.model === model)) {
    // Its provider, when the adapter learned it from the harness (Codex's rollout file; the name is
    // capture's MODEL_EXTENSION, which this layer cannot import: test/capture/codex-provider.test.ts
    // holds the two together).
    const extensions = event.extensions as Record<string, unknown> | undefined;
    const provider = stringField(extensions?.['dev.tally.model'], 'provider');
    found.push(provider === undefined ? { model } : { model, provider });
  }
  return found;
}

export class AgentGraphBuilder {
  private readonly nodes = new Map<string, AgentNode>();
  private readonly models = new Map<string, Map<string, ModelUse>>();
  private unattributed = 0;

  add(record: EventRecord): void {
    const id = agentId(record);
    const agent = record.agent;
    if (id === undefined || agent === undefined) {
      this.unattributed++;
      return;
    }
    let node = this.nodes.get(id);
    if (node === undefined) {
      node = {
        id,
        name: agent.name,
        children: [],
        models: [],
        event_count: 0,
        tool_calls: 0,
        first_seq: record.seq,
        last_seq: record.seq,
      };
      if (agent.instance !== undefined) node.instance = agent.instance;
      this.nodes.set(id, node);
      this.models.set(id, new Map());
    }
    node.event_count++;
    node.last_seq = record.seq;
    if (node.parent === undefined && agent.parent !== undefined && agent.parent !== id)
      node.parent = agent.parent;
    const uses = this.models.get(id)!;
    const own: ModelUse[] = [];
    if (agent.model !== undefined)
      own.push(
        agent.provider === undefined
          ? { model: agent.model }
          : { model: agent.model, provider: agent.provider },
      );
    for (const use of [...own, ...modelsOfEvent(record.event)])
      uses.set(JSON.stringify([use.model, use.provider ?? null]), use);
  }

  countCall(agent: string | undefined): void {
    const node = agent === undefined ? undefined : this.nodes.get(agent);
    if (node !== undefined) node.tool_calls++;
  }

  build(): AgentGraph {
    const ids = [...this.nodes.keys()].sort(compareCodeUnits);
    const agents: AgentNode[] = [];
    const roots: string[] = [];
    for (const id of ids) {
      const node = this.nodes.get(id)!;
      node.children = sortedUnique(ids.filter((other) => this.nodes.get(other)!.parent === id));
      node.models = [...this.models.get(id)!.values()].sort(
        (a, b) => compareCodeUnits(a.model, b.model) || compareCodeUnits(a.provider ?? '', b.provider ?? ''),
      );
      if (node.parent !== undefined) {
        node.parent_seen = this.nodes.has(node.parent);
        if (!node.parent_seen) roots.push(id);
      } else {
        roots.push(id);
      }
      agents.push(node);
    }
    return { agents, roots, unattributed_events: this.unattributed };
  }
}
