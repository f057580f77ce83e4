/**
 * Admission of a registration in the harness's context. Oracle: every registration row of the
 * official interop `catalogue-scenarios.json` (document, deployment requirements, whether a user
 * can answer prompts, the environment), each with the verdict it expects.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type AdmissionRequirement, admitRegistration } from '../../src/ahp/registration/admission.js';
import { parseRegistration, RegistrationError } from '../../src/ahp/registration/registration.js';
import { readInterop } from './scenario-replay.js';

interface RegisterStep {
  op: 'register';
  registration: unknown;
  requirements: AdmissionRequirement[];
  context: { interactive: boolean; environment: Record<string, string> };
}
interface Row {
  id: string;
  steps: ({ op: string } | RegisterStep)[];
  expected: { registrations?: { accepted: boolean }[] };
}

const rows = readInterop<{ scenarios: Row[] }>('catalogue-scenarios.json').scenarios.filter((r) =>
  r.steps.some((s) => s.op === 'register'),
);

/** Parse, then admit: the verdict and, when refused, the rules that refused it. */
function decide(step: RegisterStep): { accepted: boolean; rules: string[] } {
  let registration: ReturnType<typeof parseRegistration>['registration'];
  try {
    registration = parseRegistration(step.registration).registration;
  } catch (error) {
    assert.ok(error instanceof RegistrationError);
    return { accepted: false, rules: error.issues.map((i) => i.rule) };
  }
  const admission = admitRegistration(registration, {
    env: step.context.environment,
    interactive: step.context.interactive,
    requirements: step.requirements,
  });
  return { accepted: admission.accepted, rules: admission.issues.map((i) => i.rule) };
}

describe('interop catalogue-scenarios.json: registration rows, parsed and admitted', () => {
  test('the suite holds accepted and refused rows', () => {
    const verdicts = rows.flatMap((r) => (r.expected.registrations ?? []).map((v) => v.accepted));
    assert.ok(verdicts.includes(true) && verdicts.includes(false));
    assert.equal(rows.length, 13);
  });
  for (const row of rows) {
    test(row.id, () => {
      const steps = row.steps.filter((s): s is RegisterStep => s.op === 'register');
      assert.equal(steps.length, row.expected.registrations?.length);
      steps.forEach((step, i) => {
        const { accepted, rules } = decide(step);
        assert.equal(accepted, row.expected.registrations?.[i]?.accepted, `rules: ${rules.join(', ')}`);
        if (!accepted) assert.ok(rules.length > 0, 'a refusal names its rule');
      });
    });
  }
});

describe('admission in other contexts', () => {
  const base = {
    protocolVersion: 'draft',
    hooks: [
      {
        id: 'com.example.policy',
        transport: { type: 'http', url: 'https://policy.example.com/hooks' },
        subscriptions: [
          {
            events: ['tool.before', 'hook.failure'],
            mode: 'observe',
            content: { default: 'metadata' },
            upload: {
              endpoint: 'https://policy.example.com/upload',
              timeoutMs: 1000,
              maxBytes: 1024,
              auth: { type: 'bearer', tokenEnv: 'UPLOAD_TOKEN' },
            },
          },
        ],
      },
    ],
  };
  const { registration } = parseRegistration(base);

  test('hook.failure is admitted only where the dispatcher emits it; an upload credential must resolve', () => {
    const refused = admitRegistration(registration, { env: {} });
    assert.deepEqual(
      refused.issues.map((i) => [i.pointer, i.rule]),
      [
        ['/hooks/0/subscriptions/0/events/1', 'admission.event-unsupported'],
        ['/hooks/0/subscriptions/0/upload/auth/tokenEnv', 'admission.credential-missing'],
      ],
    );
    assert.equal(
      JSON.stringify(refused).includes('UPLOAD_TOKEN'),
      false,
      'issues name pointers, not variables',
    );
    const ok = admitRegistration(registration, { env: { UPLOAD_TOKEN: 'x' }, hookFailures: true });
    assert.deepEqual(ok, { accepted: true, issues: [], notes: [] });
  });

  test('an interactive context can require ask; a managed installation can take managed scope', () => {
    const ask: AdmissionRequirement = { event: 'tool.before', mode: 'intercept', effects: ['ask', 'deny'] };
    assert.equal(
      admitRegistration(registration, { env: { UPLOAD_TOKEN: 'x' }, hookFailures: true, requirements: [ask] })
        .accepted,
      false,
    );
    assert.equal(
      admitRegistration(registration, {
        env: { UPLOAD_TOKEN: 'x' },
        hookFailures: true,
        interactive: true,
        requirements: [ask],
      }).accepted,
      true,
    );
    const managed = parseRegistration({
      ...base,
      hooks: [
        {
          ...base.hooks[0],
          subscriptions: [
            {
              events: ['tool.after'],
              mode: 'observe',
              content: { default: 'metadata' },
              scope: 'managed',
              disableable: false,
            },
          ],
        },
      ],
    }).registration;
    assert.deepEqual(
      admitRegistration(managed, { env: {} }).issues.map((i) => i.rule),
      ['admission.scope', 'admission.disableable'],
    );
    assert.equal(
      admitRegistration(managed, { env: {}, scopes: ['managed'], disableable: false }).accepted,
      true,
    );
  });
});

test('plain http to a host that is not loopback is refused at admission, as the transports refuse it', () => {
  const doc = (url: string, endpoint: string) =>
    parseRegistration({
      protocolVersion: 'draft',
      hooks: [
        {
          id: 'com.example.policy',
          transport: { type: 'http', url },
          subscriptions: [
            {
              events: ['tool.after'],
              mode: 'observe',
              content: { default: 'metadata' },
              upload: { endpoint, timeoutMs: 1000, maxBytes: 1024 },
            },
          ],
        },
      ],
    }).registration;
  // (An upload endpoint over plain http to another host is invalid already.)
  const remote = doc('http://policy.example.com/hooks', 'https://uploads.example.com/u');
  assert.deepEqual(
    admitRegistration(remote, { env: {} }).issues.map((i) => [i.pointer, i.rule]),
    [['/hooks/0/transport/url', 'admission.insecure-http']],
  );
  assert.equal(admitRegistration(remote, { env: {}, allowInsecureHttp: true }).accepted, true);
  const local = doc('http://127.0.0.1:8080/hooks', 'http://[::1]:9/u');
  assert.equal(admitRegistration(local, { env: {} }).accepted, true);
});
