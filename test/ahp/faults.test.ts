/**
 * Operational failures with real backend processes and real sockets: each one settles by its
 * error code at the transport, and through the dispatcher by the subscription's failure policy
 * (fail-closed: a synthetic denial with the generic reason; fail-open: no change), always by the
 * deadline, and with no credential in any log line, error or report.
 * Oracles: the protocol's list of operational failures and its failure-policy rules; the
 * subscription deadline is the only time bound the tests rely on.
 */
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, describe, test } from 'node:test';
import { Dispatcher, SYNTHETIC_DENY_REASON } from '../../src/ahp/harness/dispatcher.js';
import type { Backend, Registration } from '../../src/ahp/registration/types.js';
import { createTransport, type TransportOptions } from '../../src/ahp/transports/index.js';
import { TransportError } from '../../src/ahp/transports/transport.js';
import { answerFor, suiteServers } from './http-servers.js';
import { loadScenarioRows } from './scenario-replay.js';
import {
  httpBackend,
  interceptRegistration,
  interceptRequest,
  type LogLine,
  options,
  recordingLogger,
  stdioBackend,
} from './transport-helpers.js';

const TOKEN = 'fault-token-5b7c0e2d9a';
const DEADLINE_MS = 400;
const row = loadScenarioRows().find((r) => r.id === 'empty-response-preserves-input')!;

const logs: LogLine[] = [];
const seenErrors: unknown[] = [];
const seenReports: unknown[] = [];
const { logger } = {
  logger: (level: string, message: string, fields?: Record<string, unknown>) =>
    logs.push({ level, message, fields }),
};

function opts(extra: Partial<TransportOptions> = {}): TransportOptions {
  return options({
    logger: logger as TransportOptions['logger'],
    maxBodyBytes: 64 * 1024,
    env: { ...process.env, FAULT_TOKEN: TOKEN },
    ...extra,
  });
}

function registration(backend: Backend, failurePolicy: 'fail-open' | 'fail-closed'): Registration {
  return interceptRegistration(backend, failurePolicy, DEADLINE_MS);
}

/** Dispatches the official scenario event through `backend` under `failurePolicy`. */
async function settle(backend: Backend, failurePolicy: 'fail-open' | 'fail-closed') {
  const dispatcher = new Dispatcher({
    registration: registration(backend, failurePolicy),
    transportFactory: (b) => createTransport(b, opts()),
  });
  try {
    const { event, capabilities } = row.request.params;
    const outcome = await dispatcher.dispatch({ event, capabilities });
    seenReports.push(outcome);
    return outcome;
  } finally {
    await dispatcher.close();
  }
}

/** The transport-level code of one request under the deadline. */
async function codeFor(backend: Backend): Promise<string> {
  const t = createTransport(backend, opts());
  try {
    await t.request(interceptRequest(), AbortSignal.timeout(DEADLINE_MS));
    return 'ok';
  } catch (error) {
    seenErrors.push(error);
    assert.ok(error instanceof TransportError, String(error));
    return error.code;
  } finally {
    await t.close();
  }
}

async function checkPolicies(backend: Backend, failedAs: 'failed' | 'rejected' = 'failed') {
  const closed = await settle(backend, 'fail-closed');
  assert.equal(closed.subscriptions[0]?.status, failedAs);
  assert.equal(closed.decision, 'deny');
  assert.equal(closed.denial?.synthetic, true);
  assert.equal(closed.denial?.reason, SYNTHETIC_DENY_REASON);
  assert.equal(closed.executed, false);
  const open = await settle(backend, 'fail-open');
  assert.equal(open.subscriptions[0]?.status, failedAs);
  assert.equal(open.permission, 'none');
  assert.equal(open.decision, 'allow');
  assert.deepStrictEqual(open.event, row.request.params.event);
}

describe('faults over stdio (real processes)', { timeout: 60_000 }, () => {
  const cases: [string, string[], string][] = [
    ['hang', [], 'timeout'],
    ['slow', ['5000'], 'timeout'],
    ['garbage', [], 'protocol'],
    ['exit', ['3'], 'transport'],
    ['huge', ['200000'], 'too-large'],
  ];
  for (const [mode, args, code] of cases) {
    test(`${mode}: ${code}, then settled by the failure policy`, async () => {
      assert.equal(await codeFor(stdioBackend(mode, args)), code);
      assert.equal(await codeFor(stdioBackend(mode, args, 'per_event')), code);
      await checkPolicies(stdioBackend(mode, args));
    });
  }

  test('wrong-id: a persistent backend waits for a live answer, then hands the stray one up at the deadline to be rejected whole', async () => {
    const { logger: log, lines } = recordingLogger();
    const t = createTransport(stdioBackend('wrong-id'), opts({ logger: log }));
    try {
      const a = interceptRequest();
      const answer = (await t.request(a, AbortSignal.timeout(DEADLINE_MS))) as { id: unknown };
      assert.equal(answer.id, `${a.id}-other`);
      assert.ok(lines.some((l) => l.level === 'warn' && l.fields?.received === `${a.id}-other`));
    } finally {
      await t.close();
    }
    await checkPolicies(stdioBackend('wrong-id'), 'rejected');
    // per_event allows exactly one answer: it is handed up at once and rejected the same way.
    assert.equal(await codeFor(stdioBackend('wrong-id', [], 'per_event')), 'ok');
    await checkPolicies(stdioBackend('wrong-id', [], 'per_event'), 'rejected');
  });

  test('an unknown id before the answer is ignored; the answer that follows is taken', async () => {
    const { logger: log, lines } = recordingLogger();
    const t = createTransport(stdioBackend('unknown-first'), opts({ logger: log }));
    try {
      const a = interceptRequest();
      assert.equal(((await t.request(a, AbortSignal.timeout(5 * DEADLINE_MS))) as { id: unknown }).id, a.id);
      const warned = lines.find((l) => l.level === 'warn' && /answers nothing in flight/.test(l.message));
      assert.equal(warned?.fields?.received, `unknown:${a.id}`);
      assert.equal(warned?.fields?.expected, a.id);
    } finally {
      await t.close();
    }
  });

  test('a flood of lines answering nothing ends the backend as faulty before the deadline', async () => {
    const t = createTransport(stdioBackend('flood'), opts());
    try {
      await assert.rejects(t.request(interceptRequest(), AbortSignal.timeout(60_000)), (error) => {
        assert.ok(error instanceof TransportError);
        assert.equal(error.code, 'protocol');
        assert.match(error.message, /17 lines in a row/);
        return true;
      });
    } finally {
      await t.close();
    }
  });

  test('answers twice: the first answer counts, the extra line is ignored, the same process serves the next call', async () => {
    const { logger: log, lines } = recordingLogger();
    const t = createTransport(stdioBackend('twice'), opts({ logger: log }));
    try {
      const a = interceptRequest();
      assert.equal(((await t.request(a, AbortSignal.timeout(DEADLINE_MS))) as { id: unknown }).id, a.id);
      const b = interceptRequest();
      assert.equal(((await t.request(b, AbortSignal.timeout(5 * DEADLINE_MS))) as { id: unknown }).id, b.id);
      assert.ok(lines.some((l) => l.level === 'warn' && l.fields?.received === a.id));
      assert.equal(lines.filter((l) => l.message === 'backend started').length, 1);
    } finally {
      await t.close();
    }
    assert.equal(await codeFor(stdioBackend('twice', [], 'per_event')), 'protocol');
  });

  test('effects that were not advertised: the response is rejected whole and the policy settles it', async () => {
    const caps = row.request.params.capabilities as { effects: string[] };
    assert.ok(caps.effects.includes('allow'));
    const narrowed = { ...row.request.params, capabilities: { effects: ['deny'] } };
    const dispatcher = new Dispatcher({
      registration: registration(stdioBackend('unadvertised'), 'fail-closed'),
      transportFactory: (b) => createTransport(b, opts()),
    });
    try {
      const outcome = await dispatcher.dispatch({
        event: narrowed.event,
        capabilities: narrowed.capabilities as never,
      });
      seenReports.push(outcome);
      assert.equal(outcome.subscriptions[0]?.status, 'rejected');
      assert.equal(outcome.decision, 'deny');
      assert.equal(outcome.denial?.synthetic, true);
    } finally {
      await dispatcher.close();
    }
  });
});

describe('faults over HTTP (real sockets, bearer credential)', { timeout: 60_000 }, () => {
  const serve = suiteServers();
  after(async () => {
    const text = JSON.stringify([
      ...seenErrors.map((e) =>
        e instanceof TransportError ? { m: e.message, d: e.detail, s: e.stack } : String(e),
      ),
      ...logs,
      ...seenReports,
    ]);
    assert.ok(!text.includes(TOKEN), 'a credential leaked into an error, a log line or a report');
    assert.ok(seenErrors.length > 0 && logs.length > 0);
  });
  const backendFor = async (answer: (res: ServerResponse, body: unknown) => void) => {
    const s = await serve((seen, res) => {
      assert.equal(seen.headers.authorization, `Bearer ${TOKEN}`);
      answer(res, answerFor(seen));
    });
    return httpBackend(`${s.url}/hooks`, { type: 'bearer', tokenEnv: 'FAULT_TOKEN' });
  };
  const jsonHead = { 'content-type': 'application/json' };
  const cases: [string, (res: ServerResponse, body: unknown) => void, string][] = [
    ['hangs', () => {}, 'timeout'],
    [
      'is slow past the deadline',
      (res, body) => setTimeout(() => res.writeHead(200, jsonHead).end(JSON.stringify(body)), 5000).unref(),
      'timeout',
    ],
    ['closes the socket', (res) => res.socket?.destroy(), 'transport'],
    ['answers garbage', (res) => res.writeHead(200, jsonHead).end('<html>oops</html>'), 'protocol'],
    [
      'answers twice in one body',
      (res, body) => res.writeHead(200, jsonHead).end(JSON.stringify(body) + JSON.stringify(body)),
      'protocol',
    ],
    [
      'returns a huge body',
      (res) => res.writeHead(200, jsonHead).end(JSON.stringify({ pad: 'x'.repeat(200_000) })),
      'too-large',
    ],
    ['answers 500', (res) => res.writeHead(500).end(`bearer was ${TOKEN}`), 'http-status'],
    [
      'rejects the credential',
      (res) => res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token"' }).end(),
      'auth',
    ],
    [
      'half-answers then closes',
      (res) => {
        res.writeHead(200, { ...jsonHead, 'content-length': '1000' });
        res.write('{"jsonrpc":');
        setTimeout(() => res.socket?.destroy(), 20).unref();
      },
      'transport',
    ],
  ];
  for (const [name, answer, code] of cases) {
    test(`backend ${name}: ${code}, then settled by the failure policy`, async () => {
      const backend = await backendFor(answer);
      assert.equal(await codeFor(backend), code);
      await checkPolicies(backend);
    });
  }

  test('effects that were not advertised are rejected whole', async () => {
    const backend = await backendFor((res, body) => {
      const b = body as { result: { effects: unknown[] } };
      b.result.effects = [{ type: 'flow', operation: 'stop', reason: 'not advertised' }];
      res.writeHead(200, jsonHead).end(JSON.stringify(b));
    });
    await checkPolicies(backend, 'rejected');
  });
});
