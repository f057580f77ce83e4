/**
 * One case per subscription rule (events, mode, deadline and failure policy, content, upload, local
 * fields): mutate the official valid portable fixture and assert the exact JSON pointer and rule id.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accepted, expectIssue, H0, S00, S11 } from './registration-cases.js';

test('subscriptions: non-empty, each an object', () => {
  expectIssue((d) => (d.hooks[0].subscriptions = []), `${H0}/subscriptions`, 'backend.subscriptions');
  expectIssue((d) => delete d.hooks[0].subscriptions, `${H0}/subscriptions`, 'backend.subscriptions');
  expectIssue((d) => (d.hooks[0].subscriptions[0] = 'tool.before'), S00, 'subscription.object');
});

test('events: exact names, whole-family wildcards or *, nothing else', () => {
  const E = `${S00}/events`;
  expectIssue((d) => (d.hooks[0].subscriptions[0].events = []), E, 'subscription.events');
  expectIssue((d) => delete d.hooks[0].subscriptions[0].events, E, 'subscription.events');
  expectIssue((d) => (d.hooks[0].subscriptions[0].events = 'tool.before'), E, 'subscription.events');
  for (const bad of ['tool.before*', 'tool.permission.*', 'tool.*.before', '**', 'Tool.*', 'tool.b?fore']) {
    expectIssue((d) => (d.hooks[0].subscriptions[0].events = [bad]), `${E}/0`, 'subscription.events.pattern');
  }
  for (const bad of ['tool.error', 'tool', 'foo.*', 'prompt.submitted']) {
    expectIssue(
      (d) => (d.hooks[0].subscriptions[0].events = ['tool.before', bad]),
      `${E}/1`,
      'subscription.events.unknown',
    );
  }
  expectIssue(
    (d) => (d.hooks[0].subscriptions[0].events = ['tool.before', 7]),
    `${E}/1`,
    'subscription.events.pattern',
  );
  expectIssue(
    (d) => (d.hooks[0].subscriptions[0].events = ['tool.before', 'tool.after', 'tool.before']),
    `${E}/2`,
    'subscription.events.duplicate',
  );
  const redundant = accepted(
    (d) => (d.hooks[0].subscriptions[0].events = ['context.*', 'context.compact.after']),
  );
  assert.deepEqual(
    redundant.warnings.map((w) => [w.pointer, w.rule]),
    [[`${E}/1`, 'subscription.events.redundant']],
  );
});

test('intercept subscriptions select only interceptable events, wildcards included', () => {
  const E = `${S00}/events`;
  for (const bad of ['turn.end', 'tool.progress', 'session.end', 'hook.failure']) {
    expectIssue(
      (d) => (d.hooks[0].subscriptions[0].events = [bad]),
      `${E}/0`,
      'subscription.events.not-interceptable',
    );
  }
  for (const bad of ['file.*', 'hook.*']) {
    expectIssue(
      (d) => (d.hooks[0].subscriptions[0].events = ['tool.before', bad]),
      `${E}/1`,
      'subscription.events.not-interceptable',
    );
  }
  // Families with some interceptable members are accepted, with a warning naming what is left out.
  const partial = accepted((d) => (d.hooks[0].subscriptions[0].events = ['session.*']));
  assert.deepEqual(
    partial.warnings.map((w) => [w.pointer, w.rule]),
    [[`${E}/0`, 'subscription.events.partly-interceptable']],
  );
  assert.match(partial.warnings[0]?.message ?? '', /session\.end/);
  assert.deepEqual(accepted((d) => (d.hooks[0].subscriptions[0].events = ['*'])).warnings, []);
  // The same observe-only names are fine in an observe subscription.
  accepted((d) => (d.hooks[1].subscriptions[1].events = ['turn.end', 'file.*', 'hook.*']));
});

test('mode, timeoutMs and failurePolicy', () => {
  expectIssue((d) => (d.hooks[0].subscriptions[0].mode = 'both'), `${S00}/mode`, 'subscription.mode');
  expectIssue((d) => delete d.hooks[0].subscriptions[0].mode, `${S00}/mode`, 'subscription.mode');
  for (const bad of [0, -5, 1.5, '750', null]) {
    expectIssue(
      (d) => (d.hooks[0].subscriptions[0].timeoutMs = bad),
      `${S00}/timeoutMs`,
      'subscription.timeout-ms',
    );
  }
  expectIssue(
    (d) => delete d.hooks[0].subscriptions[0].timeoutMs,
    `${S00}/timeoutMs`,
    'subscription.timeout-ms',
  );
  expectIssue(
    (d) => delete d.hooks[0].subscriptions[0].failurePolicy,
    `${S00}/failurePolicy`,
    'subscription.failure-policy',
  );
  expectIssue(
    (d) => (d.hooks[0].subscriptions[0].failurePolicy = 'open'),
    `${S00}/failurePolicy`,
    'subscription.failure-policy',
  );
  expectIssue(
    (d) => (d.hooks[1].subscriptions[1].failurePolicy = 'fail-open'),
    `${S11}/failurePolicy`,
    'subscription.observe-policy-fields',
  );
  expectIssue(
    (d) => (d.hooks[1].subscriptions[1].timeoutMs = 100),
    `${S11}/timeoutMs`,
    'subscription.observe-policy-fields',
  );
  const slow = accepted((d) => (d.hooks[0].subscriptions[0].timeoutMs = 60_000));
  assert.deepEqual(
    slow.warnings.map((w) => [w.pointer, w.rule]),
    [[`${S00}/timeoutMs`, 'subscription.timeout-ms.range']],
  );
});

test('content selection, includeNative', () => {
  const C = `${S00}/content`;
  expectIssue((d) => delete d.hooks[0].subscriptions[0].content, C, 'subscription.content');
  expectIssue((d) => (d.hooks[0].subscriptions[0].content = 'metadata'), C, 'subscription.content');
  expectIssue(
    (d) => (d.hooks[0].subscriptions[0].content = { text: 'body' }),
    `${C}/default`,
    'content.default',
  );
  expectIssue(
    (d) => (d.hooks[0].subscriptions[0].content.default = 'all'),
    `${C}/default`,
    'content.default',
  );
  expectIssue(
    (d) => (d.hooks[0].subscriptions[0].content.images = 'full'),
    `${C}/images`,
    'content.category',
  );
  const ok = accepted(
    (d) => (d.hooks[0].subscriptions[0].content = { default: 'omit', text: 'body', x3d: 'metadata' }),
  );
  assert.deepEqual(ok.registration.hooks[0]?.subscriptions[0]?.content, {
    default: 'omit',
    categories: { text: 'body', x3d: 'metadata' },
  });
  expectIssue(
    (d) => (d.hooks[0].subscriptions[0].includeNative = 'true'),
    `${S00}/includeNative`,
    'subscription.include-native',
  );
  const native = accepted((d) => (d.hooks[0].subscriptions[0].includeNative = true));
  assert.equal(native.registration.hooks[0]?.subscriptions[0]?.includeNative, true);
});

test('upload binding: endpoint, timeoutMs, maxBytes, independent auth', () => {
  const U = `${S00}/upload`;
  const upload = { endpoint: 'https://uploads.example/bytes', timeoutMs: 5000, maxBytes: 1048576 };
  const ok = accepted(
    (d) =>
      (d.hooks[0].subscriptions[0].upload = { ...upload, auth: { type: 'bearer', tokenRef: 'secrets/up' } }),
  );
  assert.deepEqual(ok.registration.hooks[0]?.subscriptions[0]?.upload, {
    ...upload,
    auth: { type: 'bearer', tokenRef: 'secrets/up' },
  });
  accepted(
    (d) =>
      (d.hooks[0].subscriptions[0].upload = { ...upload, endpoint: 'http://127.0.0.1:9000/u', maxBytes: 0 }),
  );
  expectIssue((d) => (d.hooks[0].subscriptions[0].upload = 'https://u.example'), U, 'upload.object');
  for (const bad of [
    '/bytes',
    'http://uploads.example/bytes',
    'https://a:b@uploads.example/',
    'http://localhost.evil.example/',
    // The schema's `format: uri` (RFC 3986): no raw space, brace or backslash.
    'https://uploads.example/a b',
    'https://uploads.example/{id}',
    'https://uploads.example/a\\b',
  ]) {
    expectIssue(
      (d) => (d.hooks[0].subscriptions[0].upload = { ...upload, endpoint: bad }),
      `${U}/endpoint`,
      'upload.endpoint',
    );
  }
  expectIssue(
    (d) => (d.hooks[0].subscriptions[0].upload = { ...upload, timeoutMs: 0 }),
    `${U}/timeoutMs`,
    'upload.timeout-ms',
  );
  expectIssue(
    (d) => (d.hooks[0].subscriptions[0].upload = { ...upload, maxBytes: -1 }),
    `${U}/maxBytes`,
    'upload.max-bytes',
  );
  expectIssue(
    (d) =>
      (d.hooks[0].subscriptions[0].upload = {
        ...upload,
        auth: { type: 'bearer', tokenEnv: 'A', tokenRef: 'b' },
      }),
    `${U}/auth`,
    'authentication.bearer.one-reference',
  );
  expectIssue(
    (d) => (d.hooks[0].subscriptions[0].upload = { ...upload, auth: { type: 'bearer', token: 't' } }),
    `${U}/auth/token`,
    'authentication.literal-credential',
  );
});

test('local subscription fields: id, filters, scope, disableable; legacy contentReceiver', () => {
  expectIssue((d) => (d.hooks[0].subscriptions[0].id = ''), `${S00}/id`, 'subscription.id');
  expectIssue(
    (d) => (d.hooks[0].subscriptions[0].filters = { paths: ['a', 'a'] }),
    `${S00}/filters/paths`,
    'subscription.filters',
  );
  expectIssue((d) => (d.hooks[0].subscriptions[0].scope = 'global'), `${S00}/scope`, 'subscription.scope');
  expectIssue(
    (d) => (d.hooks[0].subscriptions[0].scope = 'managed'),
    `${S00}/disableable`,
    'subscription.disableable',
  );
  expectIssue((d) => (d.hooks[0].contentReceiver = {}), `${H0}/contentReceiver`, 'backend.content-receiver');
  const ok = accepted((d) => {
    Object.assign(d.hooks[0].subscriptions[0], { id: 'tool-policy', scope: 'managed', disableable: false });
    d.hooks[0].subscriptions[0].filters = { toolKinds: ['shell'] };
  });
  const sub = ok.registration.hooks[0]?.subscriptions[0];
  assert.equal(sub?.id, 'tool-policy');
  assert.equal(sub?.scope, 'managed');
  assert.equal(sub?.disableable, false);
  assert.deepEqual(sub?.filters, { toolKinds: ['shell'] });
});
