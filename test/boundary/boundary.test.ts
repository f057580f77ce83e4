/**
 * The boundary's composition, with real backends: only the protocol's real composition (the
 * certificate judge dispatched first through the same dispatcher, deny > ask > allow, deadlines
 * and failure policies) passes these. Oracles: the AHP composition rules (deny beats allow; a
 * fail-open failure adds nothing; a fail-closed one denies) and the certificate's own patterns.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CertificateBackendError } from '../../src/boundary/certificate-backend.js';
import {
  certificateFor,
  faultBackend,
  openFixture,
  registrationOf,
  rulesBackend,
  toolBefore,
} from './fixture.js';

const allowAll = {
  allow: ['Bash', 'Read', 'Write'],
  forbid: ['Bash(rm -rf *)'],
  escalate: ['Bash(git push*)'],
};
const denyLs = [
  {
    events: ['tool.before'],
    match: { tool: 'Bash', commandGlob: 'ls*' },
    effect: 'deny',
    message: 'no listing',
  },
];

describe('the boundary: composition of the certificate judge and third-party backends', () => {
  it('a third-party deny beats a certificate allow, and the record names both answers', async () => {
    const f = await openFixture(certificateFor(allowAll), (dir) => [
      rulesBackend(dir, 'com.example.guard', denyLs),
    ]);
    try {
      const d = await f.boundary.decide(toolBefore('Bash', { command: 'ls -la' }), { source: 'hook' });
      assert.equal(d.decision, 'deny');
      assert.equal(d.by, 'com.example.guard');
      assert.equal(d.reason, 'no listing');
      assert.deepEqual(
        d.answers.map((a) => [a.backend, a.decision, a.status]),
        [
          ['dev.tally.certificate', 'allow', 'accepted'],
          ['com.example.guard', 'deny', 'accepted'],
        ],
      );
      const [record] = (await f.records()).slice(-1);
      assert.deepEqual(record?.decision, { decision: 'deny', by: 'com.example.guard', reason: 'no listing' });
      assert.deepEqual(record?.answers, d.answers);
      for (const a of record!.answers!) assert.ok(Number.isSafeInteger(a.latency_ms) && a.latency_ms >= 0);
    } finally {
      await f.close();
    }
  });

  it('a certificate deny plus a third-party fail-open timeout settles as deny, both answers recorded', async () => {
    const f = await openFixture(certificateFor(allowAll), [
      faultBackend('com.example.slow', ['hang'], { timeoutMs: 150 }),
    ]);
    try {
      // A certificate deny short-circuits: the slow backend is observed, not asked; so place the
      // judge after it to make both answer.
      const listed = await openFixture(certificateFor(allowAll), [
        faultBackend('com.example.slow', ['hang'], { timeoutMs: 150 }),
        {
          id: 'dev.tally.certificate',
          transport: {
            type: 'stdio',
            command: 'tally',
            args: ['ahp', 'serve', '--certificate'],
            lifecycle: 'persistent',
          },
          subscriptions: [
            {
              events: ['tool.before'],
              mode: 'intercept',
              timeoutMs: 1000,
              failurePolicy: 'fail-open',
              content: { default: 'metadata' },
            },
          ],
        },
      ]);
      try {
        const d = await listed.boundary.decide(toolBefore('Bash', { command: 'rm -rf /tmp/x' }), {
          source: 'hook',
        });
        assert.equal(d.decision, 'deny');
        assert.equal(d.by, 'dev.tally.certificate');
        assert.equal(d.rule, 'Bash(rm -rf *)');
        assert.deepEqual(
          d.answers.map((a) => [a.backend, a.decision, a.status, a.failure_policy ?? null]),
          [
            ['com.example.slow', 'none', 'failed', 'fail-open'],
            ['dev.tally.certificate', 'deny', 'accepted', null],
          ],
        );
        // The timeout cost its deadline, no less.
        assert.ok(d.answers[0]!.latency_ms >= 140, `latency ${d.answers[0]!.latency_ms}`);
      } finally {
        await listed.close();
      }
      const first = await f.boundary.decide(toolBefore('Bash', { command: 'rm -rf /tmp/x' }), {
        source: 'hook',
      });
      assert.equal(first.decision, 'deny');
      assert.deepEqual(
        first.answers.map((a) => a.backend),
        ['dev.tally.certificate'],
      );
    } finally {
      await f.close();
    }
  });

  it("the certificate judge's own deadline and failure policy hold: a slow judge times out and fails closed", async () => {
    const slow = (handler: (m: never, s: AbortSignal) => unknown) => (message: never, signal: AbortSignal) =>
      new Promise((resolve) => setTimeout(() => resolve(handler(message, signal)), 300));
    const f = await openFixture(
      certificateFor(allowAll),
      // Listed with a short deadline and fail-open: the deadline is kept, fail-open is not.
      [
        {
          id: 'dev.tally.certificate',
          transport: {
            type: 'stdio',
            command: '/usr/local/bin/tally',
            args: ['ahp', 'serve', '--certificate'],
            lifecycle: 'persistent',
          },
          subscriptions: [
            {
              events: ['tool.before'],
              mode: 'intercept',
              timeoutMs: 50,
              failurePolicy: 'fail-open',
              content: { default: 'omit' },
            },
          ],
        },
      ],
      { wrapJudge: slow as never },
    );
    try {
      const d = await f.boundary.decide(toolBefore('Read', { file_path: 'README.md' }), { source: 'hook' });
      assert.equal(d.decision, 'deny');
      assert.equal(d.by, 'dev.tally.certificate');
      assert.match(d.reason ?? '', /fails closed/);
      const [answer] = d.answers;
      assert.deepEqual(
        [answer?.status, answer?.failure_policy, answer?.decision],
        ['failed', 'fail-closed', 'deny'],
      );
      assert.ok(answer!.latency_ms >= 45 && answer!.latency_ms < 300, `latency ${answer!.latency_ms}`);
    } finally {
      await f.close();
    }
  });

  it('the judge cannot be removed: a registration without it still gets it, first; its id cannot be taken', async () => {
    const f = await openFixture(certificateFor(allowAll), [
      faultBackend('com.example.echo', ['echo'], { failurePolicy: 'fail-closed', timeoutMs: 2000 }),
    ]);
    try {
      const d = await f.boundary.decide(toolBefore('Bash', { command: 'rm -rf /' }), { source: 'hook' });
      assert.equal(d.decision, 'deny');
      assert.deepEqual(
        d.answers.map((a) => a.backend),
        ['dev.tally.certificate'],
      );
    } finally {
      await f.close();
    }
    await assert.rejects(
      openFixture(certificateFor(allowAll), [faultBackend('dev.tally.certificate', ['echo'])]),
      (e) => e instanceof CertificateBackendError && e.code === 'reserved-id',
    );
  });

  it('escalation is asked where ask is advertised, and recorded as the judge’s ask with its rule', async () => {
    const f = await openFixture(certificateFor(allowAll), []);
    try {
      const d = await f.boundary.decide(toolBefore('Bash', { command: 'git push origin main' }), {
        source: 'hook',
      });
      assert.equal(d.decision, 'ask');
      assert.equal(d.rule, 'Bash(git push*)');
      const [record] = (await f.records()).slice(-1);
      assert.equal(record?.decision?.decision, 'ask');
      assert.equal(record?.decision?.by, 'dev.tally.certificate');
    } finally {
      await f.close();
    }
  });

  it('an expired certificate denies live (fail closed), whatever the call', async () => {
    const expired = certificateFor(allowAll, new Date(Date.now() - 1000));
    const f = await openFixture(expired, null);
    try {
      const d = await f.boundary.decide(toolBefore('Read', { file_path: 'README.md' }), { source: 'hook' });
      assert.equal(d.decision, 'deny');
      assert.match(d.reason ?? '', /expired/);
    } finally {
      await f.close();
    }
  });

  it('invalid input is recorded as tally.ingest.rejected and an interceptable one is denied', async () => {
    const f = await openFixture(certificateFor(allowAll), null);
    try {
      const d = await f.boundary.decide({ type: 'tool.before', tool: { name: 'Bash' } }, { source: 'hook' });
      assert.equal(d.decision, 'deny');
      assert.equal(d.rejected, true);
      const [record] = (await f.records()).slice(-1);
      assert.equal(record?.event.type, 'tally.ingest.rejected');
      const facts = (record!.event.extensions as Record<string, Record<string, unknown>>)[
        'dev.tally.rejected'
      ]!;
      assert.equal(facts.channel, 'hook');
      assert.equal(typeof facts.pointer, 'string');
      await f.boundary.reject(
        { received: Buffer.from([0x7b, 0xff]), reason: 'not UTF-8', source: 'hook', offset: 1 },
        { source: 'hook' },
      );
      const [bytes] = (await f.records()).slice(-1);
      assert.equal(
        (bytes!.event.extensions as Record<string, Record<string, unknown>>)['dev.tally.rejected']!.offset,
        1,
      );
    } finally {
      await f.close();
    }
  });

  it('observe records after-the-fact events without judging them; a bad registration is refused whole', async () => {
    const f = await openFixture(certificateFor(allowAll), null);
    try {
      const { recorded } = await f.boundary.observe(
        {
          type: 'tool.after',
          call: { id: 'c9' },
          path: 'native',
          tool: { origin: 'native', name: 'Bash', input: { command: 'ls' } },
          outcome: 'ok',
          execution: { status: 'executed' },
          items: [],
        },
        { source: 'hook' },
      );
      const [record] = (await f.records()).slice(-1);
      assert.equal(record?.seq, recorded.seq);
      assert.equal(record?.decision, undefined);
    } finally {
      await f.close();
    }
    assert.throws(() =>
      registrationOf([
        { id: 'x', transport: { type: 'stdio', command: 'x', lifecycle: 'persistent' }, subscriptions: [] },
      ]),
    );
  });
});
