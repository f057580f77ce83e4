/**
 * The OpenCode adapter's subagent attribution, on what the pinned OpenCode really produced when its
 * `task` tool ran a subagent (test/agents/fixtures/opencode/subagent, `node
 * dist/test/agents/capture.js opencode/subagent`): the `post-*` files are what Tally's plugin posted,
 * the `plugin-*` files what an independent recording plugin saw of the same run. Which session each
 * hook came from, which session is the child and whose model is whose are read from the latter.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { validateEvent } from '../../src/ahp/messages/index.js';
import { MODEL_EXTENSION } from '../../src/capture/codex/translate.js';
import { translateOpenCode } from '../../src/capture/opencode/translate.js';
import { CaptureError } from '../../src/capture/types.js';
import { AgentGraphBuilder } from '../../src/evidence/receipt/agents.js';
import type { EventRecord } from '../../src/evidence/record/record.js';

const DIR = new URL('../../../test/agents/fixtures/opencode/subagent/', import.meta.url).pathname;
const KEPT = new Set(['event.unknown-type', 'unknown-field']);

type Json = Record<string, unknown>;
const read = (name: string): Json => JSON.parse(readFileSync(join(DIR, name), 'utf8')) as Json;
const obj = (v: unknown): Json => (v !== null && typeof v === 'object' ? (v as Json) : {});

/** The fixture's files in the order OpenCode fired them. */
const order = (read('summary.json').hookOrder as string[]).filter((n) => readdirSync(DIR).includes(n));
const posts = order.filter((n) => n.startsWith('post-')).map((n) => ({ file: n, body: obj(read(n).body) }));
const raw = order.filter((n) => n.startsWith('plugin-')).map((n) => read(n));

// The oracle, from the recording plugin: the session the user started and the task's child session.
const created = raw.filter((c) => c.hook === 'event' && obj(c.input).type === 'session.created');
const infoOf = (c: Json) => obj(obj(obj(c.input).properties).info);
const root = String(infoOf(created.find((c) => infoOf(c).parentID === undefined)!).id);
const childInfo = infoOf(created.find((c) => infoOf(c).parentID !== undefined)!);
const child = String(childInfo.id);
/** OpenCode's own answer to `session.get` in a hook of each session: its model. */
const modelOf = new Map(
  raw
    .filter((c) => c.hook === 'tool.execute.before')
    .map((c) => [String(obj(c.input).sessionID), obj(obj(c.session).model)]),
);

/** The session a hook came from, as the recording plugin saw that same hook. */
function hookSession(body: Json): string {
  const input = obj(body.input);
  if (typeof input.callID === 'string') {
    const seen = raw.find((c) => c.hook === body.hook_event_name && obj(c.input).callID === input.callID);
    return String(obj(seen?.input).sessionID);
  }
  return String(input.sessionID ?? obj(obj(body.event).properties).sessionID);
}

describe('OpenCode subagents (payloads captured from the real CLI)', () => {
  it('the run had one child session, created by the task call, under the session the user started', () => {
    assert.notEqual(root, child);
    assert.equal(childInfo.parentID, root);
    assert.equal(childInfo.agent, 'general');
    assert.ok(posts.length >= 16, posts.map((p) => p.file).join(' '));
  });

  it('every post lands in the session the user started; a child session’s events are its subagent’s', () => {
    const kinds: string[] = [];
    for (const { file, body } of posts) {
      const captured = translateOpenCode(body);
      const event = captured.event as Json;
      const issues = validateEvent({ id: 'evt_test', time: '2026-12-06T00:00:00Z', ...event }).filter(
        (i) => !KEPT.has(i.rule),
      );
      assert.deepEqual(issues, [], `${file}: ${JSON.stringify(issues)}`);
      assert.equal(captured.harnessSession, root, file);
      assert.equal(obj(event.session).id, root, file);
      const acting = hookSession(body);
      assert.equal(captured.agent.instance, acting, file);
      const session = obj(event.session);
      const model = modelOf.get(acting)!;
      if (acting === child) {
        assert.equal(captured.agent.parent, root, file);
        assert.equal(captured.agent.type, 'general', file);
        assert.deepEqual(session.agent, { id: child, type: 'general' }, file);
      } else {
        assert.equal(captured.agent.parent, undefined, file);
        assert.deepEqual(session.agent, { id: root, type: 'primary' }, file);
      }
      // The model and provider OpenCode reports for the acting session (none yet at its creation).
      if (session.model !== undefined || body.hook_event_name !== 'event.session.created') {
        assert.equal(session.model, model.id, file);
        assert.deepEqual(obj(event.extensions)[MODEL_EXTENSION], { provider: model.providerID }, file);
      }
      kinds.push(`${acting === child ? 'child' : 'root'}:${String(event.type)}`);
    }
    const distinct = [...new Set(kinds)].sort();
    assert.deepEqual(distinct, [
      'child:dev.tally.agent.start',
      'child:dev.tally.agent.stop',
      'child:tool.after',
      'child:tool.before',
      'child:turn.start',
      'root:session.start',
      'root:tool.after',
      'root:tool.before',
      'root:turn.end',
      'root:turn.start',
    ]);
    assert.notEqual(modelOf.get(child)?.id, modelOf.get(root)?.id, 'the subagent runs a model of its own');
  });

  it('the task call’s result names the subagent it ran', () => {
    const after = posts.find((p) => p.file === 'post-tool.execute.after-task-1.json')!.body;
    const native = obj(obj(translateOpenCode(after).event.extensions)['dev.tally.native']);
    assert.deepEqual(native.spawned, { agent_id: child, agent_name: 'general' });
  });

  it('the agent graph has the subagent under the session, each with its own model and provider', () => {
    const graph = new AgentGraphBuilder();
    posts.forEach(({ body }, seq) => {
      const { agent, event } = translateOpenCode(body);
      // The record attribution the recorder gives a subagent and the session's own agent.
      const attribution = agent.parent
        ? { name: agent.type, instance: agent.instance, parent: agent.parent }
        : { name: 'coder', instance: agent.instance };
      graph.add({ seq, agent: attribution, event } as unknown as EventRecord);
    });
    const built = graph.build();
    assert.deepEqual(built.roots, [root]);
    const nodes = new Map(built.agents.map((a) => [a.id, a]));
    assert.deepEqual(nodes.get(root)?.children, [child]);
    assert.equal(nodes.get(child)?.parent, root);
    assert.equal(nodes.get(child)?.parent_seen, true);
    const use = (m: Json) => [{ model: String(m.id), provider: String(m.providerID) }];
    assert.deepEqual(nodes.get(child)?.models, use(modelOf.get(child)!));
    assert.deepEqual(nodes.get(root)?.models, use(modelOf.get(root)!));
  });

  it('a payload whose session info is not its hook’s, or a foreign session with no parent, is refused', () => {
    const before = posts.find((p) => p.file === 'post-tool.execute.before-write-1.json')!.body;
    const bad = (body: Json, pointer: string) =>
      assert.throws(
        () => translateOpenCode(body),
        (e: unknown) => e instanceof CaptureError && e.detail?.pointer === pointer,
      );
    bad({ ...before, session: { ...obj(before.session), id: 'ses_other' } }, '/session/id');
    const { parentID: _parent, ...orphan } = obj(before.session);
    bad({ ...before, session: orphan }, '/session/parentID');
  });

  it('a payload with no session info (an older plugin, a spooled line) is the session’s own agent', () => {
    const before = posts.find((p) => p.file === 'post-tool.execute.before-write-2.json')!.body;
    const { session: _info, ...plain } = before;
    const captured = translateOpenCode(plain);
    assert.deepEqual(captured.agent, { instance: root });
    assert.deepEqual(obj(captured.event.session).agent, { id: root, type: 'primary' });
  });
});
