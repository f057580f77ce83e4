/**
 * One case per registration rule (document, backend, transport, authentication, text): mutate the
 * official valid portable fixture and assert the exact JSON pointer and rule id reported. Pointers
 * are worked out by hand from the fixture. Subscription rules are in registration-subscription.test.ts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  parseRegistration,
  parseRegistrationText,
  RegistrationError,
} from '../../src/ahp/registration/registration.js';
import {
  accepted,
  expectIssue,
  H0,
  H1,
  issuesOf,
  PORTABLE,
  portable,
  S00,
  S11,
} from './registration-cases.js';

/** A valid client-credentials OAuth preset whose client secret is `clientSecretRef`. */
function oauthPreset(clientSecretRef: string) {
  return {
    type: 'oauth',
    resource: 'https://policy.example.com/agent-hooks',
    issuer: 'https://auth.example.com',
    clientId: 'tally',
    flow: 'client_credentials',
    clientSecretRef,
  };
}

test('the portable fixture normalises to the expected registration', () => {
  const { registration, warnings } = parseRegistration(portable());
  assert.deepEqual(warnings, []);
  assert.deepEqual(registration, {
    protocolVersion: 'draft',
    hooks: [
      {
        index: 0,
        id: 'com.example.policy',
        transport: { kind: 'http', url: 'https://policy.example.com/agent-hooks' },
        authentication: { type: 'bearer', tokenEnv: 'AHP_POLICY_TOKEN' },
        subscriptions: [
          {
            index: 0,
            events: ['tool.before'],
            mode: 'intercept',
            timeoutMs: 750,
            failurePolicy: 'fail-closed',
            content: { default: 'metadata', categories: {} },
            includeNative: false,
          },
        ],
      },
      {
        index: 1,
        id: 'com.example.local_review',
        transport: {
          kind: 'stdio',
          command: '/usr/local/bin/local-review',
          args: ['serve'],
          lifecycle: 'persistent',
          env: {},
        },
        subscriptions: [
          {
            index: 0,
            events: ['tool.before'],
            mode: 'intercept',
            timeoutMs: 500,
            failurePolicy: 'fail-open',
            content: { default: 'metadata', categories: {} },
            includeNative: false,
          },
          {
            index: 1,
            events: ['tool.after'],
            mode: 'observe',
            content: { default: 'metadata', categories: {} },
            includeNative: false,
          },
        ],
      },
    ],
  });
});

test('document rules', () => {
  assert.deepEqual(issuesOf([])[0], {
    pointer: '',
    rule: 'document.object',
    message: issuesOf([])[0]?.message,
  });
  expectIssue((d) => (d.protocolVersion = '2025-06-01'), '/protocolVersion', 'document.protocol-version');
  expectIssue((d) => delete d.protocolVersion, '/protocolVersion', 'document.protocol-version');
  expectIssue((d) => (d.hooks = []), '/hooks', 'document.hooks');
  expectIssue((d) => (d.hooks = { a: 1 }), '/hooks', 'document.hooks');
  expectIssue((d) => (d.hooks[1] = 'com.example.x'), H1, 'backend.object');
});

test('backend id: required, reverse-DNS, unique', () => {
  expectIssue((d) => delete d.hooks[0].id, `${H0}/id`, 'backend.id');
  for (const bad of ['policy', '1com.example', 'com..example', 'com.example.', 'com.exa mple']) {
    expectIssue((d) => (d.hooks[0].id = bad), `${H0}/id`, 'backend.id.reverse-dns');
  }
  const issues = expectIssue(
    (d) => (d.hooks[1].id = 'com.example.policy'),
    `${H1}/id`,
    'backend.id.duplicate',
  );
  assert.equal(issues.length, 1, 'the first use of the id is not reported');
});

test('transport: exactly one supported transport', () => {
  expectIssue((d) => delete d.hooks[0].transport, `${H0}/transport`, 'transport.object');
  expectIssue((d) => (d.hooks[0].transport = [d.hooks[0].transport]), `${H0}/transport`, 'transport.object');
  expectIssue((d) => (d.hooks[0].transport.type = 'websocket'), `${H0}/transport/type`, 'transport.type');
  expectIssue((d) => delete d.hooks[0].transport.type, `${H0}/transport/type`, 'transport.type');
});

test('http transport: absolute http(s) url without credentials', () => {
  for (const bad of [
    '/agent-hooks',
    'policy.example.com/hooks',
    'ftp://policy.example.com/',
    'https://',
    42,
  ]) {
    expectIssue((d) => (d.hooks[0].transport.url = bad), `${H0}/transport/url`, 'transport.http.url');
  }
  expectIssue(
    (d) => (d.hooks[0].transport.url = 'https://user:pw@policy.example.com/'),
    `${H0}/transport/url`,
    'transport.http.url.credentials',
  );
  const plain = accepted((d) => (d.hooks[0].transport.url = 'http://policy.example.com/hooks'));
  assert.deepEqual(
    plain.warnings.map((w) => [w.pointer, w.rule]),
    [[`${H0}/transport/url`, 'transport.http.url.insecure']],
  );
  assert.deepEqual(accepted((d) => (d.hooks[0].transport.url = 'http://127.0.0.1:8080/h')).warnings, []);
});

test('http transport: url is an RFC 3986 URI (the schema says format: uri), not just what URL parses', () => {
  // RFC 3986 §2: a space, `{`, `}` and `\` are not URI characters anywhere; they must be
  // percent-encoded. WHATWG URL parsing would silently repair them, which the schema does not allow.
  for (const bad of [
    'https://h/a b',
    'https://h/{x}',
    'https://h/a\\b',
    'https://h/?q=a b',
    'https://h/#a{b',
  ]) {
    const issues = expectIssue(
      (d) => (d.hooks[0].transport.url = bad),
      `${H0}/transport/url`,
      'transport.http.url',
    );
    assert.equal(issues.length, 1, bad);
  }
  for (const good of [
    'https://h/a%20b',
    'https://h/%7Bx%7D',
    'https://policy.example.com:8443/agent-hooks;v=1?tenant=a&x=~b#frag',
    'https://[2001:db8::1]/hooks',
  ]) {
    const ok = accepted((d) => (d.hooks[0].transport.url = good));
    assert.deepEqual(ok.registration.hooks[0]?.transport, { kind: 'http', url: good }, good);
  }
});

test('stdio transport fields', () => {
  const T = `${H1}/transport`;
  expectIssue((d) => delete d.hooks[1].transport.command, `${T}/command`, 'transport.stdio.command');
  expectIssue((d) => (d.hooks[1].transport.args = 'serve'), `${T}/args`, 'transport.stdio.args');
  expectIssue((d) => (d.hooks[1].transport.args = ['serve', 1]), `${T}/args`, 'transport.stdio.args');
  expectIssue(
    (d) => (d.hooks[1].transport.lifecycle = 'per-event'),
    `${T}/lifecycle`,
    'transport.stdio.lifecycle',
  );
  expectIssue((d) => (d.hooks[1].transport.cwd = 7), `${T}/cwd`, 'transport.stdio.cwd');
  expectIssue((d) => (d.hooks[1].transport.env = ['A=1']), `${T}/env`, 'transport.stdio.env');
  expectIssue((d) => (d.hooks[1].transport.env = { PORT: 8080 }), `${T}/env/PORT`, 'transport.stdio.env');
  expectIssue((d) => (d.hooks[1].transport.env = { 'A=B': 'x' }), `${T}/env/A=B`, 'transport.stdio.env');
  const ok = accepted((d) => {
    delete d.hooks[1].transport.args;
    d.hooks[1].transport.lifecycle = 'per_event';
    d.hooks[1].transport.cwd = '/srv/review';
    d.hooks[1].transport.env = { LOG_LEVEL: 'debug', REVIEW_TOKEN: 'x' };
  });
  assert.deepEqual(ok.registration.hooks[1]?.transport, {
    kind: 'stdio',
    command: '/usr/local/bin/local-review',
    args: [],
    lifecycle: 'per_event',
    cwd: '/srv/review',
    env: { LOG_LEVEL: 'debug', REVIEW_TOKEN: 'x' },
  });
  assert.deepEqual(
    ok.warnings.map((w) => [w.pointer, w.rule]),
    [[`${T}/env/REVIEW_TOKEN`, 'transport.stdio.env.secret']],
  );
});

test('stdio env: any non-empty name without = or NUL; the pointer escapes the name (RFC 6901)', () => {
  const T = `${H1}/transport`;
  // The spec: `env` is an object of literal string environment variables. An environment entry is
  // NAME=VALUE ending in NUL, so only '=', NUL and the empty name cannot be expressed.
  const names = { 'my-var': 'a', '1ST': 'b', 'dotted.name': 'c', 'with space': 'd', Ünï: 'e', 'a/b~c': 'f' };
  const ok = accepted((d) => (d.hooks[1].transport.env = { ...names }));
  const transport = ok.registration.hooks[1]?.transport;
  assert.ok(transport?.kind === 'stdio');
  assert.deepEqual(transport.env, names);
  // RFC 6901 §3: '~' is written '~0' and '/' is written '~1' in a reference token.
  expectIssue(
    (d) => (d.hooks[1].transport.env = { 'a/b~c=': 'x' }),
    `${T}/env/a~1b~0c=`,
    'transport.stdio.env',
  );
  expectIssue((d) => (d.hooks[1].transport.env = { '': 'x' }), `${T}/env/`, 'transport.stdio.env');
  expectIssue((d) => (d.hooks[1].transport.env = { 'A\0B': 'x' }), `${T}/env/A\0B`, 'transport.stdio.env');
  expectIssue((d) => (d.hooks[1].transport.env = { 'x/y': 'a\0b' }), `${T}/env/x~1y`, 'transport.stdio.env');
});

test('authentication: a credential reference, never a literal', () => {
  const A = `${H0}/authentication`;
  expectIssue(
    (d) => (d.hooks[0].authentication = { type: 'bearer', token: 'abc' }),
    `${A}/token`,
    'authentication.literal-credential',
  );
  expectIssue(
    (d) => (d.hooks[0].authentication.token = 'abc'),
    `${A}/token`,
    'authentication.literal-credential',
  );
  expectIssue(
    (d) => (d.hooks[0].authentication.tokenRef = 'secrets/p'),
    A,
    'authentication.bearer.one-reference',
  );
  expectIssue((d) => delete d.hooks[0].authentication.tokenEnv, A, 'authentication.bearer.one-reference');
  expectIssue(
    (d) => (d.hooks[0].authentication.tokenEnv = '9TOKEN'),
    `${A}/tokenEnv`,
    'authentication.bearer.token-env',
  );
  expectIssue(
    (d) => (d.hooks[0].authentication = { type: 'bearer', tokenRef: '' }),
    `${A}/tokenRef`,
    'authentication.bearer.token-ref',
  );
  expectIssue((d) => (d.hooks[0].authentication.type = 'basic'), `${A}/type`, 'authentication.type');
  expectIssue((d) => (d.hooks[0].authentication = 'Bearer abc'), A, 'authentication.object');
  expectIssue(
    (d) => (d.hooks[1].authentication = { type: 'bearer', tokenEnv: 'X' }),
    `${H1}/authentication`,
    'backend.authentication.stdio',
  );
  const ref = accepted((d) => (d.hooks[0].authentication = { type: 'bearer', tokenRef: 'secrets/policy' }));
  assert.deepEqual(ref.registration.hooks[0]?.authentication, { type: 'bearer', tokenRef: 'secrets/policy' });
  assert.deepEqual(ref.warnings, []);
  // Any non-empty reference is valid (its format is the deployment's), but one the file secret
  // provider cannot resolve, because it would leave TALLY_HOME/secrets or is not a plain name, is
  // warned about, not refused.
  for (const tokenRef of ['../outside', '/etc/passwd', 'vault://kv/policy', 'a//b', '.hidden']) {
    const odd = accepted((d) => (d.hooks[0].authentication = { type: 'bearer', tokenRef }));
    assert.deepEqual(
      odd.warnings.map((w) => [w.pointer, w.rule]),
      [[`${A}/tokenRef`, 'authentication.ref.unresolvable']],
      tokenRef,
    );
  }
  const oauth = accepted((d) => (d.hooks[0].authentication = oauthPreset('../../client')));
  assert.deepEqual(
    oauth.warnings.map((w) => [w.pointer, w.rule]),
    [[`${A}/clientSecretRef`, 'authentication.ref.unresolvable']],
  );
});

/**
 * Credentials in vendors' documented formats (the GitHub docs' example token, the AWS docs'
 * example access key id, the RFC 7519 §3.1 example JWT) and the shapes the review named: a
 * registration must hold references only (spec §12), so such a value in a reference field is
 * warned about, and the warning never repeats it.
 */
const CREDENTIALS = {
  github: 'ghp_16C7e42F292c6912E7710c838347Ae178B4a',
  githubFine: 'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRS',
  gitlab: 'glpat-4xQ2r9Tz8LmN3pVw7Ykd',
  npm: 'npm_2f9Kx7Qm4Lr8Tz1Vb6Nc3Hd5Jw0Ys9Pa1Ue',
  awsKeyId: 'AKIAIOSFODNN7EXAMPLE',
  awsSession: 'ASIAY34FZKBOKMUTVV7A',
  apiKey: 'sk-live-4f9a2b7c1d3e5f60718293a4',
  stripeLive: 'sk_live_51H8xQ2eZvKYlo2C4f9a2b7c',
  stripeTest: 'sk_test_4eC39HqLyjWDarjtT1zdp7dc',
  slackBot: 'xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy',
  slackUser: 'xoxp-2048-4096-8192-a1b2c3d4e5f6',
  jwt: 'eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  random: 'Q7fK2mZ9xLp4Rt8Wv3Nb6Hc1Jd5Gs0Ya',
};
const LOOKS = 'authentication.ref.looks-like-credential';

/** Warnings and issues of a document, and everything they would print. */
function report(mutate: (d: ReturnType<typeof portable>) => void) {
  const doc = portable();
  mutate(doc);
  try {
    const { warnings } = parseRegistration(doc);
    return { issues: [], warnings, printed: JSON.stringify(warnings) };
  } catch (error) {
    assert.ok(error instanceof RegistrationError);
    return {
      issues: error.issues,
      warnings: error.warnings,
      printed: JSON.stringify([error.message, error.issues, error.warnings, error.detail]),
    };
  }
}

test('authentication: a credential pasted into tokenEnv, tokenRef or clientSecretRef is warned about, never echoed', () => {
  const A = `${H0}/authentication`;
  for (const [kind, value] of Object.entries(CREDENTIALS)) {
    const ref = report((d) => (d.hooks[0].authentication = { type: 'bearer', tokenRef: value }));
    assert.deepEqual(ref.issues, [], kind);
    assert.ok(
      ref.warnings.some((w) => w.pointer === `${A}/tokenRef` && w.rule === LOOKS),
      `${kind}: ${JSON.stringify(ref.warnings)}`,
    );
    assert.ok(!ref.printed.includes(value), `${kind} repeated`);
    const env = report((d) => (d.hooks[0].authentication.tokenEnv = value));
    assert.ok(
      env.warnings.some((w) => w.pointer === `${A}/tokenEnv` && w.rule === LOOKS),
      `${kind}: ${JSON.stringify(env.warnings)}`,
    );
    // Shapes outside the schema's tokenEnv pattern are also errors; neither repeats the value.
    const shaped = /^[A-Za-z_][A-Za-z0-9_]*$/.test(value);
    assert.deepEqual(
      env.issues.map((i) => [i.pointer, i.rule]),
      shaped ? [] : [[`${A}/tokenEnv`, 'authentication.bearer.token-env']],
      kind,
    );
    assert.ok(!env.printed.includes(value), `${kind} repeated`);
    const oauth = report((d) => (d.hooks[0].authentication = oauthPreset(value)));
    assert.deepEqual(oauth.issues, [], kind);
    assert.ok(
      oauth.warnings.some((w) => w.pointer === `${A}/clientSecretRef` && w.rule === LOOKS),
      kind,
    );
    assert.ok(!oauth.printed.includes(value), `${kind} repeated`);
  }
  // The upload binding's auth is checked the same way.
  const upload = report(
    (d) =>
      (d.hooks[0].subscriptions[0].upload = {
        endpoint: 'https://uploads.example/bytes',
        timeoutMs: 5000,
        maxBytes: 1024,
        auth: { type: 'bearer', tokenRef: CREDENTIALS.apiKey },
      }),
  );
  assert.deepEqual(
    upload.warnings.map((w) => [w.pointer, w.rule]),
    [[`${S00}/upload/auth/tokenRef`, LOOKS]],
  );
  assert.ok(!upload.printed.includes(CREDENTIALS.apiKey));
});

test('authentication: names and references are not taken for credentials', () => {
  const A = `${H0}/authentication`;
  for (const tokenEnv of [
    'AHP_POLICY_TOKEN',
    'GITHUB_TOKEN',
    'NPM_TOKEN',
    'AWS_ACCESS_KEY_ID',
    'npm_config_token',
  ]) {
    assert.deepEqual(accepted((d) => (d.hooks[0].authentication.tokenEnv = tokenEnv)).warnings, [], tokenEnv);
  }
  for (const tokenRef of [
    'secrets/policy',
    'team/policy-token',
    'policy-token',
    'sk-policy',
    'oauth/client',
  ]) {
    assert.deepEqual(
      accepted((d) => (d.hooks[0].authentication = { type: 'bearer', tokenRef })).warnings,
      [],
      tokenRef,
    );
  }
  // An unresolvable reference keeps its own warning.
  const odd = accepted(
    (d) => (d.hooks[0].authentication = { type: 'bearer', tokenRef: 'vault://kv/policy' }),
  );
  assert.deepEqual(
    odd.warnings.map((w) => [w.pointer, w.rule]),
    [[`${A}/tokenRef`, 'authentication.ref.unresolvable']],
  );
});

test('authentication: oauth preset', () => {
  const A = `${H0}/authentication`;
  const preset = oauthPreset('secrets/tally-client');
  const ok = accepted((d) => (d.hooks[0].authentication = { ...preset }));
  assert.deepEqual(ok.registration.hooks[0]?.authentication, { ...preset, scopes: [] });
  expectIssue(
    (d) => (d.hooks[0].authentication = { ...preset, issuer: 'http://auth.example.com' }),
    `${A}/issuer`,
    'authentication.oauth.field',
  );
  for (const issuer of [
    'https://auth.example.com/a b',
    'https://auth.example.com/{tenant}',
    'https://a\\b',
  ]) {
    expectIssue(
      (d) => (d.hooks[0].authentication = { ...preset, issuer }),
      `${A}/issuer`,
      'authentication.oauth.field',
    );
  }
  expectIssue(
    (d) => (d.hooks[0].authentication = { ...preset, flow: 'implicit' }),
    `${A}/flow`,
    'authentication.oauth.field',
  );
  expectIssue(
    (d) => (d.hooks[0].authentication = { ...preset, scopes: ['a', 'a'] }),
    `${A}/scopes`,
    'authentication.oauth.field',
  );
  expectIssue(
    (d) => (d.hooks[0].authentication = { ...preset, clientSecret: 'shh' }),
    `${A}/clientSecret`,
    'authentication.literal-credential',
  );
});

test('unknown fields are ignored with a warning, recognised fields still validated', () => {
  const ok = accepted((d) => {
    d.comment = 'x';
    d.hooks[0]['a/b~c'] = 1;
    d.hooks[0].subscriptions[0].enabled = true;
  });
  assert.deepEqual(
    ok.warnings.map((w) => [w.pointer, w.rule]),
    [
      ['/comment', 'unknown-field'],
      [`${H0}/a~1b~0c`, 'unknown-field'],
      [`${S00}/enabled`, 'unknown-field'],
    ],
  );
  expectIssue(
    (d) => {
      d.hooks[0].subscriptions[0].enabled = true;
      d.hooks[0].subscriptions[0].mode = 'all';
    },
    `${S00}/mode`,
    'subscription.mode',
  );
});

test('every problem is reported, not only the first', () => {
  const doc = portable();
  doc.hooks[0].authentication = { type: 'bearer', token: 'literal' };
  doc.hooks[1].id = 'com.example.policy';
  doc.hooks[1].subscriptions[1].failurePolicy = 'fail-open';
  doc.hooks[1].transport.url = 'ignored';
  const got = issuesOf(doc).map((i) => [i.pointer, i.rule]);
  for (const want of [
    [`${H0}/authentication/token`, 'authentication.literal-credential'],
    [`${H0}/authentication`, 'authentication.bearer.one-reference'],
    [`${H1}/id`, 'backend.id.duplicate'],
    [`${S11}/failurePolicy`, 'subscription.observe-policy-fields'],
  ]) {
    assert.ok(
      got.some((g) => g[0] === want[0] && g[1] === want[1]),
      `missing ${want} in ${JSON.stringify(got)}`,
    );
  }
});

test('text: syntax errors and duplicate keys name the byte; nothing else is checked', () => {
  const text = '{"protocolVersion":"draft",}';
  try {
    parseRegistrationText(text);
    assert.fail('accepted');
  } catch (error) {
    assert.ok(error instanceof RegistrationError);
    assert.equal(error.code, 'syntax');
    assert.equal(error.issues.length, 1);
    assert.equal(error.issues[0]?.rule, 'document.json');
    assert.equal(error.detail?.byte, text.indexOf('}'), 'the byte of the unexpected }');
  }
  for (const bad of [
    '{"hooks":[],"hooks":[]}',
    '',
    'null x',
    new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d]),
  ]) {
    assert.throws(
      () => parseRegistrationText(bad),
      (e: unknown) =>
        e instanceof RegistrationError && e.code === 'syntax' && /byte \d+/.test(e.issues[0]?.message ?? ''),
    );
  }
  assert.throws(
    () => parseRegistrationText(new Uint8Array([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x7d])),
    (e: unknown) => e instanceof RegistrationError && e.detail?.byte === 2,
  );
  const ok = parseRegistrationText(readFileSync(PORTABLE));
  assert.equal(ok.registration.hooks.length, 2);
});
