/**
 * Dispatcher behaviour the interop rows do not script: matching (AHP-REG-002), serial order,
 * deadlines, retries with identical ids, each failure class under fail-open and fail-closed,
 * content selection before anything leaves, observation after settlement, and the CLI as a real
 * process against a real stdio backend.
 */

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { InterceptCapabilities } from '../../src/ahp/harness/compose.js';
import { DispatchError, SYNTHETIC_DENY_REASON } from '../../src/ahp/harness/dispatcher.js';
import { eventCapabilities } from '../../src/ahp/protocol/capabilities.js';
import type { MemoryHandler } from '../../src/ahp/transports/memory.js';
import { type JsonRpcRequest, TransportError } from '../../src/ahp/transports/transport.js';
import type { CanonicalEvent } from '../../src/evidence/record/record.js';
import { tempDir } from '../temp.js';
import { answer, eventOf, intercept, observe, setup } from './dispatch-helpers.js';
import { officialValid } from './messages-oracle.js';

const event: CanonicalEvent = {
  id: 'evt-1',
  source: 'urn:test',
  type: 'tool.before',
  time: '2026-01-01T00:00:00Z',
  call: { id: 'c1' },
  path: 'native',
  tool: { name: 'shell', origin: 'native', input: { command: 'ls' } },
  items: [{ id: 'p1', kind: 'text', mediaType: 'text/plain', selection: 'body', text: 'secret plan' }],
  native: { raw: true },
};
const caps: InterceptCapabilities = {
  effects: ['deny', 'allow', 'ask', 'modify', 'message'],
  modify: { input: { replace: true, merge: true } },
};

test('only matching subscriptions with the right mode receive anything', async () => {
  const { dispatcher, received } = setup([
    { id: 'org.example.exact', subs: [intercept('exact')] },
    { id: 'org.example.family', subs: [intercept('family', { events: ['tool.*'] })] },
    { id: 'org.example.other', subs: [intercept('other', { events: ['model.*'] })] },
    { id: 'org.example.watch', subs: [observe('watch', { events: ['tool.before'] })] },
  ]);
  const outcome = await dispatcher.dispatch({ event, capabilities: caps });
  assert.deepStrictEqual(
    outcome.subscriptions.map((s) => [s.backend, s.method, s.status]),
    [
      ['org.example.exact', 'hooks/intercept', 'accepted'],
      ['org.example.family', 'hooks/intercept', 'accepted'],
      ['org.example.watch', 'hooks/observe', 'observed'],
    ],
  );
  assert.equal(received.has('org.example.other'), false);
  assert.deepStrictEqual(
    received.get('org.example.watch')?.map((m) => m.method),
    ['hooks/observe'],
  );
  // An observe-only event is never intercepted, even by a '*' interceptor.
  const turnEnd = {
    id: 'e9',
    source: 'urn:test',
    type: 'turn.end',
    time: '2026-01-01T00:00:00Z',
    turn: { id: 't' },
    outcome: 'completed',
    continuationCount: 0,
    items: [],
  };
  const star = setup([{ id: 'org.example.star', subs: [intercept('star', { events: ['*'] })] }]);
  const quiet = await star.dispatcher.dispatch({ event: turnEnd });
  assert.deepStrictEqual(quiet.subscriptions, []);
  assert.equal(star.received.size, 0);
  await dispatcher.close();
  await star.dispatcher.close();
});

test('interceptors run one at a time in order and each sees the accepted effective event', async () => {
  let inFlight = 0;
  let maxInFlight = 0;
  const slow: MemoryHandler = async (message) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    inFlight--;
    return answer(message, [{ type: 'modify', target: 'input', operation: 'merge', value: { step: 1 } }]);
  };
  const { dispatcher, received } = setup([
    { id: 'org.example.a', subs: [intercept('a')], handler: slow },
    { id: 'org.example.b', subs: [intercept('b')], handler: slow },
  ]);
  const outcome = await dispatcher.dispatch({ event, capabilities: caps });
  assert.equal(maxInFlight, 1);
  const secondInput = (eventOf(received.get('org.example.b')?.[0]).tool as { input: unknown }).input;
  assert.deepStrictEqual(secondInput, { command: 'ls', step: 1 });
  assert.deepStrictEqual(outcome.input, { command: 'ls', step: 1 });
  // The request id is the event id (AHP JSON-RPC correlation).
  assert.equal((received.get('org.example.a')?.[0] as JsonRpcRequest | undefined)?.id, 'evt-1');
  await dispatcher.close();
});

test('content selection is applied before the event leaves, per subscription', async () => {
  const { dispatcher, received } = setup([
    {
      id: 'org.example.meta',
      subs: [intercept('meta', { content: { default: 'metadata', categories: {} } })],
    },
    {
      id: 'org.example.omit',
      subs: [observe('omit', { content: { default: 'body', categories: { text: 'omit' } } })],
    },
    { id: 'org.example.native', subs: [observe('native', { includeNative: true })] },
  ]);
  const outcome = await dispatcher.dispatch({ event, capabilities: caps });
  const seen = (id: string) => eventOf(received.get(id)?.[0]);
  const bytes = Buffer.from('secret plan', 'utf8');
  assert.deepStrictEqual(seen('org.example.meta').items, [
    {
      id: 'p1',
      kind: 'text',
      mediaType: 'text/plain',
      selection: 'metadata',
      size: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    },
  ]);
  assert.equal('native' in seen('org.example.meta'), false);
  assert.deepStrictEqual(seen('org.example.omit').items, []);
  assert.deepStrictEqual(seen('org.example.native').native, { raw: true });
  // The outcome keeps the full effective event.
  assert.deepStrictEqual(outcome.event, event);
  await dispatcher.close();
});

test('a deadline ends a silent backend: fail-open continues unchanged, fail-closed denies generically', async () => {
  let aborted = false;
  const silent: MemoryHandler = (_message, signal) =>
    new Promise(() => {
      signal.addEventListener('abort', () => {
        aborted = true;
      });
    });
  for (const policy of ['fail-open', 'fail-closed'] as const) {
    const { dispatcher, received } = setup([
      {
        id: 'org.example.slow',
        subs: [intercept('slow', { timeoutMs: 30, failurePolicy: policy })],
        handler: silent,
      },
      { id: 'org.example.next', subs: [intercept('next')] },
    ]);
    const outcome = await dispatcher.dispatch({ event, capabilities: caps });
    const first = outcome.subscriptions[0];
    assert.equal(first?.status, 'failed');
    assert.match(first?.reason ?? '', /^timeout/);
    assert.equal(first?.failurePolicy, policy);
    if (policy === 'fail-open') {
      assert.equal(outcome.decision, 'allow');
      assert.equal(received.get('org.example.next')?.[0]?.method, 'hooks/intercept');
    } else {
      assert.equal(outcome.decision, 'deny');
      assert.deepStrictEqual(outcome.denial, {
        backend: 'org.example.slow',
        subscription: 'slow',
        reason: SYNTHETIC_DENY_REASON,
        synthetic: true,
      });
      // The uncalled interceptor gets a best-effort observation instead.
      assert.equal(received.get('org.example.next')?.[0]?.method, 'hooks/observe');
    }
    await dispatcher.close();
  }
  assert.equal(aborted, true, 'the transport saw its signal abort');
});

test('connection failures are retried inside the deadline with the identical request', async () => {
  let calls = 0;
  const flaky: MemoryHandler = (message) => {
    calls++;
    if (calls === 1) throw new TransportError('transport', 'connection refused');
    if (calls === 2)
      return { jsonrpc: '2.0', id: (message as JsonRpcRequest).id, error: { code: -32003, message: 'busy' } };
    return answer(message, [{ type: 'message', text: 'ok' }]);
  };
  const { dispatcher, received } = setup(
    [{ id: 'org.example.flaky', subs: [intercept('f')], handler: flaky }],
    { retryDelayMs: 1 },
  );
  const outcome = await dispatcher.dispatch({ event, capabilities: caps });
  assert.equal(outcome.subscriptions[0]?.status, 'accepted');
  assert.deepStrictEqual(outcome.messages, ['ok']);
  const sent = received.get('org.example.flaky') ?? [];
  assert.equal(sent.length, 3);
  assert.deepStrictEqual(sent[1], sent[0]);
  assert.deepStrictEqual(sent[2], sent[0]);
  await dispatcher.close();
});

test('every failure class goes through the policy; none is salvaged', async () => {
  const classes: Record<string, MemoryHandler> = {
    'json-rpc error': (m) => ({
      jsonrpc: '2.0',
      id: (m as JsonRpcRequest).id,
      error: { code: -32004, message: 'boom' },
    }),
    'wrong id': () => ({ jsonrpc: '2.0', id: 'other', result: { protocolVersion: 'draft', effects: [] } }),
    'not json-rpc': () => ({ hello: 'world' }),
    'unadvertised effect': (m) =>
      answer(m, [
        { type: 'deny', reason: 'x' },
        { type: 'return', value: 1 },
      ]),
    'auth failure': () => {
      throw new TransportError('auth', 'token missing');
    },
  };
  for (const [name, handler] of Object.entries(classes)) {
    const { dispatcher } = setup([
      { id: 'org.example.bad', subs: [intercept('bad', { failurePolicy: 'fail-closed' })], handler },
    ]);
    const outcome = await dispatcher.dispatch({ event, capabilities: caps });
    const report = outcome.subscriptions[0];
    assert.ok(report?.status === 'failed' || report?.status === 'rejected', name);
    assert.equal(outcome.decision, 'deny', name);
    assert.equal(outcome.denial?.synthetic, true, name);
    assert.equal(outcome.denial?.reason, SYNTHETIC_DENY_REASON, name);
    await dispatcher.close();
  }
});

test('after a deny: uncalled interceptors and observers get the effective event once, called ones no copy', async () => {
  const { dispatcher, received } = setup([
    {
      id: 'org.example.a',
      subs: [intercept('a'), observe('a-audit')],
      handler: (m) =>
        answer(m, [
          { type: 'modify', target: 'input', operation: 'replace', value: { command: 'pwd' } },
          { type: 'deny', reason: 'policy' },
        ]),
    },
    { id: 'org.example.b', subs: [intercept('b')] },
  ]);
  const outcome = await dispatcher.dispatch({ event, capabilities: caps });
  assert.equal(outcome.decision, 'deny');
  assert.deepStrictEqual(outcome.denial, {
    backend: 'org.example.a',
    subscription: 'a',
    reason: 'policy',
    synthetic: false,
  });
  const a = received.get('org.example.a') ?? [];
  const b = received.get('org.example.b') ?? [];
  assert.deepStrictEqual(
    a.map((m) => m.method),
    ['hooks/intercept', 'hooks/observe'],
  );
  assert.deepStrictEqual(
    b.map((m) => m.method),
    ['hooks/observe'],
  );
  for (const m of [a[1], b[0]]) {
    assert.equal('id' in (m ?? {}), false);
    assert.deepStrictEqual((eventOf(m).tool as { input: unknown }).input, { command: 'pwd' });
  }
  await dispatcher.close();
});

test('a failing observer changes nothing', async () => {
  const { dispatcher } = setup([
    {
      id: 'org.example.watch',
      subs: [observe('w')],
      handler: () => {
        throw new TransportError('transport', 'gone');
      },
    },
  ]);
  const outcome = await dispatcher.dispatch({ event, capabilities: caps });
  assert.equal(outcome.decision, 'allow');
  assert.equal(outcome.executed, true);
  assert.equal(outcome.subscriptions[0]?.status, 'failed');
  await dispatcher.close();
});

test('tally ahp dispatch runs a real stdio backend: deny exits 1 with the outcome, bad input exits 2', () => {
  const dir = tempDir('tally-dispatch-');
  const backend = join(dir, 'backend.mjs');
  writeFileSync(
    backend,
    [
      "import { createInterface } from 'node:readline';",
      'for await (const line of createInterface({ input: process.stdin })) {',
      "  process.stderr.write('guard: checking one event\\n');",
      '  const m = JSON.parse(line);',
      '  if (m.id === undefined) continue;',
      "  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: 'draft', effects: [{ type: 'deny', reason: 'no shell' }] } }) + '\\n');",
      '}',
    ].join('\n'),
  );
  const registration = {
    protocolVersion: 'draft',
    hooks: [
      {
        id: 'org.example.guard',
        transport: { type: 'stdio', command: process.execPath, args: [backend], lifecycle: 'per_event' },
        subscriptions: [
          {
            events: ['tool.before'],
            mode: 'intercept',
            timeoutMs: 5000,
            failurePolicy: 'fail-open',
            content: { default: 'metadata' },
          },
        ],
      },
    ],
  };
  const { native: _native, ...plain } = event;
  writeFileSync(join(dir, 'registration.json'), JSON.stringify(registration));
  writeFileSync(join(dir, 'event.json'), JSON.stringify(plain));
  writeFileSync(join(dir, 'bad.json'), JSON.stringify({ ...plain, time: 'yesterday' }));
  // Option blocks must come exactly with their effect (spec §4): a modify block without `modify`
  // is an invalid advertisement; `maybe` is no permission state.
  writeFileSync(
    join(dir, 'caps.json'),
    JSON.stringify({ effects: ['deny'], modify: { input: { replace: true, merge: false } } }),
  );
  writeFileSync(join(dir, 'state.json'), JSON.stringify({ permission: 'maybe', candidate: null }));
  const run = (eventFile: string, ...more: string[]) =>
    spawnSync(
      process.execPath,
      [
        'bin/tally.js',
        'ahp',
        'dispatch',
        '--registration',
        join(dir, 'registration.json'),
        '--event',
        join(dir, eventFile),
        '--json',
        ...more,
      ],
      { encoding: 'utf8' },
    );
  const denied = run('event.json');
  assert.equal(denied.status, 1, denied.stderr);
  const outcome = JSON.parse(denied.stdout) as {
    decision: string;
    denial: { reason: string };
    subscriptions: { status: string }[];
  };
  assert.equal(outcome.decision, 'deny');
  assert.equal(outcome.denial.reason, 'no shell');
  assert.equal(outcome.subscriptions[0]?.status, 'accepted');
  // The backend's own diagnostics reach the user, with the backend named.
  assert.match(denied.stderr, /\[org\.example\.guard\]: backend stderr: guard: checking one event/);
  const bad = run('bad.json');
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /\/time/);
  const badCaps = run('event.json', '--capabilities', join(dir, 'caps.json'));
  assert.equal(badCaps.status, 2, badCaps.stderr);
  assert.match(badCaps.stdout + badCaps.stderr, /--capabilities: \/modify/);
  const badState = run('event.json', '--state', join(dir, 'state.json'));
  assert.equal(badState.status, 2, badState.stderr);
  assert.match(badState.stdout + badState.stderr, /--state: \/permission/);
});

test('an invalid request or notification is never sent: the failure policy settles the call', async () => {
  // The official schema is the oracle: this event lacks the `path` a tool.before must carry.
  const { path: _path, ...pathless } = event;
  const bad = pathless as CanonicalEvent;
  const request = {
    jsonrpc: '2.0',
    id: bad.id,
    method: 'hooks/intercept',
    params: { protocolVersion: 'draft', event: bad, capabilities: caps },
  };
  assert.equal(officialValid('intercept-request.schema.json', request), false);
  assert.equal(
    officialValid('observe-notification.schema.json', {
      jsonrpc: '2.0',
      method: 'hooks/observe',
      params: { protocolVersion: 'draft', event: bad },
    }),
    false,
  );
  for (const failurePolicy of ['fail-open', 'fail-closed'] as const) {
    const { dispatcher, received } = setup([
      { id: 'org.example.a', subs: [intercept('a', { failurePolicy })] },
      { id: 'org.example.o', subs: [observe('o')] },
    ]);
    const outcome = await dispatcher.dispatch({ event: bad, capabilities: caps });
    await dispatcher.close();
    assert.equal(received.size, 0, 'nothing left the process');
    const [call, watch] = outcome.subscriptions;
    assert.equal(call?.status, 'failed');
    assert.match(
      call?.reason ?? '',
      /^invalid request: \/params\/event\/path: 'path' is required \[required\]/,
    );
    assert.equal(watch?.status, 'failed');
    assert.match(watch?.reason ?? '', /^invalid notification: \/params\/event\/path/);
    assert.equal(outcome.decision, failurePolicy === 'fail-open' ? 'allow' : 'deny');
  }
});

test("continuation counters are the event's own: eventCapabilities advertises them, a mismatch is refused", async () => {
  // turn.finish.before carries continuationCount; the allowance is MAX_CONTINUATIONS (3) a turn.
  const turnEvent = (count: number): CanonicalEvent => ({
    id: `turn-${count}`,
    source: 'urn:test',
    type: 'turn.finish.before',
    time: '2026-01-01T00:00:00Z',
    turn: { id: 't1' },
    outcome: 'completed',
    continuationCount: count,
    items: [],
  });
  const cont = { type: 'flow', operation: 'continue', instruction: 'keep going' };
  const { dispatcher } = setup(
    [
      {
        id: 'org.example.a',
        subs: [intercept('a', { events: ['turn.finish.before'] })],
        handler: (m) => answer(m, [cont]),
      },
    ],
    { capabilitiesFor: (_type, e) => eventCapabilities(e) },
  );
  try {
    const early = await dispatcher.dispatch({ event: turnEvent(1) });
    assert.equal(early.subscriptions[0]?.status, 'accepted');
    assert.equal(early.flow, 'continue');
    assert.equal(early.continuationRemaining, 1);
    const spent = await dispatcher.dispatch({ event: turnEvent(3) });
    assert.equal(spent.subscriptions[0]?.status, 'rejected', 'no continuation is left after three');
    await assert.rejects(
      dispatcher.dispatch({
        event: turnEvent(2),
        capabilities: eventCapabilities(turnEvent(0)) as InterceptCapabilities,
      }),
      (error) => {
        assert.ok(error instanceof DispatchError);
        assert.equal(error.code, 'bad-capabilities');
        assert.equal(error.detail?.pointer, '/flow/continuationCount');
        return true;
      },
    );
  } finally {
    await dispatcher.close();
  }
});

test('an edit that would make the event invalid rejects its response whole; later backends still run', async () => {
  // The official catalogue's workspace.change.before event; `change` of a cwd change is closed
  // (the event schema), so merging a `note` into it cannot be accepted.
  const workspaceEvent: CanonicalEvent = {
    id: 'ws-1',
    source: 'urn:ahp:catalogue',
    time: '2026-09-15T12:00:00Z',
    type: 'workspace.change.before',
    workspace: { kind: 'cwd', change: { cwd: '/new' } },
  };
  const edited = { ...workspaceEvent, workspace: { kind: 'cwd', change: { cwd: '/new', note: 'x' } } };
  assert.equal(
    officialValid('observe-notification.schema.json', {
      jsonrpc: '2.0',
      method: 'hooks/observe',
      params: { protocolVersion: 'draft', event: edited },
    }),
    false,
    'the official schema refuses the edited event',
  );
  const edit = {
    type: 'modify',
    target: 'workspace',
    operation: 'merge',
    value: { change: { cwd: '/new', note: 'x' } },
  };
  const events = ['workspace.change.before'];
  const { dispatcher, received } = setup([
    { id: 'org.example.a', subs: [intercept('a', { events })], handler: (m) => answer(m, [edit]) },
    {
      id: 'org.example.b',
      subs: [intercept('b', { events })],
      handler: (m) => answer(m, [{ type: 'deny', reason: 'no' }]),
    },
    { id: 'org.example.o', subs: [observe('o')] },
  ]);
  const outcome = await dispatcher.dispatch({
    event: workspaceEvent,
    capabilities: eventCapabilities(workspaceEvent) as InterceptCapabilities,
  });
  await dispatcher.close();
  const [a, b, o] = outcome.subscriptions;
  assert.equal(a?.status, 'rejected');
  assert.match(a?.reason ?? '', /edits make an invalid event: \/workspace\/change/);
  assert.equal(b?.status, 'accepted', 'the next backend got the unedited event');
  assert.equal(outcome.decision, 'deny');
  assert.equal(o?.status, 'observed');
  assert.deepEqual(eventOf(received.get('org.example.o')?.[0]).workspace, workspaceEvent.workspace);
});
