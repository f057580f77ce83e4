/**
 * The page renderers on receipts made up for the purpose: a nested agent graph with its model and
 * provider pills, decisions with who decided, hostile strings in every kind of field (escaped, never
 * markup), and a receipt whose fields have the wrong types (shown as missing, never a crash).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentPage } from '../../../src/hub/pages/agent-page.js';
import { escapeHtml } from '../../../src/hub/pages/html.js';
import { receiptPage } from '../../../src/hub/pages/receipt-page.js';

const EVIL = '<img src=x onerror=alert(1)>"\'&';

function receiptWith(overrides: Record<string, unknown>) {
  return {
    session: {
      id: 'ses_x',
      start: '2026-12-01T10:00:00.000Z',
      end: '2026-12-01T10:02:05.000Z',
      status: 'completed',
    },
    agent_graph: {
      agents: [
        {
          id: 'lead',
          name: 'lead',
          children: ['helper'],
          models: [{ model: 'big-1', provider: 'acme' }],
          event_count: 3,
          tool_calls: 1,
        },
        {
          id: 'helper',
          name: 'helper',
          parent: 'lead',
          children: [],
          models: [{ model: 'small-2' }],
          event_count: 2,
          tool_calls: 1,
        },
      ],
      roots: ['lead'],
      unattributed_events: 1,
    },
    files_written: [
      {
        path: 'src/a.ts',
        operation: 'created',
        sources: ['git-reconcile', 'hook'],
        agents: ['lead'],
        agent_caused: true,
      },
    ],
    decisions: [
      {
        seq: 4,
        decision: 'deny',
        by: 'dev.tally.certificate',
        tool: 'Bash',
        reason: 'forbidden',
        answers: [{ backend: 'dev.tally.certificate', decision: 'deny', status: 'ok' }],
      },
    ],
    counts: { files_written: 1, files_read: 0, processes: 0, tool_calls: 2 },
    ...overrides,
  };
}

const render = (receipt: unknown) =>
  receiptPage({
    view: { session: 'ses_x', keys: [{ id: 'key_abc', publicKey: '' }], receipt, problem: null },
    data: { mode: 'offline', package: '' },
    scriptSrc: '/pages/verifier.js',
  });

describe('page renderers', () => {
  it('nests the agent graph and gives each agent its model and provider pills', () => {
    const html = render(receiptWith({}));
    const lead = html.indexOf('<strong>lead</strong>');
    const helper = html.indexOf('<strong>helper</strong>');
    assert.ok(lead > 0 && helper > lead);
    assert.ok(
      /<strong>lead<\/strong>[\s\S]*?<ul>[\s\S]*?<strong>helper<\/strong>/.test(html),
      'the child is inside its parent',
    );
    assert.ok(
      html.includes('<span class="pill">model big-1</span><span class="pill provider">provider acme</span>'),
    );
    assert.ok(html.includes('<span class="pill">model small-2</span>'));
    assert.ok(html.includes('>git-reconcile</span>') && html.includes('>created<'));
    assert.ok(html.includes('dev.tally.certificate') && html.includes('<span class="pill deny">deny</span>'));
    assert.ok(html.includes('(2 min 5 s)'));
  });

  it('escapes hostile strings in every field it shows', () => {
    const html = render(
      receiptWith({
        session: { id: EVIL, start: EVIL, end: EVIL, status: EVIL, harness: { name: EVIL } },
        files_written: [{ path: EVIL, operation: EVIL, from: EVIL, sources: [EVIL], agents: [EVIL] }],
        files_read: [{ path: EVIL, sources: [EVIL], agents: [EVIL] }],
        processes: [{ command: EVIL, tool: EVIL, outcome: EVIL, sources: [EVIL] }],
        network: [{ url: EVIL, sources: [EVIL], agents: [] }],
        tool_calls: [
          { tool: EVIL, count: 1, kinds: [EVIL], outcomes: { [EVIL]: 1 }, decisions: {}, sources: [EVIL] },
        ],
        decisions: [
          {
            seq: 1,
            decision: EVIL,
            by: EVIL,
            tool: EVIL,
            reason: EVIL,
            rule: EVIL,
            answers: [{ backend: EVIL, decision: EVIL }],
          },
        ],
        timeline: [{ seq: 0, time: EVIL, source: EVIL, agent: EVIL, type: EVIL, summary: EVIL }],
        agent_graph: {
          agents: [{ id: EVIL, name: EVIL, models: [{ model: EVIL, provider: EVIL }], children: [] }],
          roots: [EVIL],
        },
      }),
    );
    assert.equal(html.includes('<img'), false);
    assert.ok(html.split(escapeHtml(EVIL)).length > 20, 'each field shows the text, escaped');
  });

  it('shows a receipt with wrong types as missing fields rather than failing', () => {
    const html = render({
      session: 'nope',
      agent_graph: [1, 2],
      files_written: { a: 1 },
      timeline: [null, 3, 'x'],
      counts: 7,
    });
    assert.ok(html.includes('<h1>Receipt'));
    assert.ok(render(null).includes('Verification'));
  });

  it('marks an expired certificate as expired on the agent page', () => {
    const html = agentPage({
      slug: 'old',
      owner: 'ship_1',
      shipKeyId: 'key_1',
      certificate: {
        agent: { name: 'old' },
        ship_id: 'ship_1',
        issuer: { key_id: 'key_1' },
        valid_from: '2026-01-01T00:00:00Z',
        valid_until: '2026-02-01T00:00:00Z',
        bounded_actions: ['Read'],
        forbidden: [EVIL],
        escalation_required: [],
      },
      certificates: [],
      receipts: [
        {
          session: EVIL,
          started_at: null,
          record_count: 1,
          checks: [{ check: 'unauthorized_calls', ok: false, detail: { executed: 2 } }],
        },
      ],
      now: new Date('2026-03-01T00:00:00Z'),
    });
    assert.ok(html.includes('<span class="expired">expired</span>'));
    assert.ok(html.includes('✗ 2 unauthorized calls'));
    assert.equal(html.includes('<img'), false);
  });
});
