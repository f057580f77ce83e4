/**
 * Receiver-side task/workspace lineage. Oracles: the rules of the spec page
 * task-workspace-lineage.md ("Lineage and actual changes": identity is (source, id), the parent is
 * a same-source event, parentage is single and acyclic, an unknown parent is legal for a
 * subscriber, a known proposal's after matches its identity, an actual change changes something)
 * and the official corpus: the lineage rows of interop/catalogue-scenarios.json with their
 * `deliveries`, and the official fixtures the variants below start from. Every variant is checked
 * against the official schemas first, so a refusal here is lineage and nothing else.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { createBackend } from '../../src/ahp/backend/kit.js';
import { LineageTracker } from '../../src/ahp/backend/lineage.js';
import { FIXTURE_DIR, officialValid } from './messages-oracle.js';
import { readInterop } from './scenario-replay.js';

type Json = Record<string, unknown>;
type Message = { jsonrpc: string; method: string; id?: string; params: { event: Json } & Json };
type Rpc = { error?: { code: number; data?: { issues?: { pointer: string; rule: string }[] } } };

interface Row {
  id: string;
  category: string;
  steps: { op: string; message?: Message }[];
  expected: { deliveries?: { accepted: boolean; errorKind: string | null }[] };
}

const ROWS = readInterop<{ scenarios: Row[] }>('catalogue-scenarios.json').scenarios;
const CATALOGUE = 'urn:ahp:catalogue';

/** A copy of the message of step `step` of catalogue row `id`. */
function corpus(id: string, step = 0): Message {
  const row = ROWS.find((r) => r.id === id);
  assert.ok(row?.steps[step]?.message, `row ${id} step ${step} is in the corpus`);
  return structuredClone(row.steps[step].message);
}

/** An official fixture notification, given a new identity (and parent) as the interop suite does. */
function fixture(name: string, id: string, parent?: string, source = 'urn:test:harness'): Message {
  const message = JSON.parse(
    readFileSync(new URL(`http/${name}.valid.json`, FIXTURE_DIR), 'utf8'),
  ) as Message;
  Object.assign(message.params.event, { id, source }, parent === undefined ? {} : { parentEventId: parent });
  return message;
}

/** The message is valid alone by the official schemas: what refuses it must be lineage. */
function schemaValid(message: Message): Message {
  assert.ok(officialValid('schema.json', message), `schema-valid: ${JSON.stringify(message.params.event)}`);
  return message;
}

const issuesOf = (tracker: LineageTracker, message: Message) =>
  tracker.accept(schemaValid(message).params.event).map(({ pointer, rule }) => ({ pointer, rule }));

/** Task variants keep the fixture's closed `task` keys and change only its values. */
function withTask(message: Message, task: Json): Message {
  Object.assign(message.params.event.task as Json, task);
  return message;
}

describe('lineage: the corpus rows that expect a lineage refusal', () => {
  const refused = ROWS.filter((r) => r.expected.deliveries?.some((d) => d.errorKind === 'lineage'));

  test('the corpus has exactly the three rows, each one rawNotify the schema accepts', () => {
    assert.deepEqual(refused.map((r) => r.id).sort(), [
      'no-op-actual-task',
      'source-local-cycle',
      'wrong-known-task-parent',
    ]);
    for (const row of refused) {
      assert.deepEqual(
        row.steps.map((s) => s.op),
        ['rawNotify'],
      );
      schemaValid(row.steps[0]!.message!);
    }
  });

  test('source-local-cycle: an event that names itself as parent is a cycle, with no history', () => {
    assert.deepEqual(issuesOf(new LineageTracker(), corpus('source-local-cycle')), [
      { pointer: '/params/event/parentEventId', rule: 'lineage.cycle' },
    ]);
  });

  test('no-op-actual-task: an actual update whose change equals its prior, with no history', () => {
    assert.deepEqual(issuesOf(new LineageTracker(), corpus('no-op-actual-task')), [
      { pointer: '/params/event/task/change', rule: 'lineage.no-op' },
    ]);
  });

  test('wrong-known-task-parent: legal alone (unknown parent), refused once its parent is known', () => {
    // A subscriber may not have received the parent and must not demand it.
    assert.deepEqual(issuesOf(new LineageTracker(), corpus('wrong-known-task-parent')), []);
    // The parent it names is the proposal of row task-modified-actual-pair, earlier in the file,
    // which the interop matrix delivers to the same receiver first: task1, operation update.
    const proposal = corpus('task-modified-actual-pair', 0);
    assert.equal(proposal.params.event.id, corpus('wrong-known-task-parent').params.event.parentEventId);
    const tracker = new LineageTracker();
    assert.deepEqual(issuesOf(tracker, proposal), []);
    assert.deepEqual(issuesOf(tracker, corpus('wrong-known-task-parent')), [
      { pointer: '/params/event/task/id', rule: 'lineage.proposal' },
      { pointer: '/params/event/task/operation', rule: 'lineage.proposal' },
    ]);
    // A refused event is not remembered.
    assert.equal(tracker.knows(CATALOGUE, 'wrong:task'), false);
  });
});

describe('lineage: rows the corpus accepts are accepted', () => {
  const accepted = ROWS.filter(
    (r) => r.category === 'lineage' && r.expected.deliveries?.every((d) => d.accepted) === true,
  );

  test('one receiver, every accepted lineage row in file order', () => {
    assert.ok(accepted.length >= 10);
    const tracker = new LineageTracker();
    for (const row of accepted)
      for (const step of row.steps) assert.deepEqual(issuesOf(tracker, step.message!), [], row.id);
  });

  test('a known proposal pair keeps identity, not proposed values (task-modified-actual-pair)', () => {
    const tracker = new LineageTracker();
    const [before, after] = [corpus('task-modified-actual-pair', 0), corpus('task-modified-actual-pair', 1)];
    assert.notDeepEqual((before.params.event.task as Json).change, (after.params.event.task as Json).change);
    assert.deepEqual(issuesOf(tracker, before), []);
    assert.deepEqual(issuesOf(tracker, after), []);
  });

  test('a parent id in another source is another event (source-local-parent)', () => {
    const tracker = new LineageTracker();
    assert.deepEqual(issuesOf(tracker, corpus('source-local-parent', 0)), []);
    // Even with another task: "same" in urn:source:b is not the proposal of urn:source:a.
    const other = withTask(corpus('source-local-parent', 1), { id: 'different-task', operation: 'update' });
    assert.deepEqual(issuesOf(tracker, other), []);
  });
});

describe('lineage: proposal pairs', () => {
  test('a parent that arrives after its child is judged against it (late-parent-first-child)', () => {
    const tracker = new LineageTracker();
    assert.deepEqual(issuesOf(tracker, corpus('late-parent-first-child', 0)), []);
    const parent = withTask(corpus('late-parent-first-child', 1), { id: 'another-task' });
    assert.deepEqual(issuesOf(tracker, parent), [
      { pointer: '/params/event/task/id', rule: 'lineage.proposal' },
    ]);
    assert.deepEqual(issuesOf(tracker, corpus('late-parent-first-child', 1)), []);
  });

  test('a task after whose proposal has another operation is refused', () => {
    const tracker = new LineageTracker();
    issuesOf(tracker, fixture('catalogue-task.change.before', 'before'));
    const after = withTask(fixture('catalogue-task.change.after', 'after', 'before'), {
      operation: 'remove',
      change: {},
    });
    assert.deepEqual(issuesOf(tracker, after), [
      { pointer: '/params/event/task/operation', rule: 'lineage.proposal' },
    ]);
  });

  test('a workspace after whose known proposal has another kind is refused; other values are not', () => {
    const tracker = new LineageTracker();
    assert.deepEqual(issuesOf(tracker, corpus('workspace-file-causal-chain', 0)), []);
    const roots = corpus('workspace-file-causal-chain', 1);
    roots.params.event.workspace = { kind: 'roots', change: { workspaceRoots: ['/a'] } };
    assert.deepEqual(issuesOf(tracker, roots), [
      { pointer: '/params/event/workspace/kind', rule: 'lineage.proposal' },
    ]);
    // The corpus's own actual change applies another cwd than proposed: accepted.
    assert.deepEqual(issuesOf(tracker, corpus('workspace-file-causal-chain', 1)), []);
  });

  test('pairs are only before -> after of one family: other parents are not compared', () => {
    const tracker = new LineageTracker();
    issuesOf(tracker, fixture('catalogue-task.change.after', 'first'));
    const next = withTask(fixture('catalogue-task.change.after', 'second', 'first'), { id: 'task2' });
    assert.deepEqual(issuesOf(tracker, next), []);
  });
});

describe('lineage: cycles', () => {
  test('a late parent that closes a cycle is refused and not remembered', () => {
    const tracker = new LineageTracker();
    assert.deepEqual(issuesOf(tracker, fixture('catalogue-task.change.before', 'a', 'b')), []);
    assert.deepEqual(issuesOf(tracker, fixture('catalogue-task.change.before', 'b', 'a')), [
      { pointer: '/params/event/parentEventId', rule: 'lineage.cycle' },
    ]);
    assert.equal(tracker.knows('urn:test:harness', 'b'), false);
  });

  test('a cycle through a remembered chain is refused', () => {
    const tracker = new LineageTracker();
    issuesOf(tracker, fixture('catalogue-task.change.before', 'x', 'z'));
    issuesOf(tracker, fixture('catalogue-task.change.before', 'y', 'x'));
    assert.deepEqual(issuesOf(tracker, fixture('catalogue-task.change.before', 'z', 'y')), [
      { pointer: '/params/event/parentEventId', rule: 'lineage.cycle' },
    ]);
    // The same chain in another source is unrelated.
    assert.deepEqual(
      issuesOf(tracker, fixture('catalogue-task.change.before', 'z', 'y', 'urn:test:other')),
      [],
    );
  });
});

describe('lineage: actual changes change something', () => {
  test('an actual task update with no changed fields is refused; a removal with none is not', () => {
    const empty = withTask(fixture('catalogue-task.change.after', 'e'), { operation: 'update', change: {} });
    assert.deepEqual(issuesOf(new LineageTracker(), empty), [
      { pointer: '/params/event/task/change', rule: 'lineage.no-op' },
    ]);
    const removal = withTask(fixture('catalogue-task.change.after', 'r'), {
      operation: 'remove',
      change: {},
    });
    assert.deepEqual(issuesOf(new LineageTracker(), removal), []);
  });

  test('an update that changes one of its fields is an actual change', () => {
    const partly = withTask(fixture('catalogue-task.change.after', 'p'), {
      operation: 'update',
      change: { status: 'open', owner: 'b' },
      prior: { status: 'open', owner: 'a' },
    });
    assert.deepEqual(issuesOf(new LineageTracker(), partly), []);
    // A field unknown before is a change too: prior holds only known previous fields.
    const unknown = withTask(fixture('catalogue-task.change.after', 'u'), {
      operation: 'update',
      change: { status: 'open', owner: 'b' },
      prior: { status: 'open' },
    });
    assert.deepEqual(issuesOf(new LineageTracker(), unknown), []);
  });

  test('a proposal is not an actual change: a before that changes nothing is accepted', () => {
    const before = withTask(fixture('catalogue-task.change.before', 'b'), {
      operation: 'update',
      change: { status: 'open' },
      prior: { status: 'open' },
    });
    assert.deepEqual(issuesOf(new LineageTracker(), before), []);
  });

  test('a workspace after whose change equals its prior is refused', () => {
    const after = fixture('catalogue-workspace.change.after', 'w');
    after.params.event.workspace = { kind: 'cwd', change: { cwd: '/same' }, prior: { cwd: '/same' } };
    assert.deepEqual(issuesOf(new LineageTracker(), after), [
      { pointer: '/params/event/workspace/change', rule: 'lineage.no-op' },
    ]);
    after.params.event.workspace = { kind: 'cwd', change: { cwd: '/new' }, prior: { cwd: '/same' } };
    assert.deepEqual(issuesOf(new LineageTracker(), after), []);
  });

  test('a file update whose after equals its before is refused', () => {
    const changed = fixture('file-changed-inline', 'f');
    assert.deepEqual(issuesOf(new LineageTracker(), changed), []);
    const change = (changed.params.event.changes as Json[])[0]!;
    change.after = structuredClone(change.before);
    changed.params.event.id = 'f2';
    assert.deepEqual(issuesOf(new LineageTracker(), changed), [
      { pointer: '/params/event/changes/0/after', rule: 'lineage.no-op' },
    ]);
  });
});

describe('lineage: identity', () => {
  test('a repeat of a remembered event is accepted; its identity may not change', () => {
    const tracker = new LineageTracker();
    const first = corpus('task-modified-actual-pair', 1);
    assert.deepEqual(issuesOf(tracker, first), []);
    assert.deepEqual(issuesOf(tracker, corpus('task-modified-actual-pair', 1)), [], 'a retry');
    const view = corpus('task-modified-actual-pair', 1);
    view.params.event.items = [];
    assert.deepEqual(issuesOf(tracker, view), [], 'another subscription view');

    const otherType = corpus('task-modified-actual-pair', 0);
    otherType.params.event.id = first.params.event.id;
    assert.deepEqual(issuesOf(tracker, otherType), [
      { pointer: '/params/event/type', rule: 'lineage.identity' },
      { pointer: '/params/event/parentEventId', rule: 'lineage.identity' },
    ]);
    const otherParent = corpus('task-modified-actual-pair', 1);
    otherParent.params.event.parentEventId = 'elsewhere';
    assert.deepEqual(issuesOf(tracker, otherParent), [
      { pointer: '/params/event/parentEventId', rule: 'lineage.identity' },
    ]);
    const otherTask = withTask(corpus('task-modified-actual-pair', 1), { id: 'task2' });
    assert.deepEqual(issuesOf(tracker, otherTask), [
      { pointer: '/params/event/task/id', rule: 'lineage.identity' },
    ]);
  });
});

describe('lineage: bounded memory', () => {
  test('the oldest event of a source is forgotten first; a forgotten parent is an unknown one', () => {
    const tracker = new LineageTracker({ maxEventsPerSource: 2 });
    for (const id of ['p1', 'p2', 'p3']) issuesOf(tracker, fixture('catalogue-task.change.before', id));
    assert.deepEqual(
      ['p1', 'p2', 'p3'].map((id) => tracker.knows('urn:test:harness', id)),
      [false, true, true],
    );
    const child = (id: string, parent: string) =>
      withTask(fixture('catalogue-task.change.after', id, parent), { id: 'another-task' });
    assert.deepEqual(issuesOf(tracker, child('c1', 'p1')), []);
    assert.deepEqual(issuesOf(tracker, child('c3', 'p3')), [
      { pointer: '/params/event/task/id', rule: 'lineage.proposal' },
    ]);
  });

  test('over a long run the window stays the newest events, in arrival order', () => {
    const tracker = new LineageTracker({ maxEventsPerSource: 10 });
    const total = 5000;
    for (let i = 0; i < total; i++) issuesOf(tracker, fixture('catalogue-task.change.before', `e${i}`));
    const known = (i: number) => tracker.knows('urn:test:harness', `e${i}`);
    for (let i = total - 10; i < total; i++) assert.equal(known(i), true, `e${i} is among the newest`);
    for (const i of [0, 1024, 2048, total - 11]) assert.equal(known(i), false, `e${i} is forgotten`);
  });

  test('a forgotten child no longer holds its late parent to account', () => {
    const tracker = new LineageTracker({ maxEventsPerSource: 1 });
    issuesOf(tracker, fixture('catalogue-task.change.after', 'child', 'late'));
    issuesOf(tracker, fixture('catalogue-task.change.before', 'unrelated'));
    const parent = withTask(fixture('catalogue-task.change.before', 'late'), { id: 'another-task' });
    assert.deepEqual(issuesOf(tracker, parent), []);
  });

  test('the least recently used source is forgotten first', () => {
    const tracker = new LineageTracker({ maxSources: 2 });
    const at = (source: string) => fixture('catalogue-task.change.before', 'e', undefined, source);
    issuesOf(tracker, at('urn:test:a'));
    issuesOf(tracker, at('urn:test:b'));
    issuesOf(tracker, fixture('catalogue-task.change.before', 'e2', undefined, 'urn:test:a'));
    issuesOf(tracker, at('urn:test:c'));
    assert.deepEqual(
      ['urn:test:a', 'urn:test:b', 'urn:test:c'].map((s) => tracker.knows(s, 'e')),
      [true, false, true],
    );
  });

  test('bounds below one are refused', () => {
    assert.throws(() => new LineageTracker({ maxEventsPerSource: 0 }), /maxEventsPerSource/);
    assert.throws(() => new LineageTracker({ maxSources: 1.5 }), /maxSources/);
  });
});

describe('backend kit: the lineage option', () => {
  function observer(options?: Parameters<typeof createBackend>[1]) {
    const observed: Json[] = [];
    const kit = createBackend({ observe: (event) => void observed.push(event) }, options);
    return { kit, observed };
  }

  test('off by default: the kit judges each message alone', async () => {
    const { kit, observed } = observer();
    for (const id of ['source-local-cycle', 'no-op-actual-task']) await kit.handleMessage(corpus(id));
    assert.equal(observed.length, 2);
  });

  test('on: a refused notification never reaches observe, an accepted one does', async () => {
    const { kit, observed } = observer({ lineage: true });
    await kit.handleMessage(corpus('task-modified-actual-pair', 0));
    for (const id of ['wrong-known-task-parent', 'source-local-cycle', 'no-op-actual-task']) {
      assert.equal(await kit.handleMessage(corpus(id)), undefined, 'a notification is never answered');
    }
    await kit.handleMessage(corpus('task-modified-actual-pair', 1));
    assert.deepEqual(
      observed.map((e) => e.id),
      ['task:proposal', 'task:actual'],
    );
  });

  test('a tracker passed in is the one the kit fills', async () => {
    const tracker = new LineageTracker();
    const { kit } = observer({ lineage: tracker });
    await kit.handleMessage(corpus('task-modified-actual-pair', 0));
    assert.equal(tracker.knows(CATALOGUE, 'task:proposal'), true);
  });

  /** An intercept request for a task proposal, from the official fixture's event. */
  function interceptRequest(id: string, parent?: string): Message {
    const { event } = fixture('catalogue-task.change.before', id, parent).params;
    const request = {
      jsonrpc: '2.0',
      id,
      method: 'hooks/intercept',
      params: { protocolVersion: 'draft', event, capabilities: { effects: ['deny'] } },
    };
    assert.ok(officialValid('intercept-request.schema.json', request));
    return request;
  }

  test('a refused intercept request is -32602 naming the lineage issues; the handler is not called', async () => {
    let calls = 0;
    const kit = createBackend(
      {
        intercept: () => {
          calls++;
          return [];
        },
      },
      { lineage: true },
    );
    const cycle = (await kit.handleMessage(interceptRequest('loop', 'loop'))) as Rpc;
    assert.equal(cycle.error?.code, -32602);
    assert.deepEqual(
      cycle.error?.data?.issues?.map(({ pointer, rule }) => ({ pointer, rule })),
      [{ pointer: '/params/event/parentEventId', rule: 'lineage.cycle' }],
    );
    assert.equal(calls, 0);
    // Nothing was remembered: the same id with a legal parent is accepted.
    const ok = (await kit.handleMessage(interceptRequest('loop', 'earlier'))) as Rpc;
    assert.equal(ok.error, undefined);
    assert.equal(calls, 1);
  });

  test('an intercepted event observed after settlement is the same event, not a reuse', async () => {
    const observed: Json[] = [];
    const kit = createBackend(
      { intercept: () => [], observe: (event) => void observed.push(event) },
      { lineage: true },
    );
    const request = interceptRequest('boundary');
    assert.equal(((await kit.handleMessage(request)) as Rpc).error, undefined);
    await kit.handleMessage({
      jsonrpc: '2.0',
      method: 'hooks/observe',
      params: { protocolVersion: 'draft', event: request.params.event },
    });
    assert.equal(observed.length, 1);
  });
});
