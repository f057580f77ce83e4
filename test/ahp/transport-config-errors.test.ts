/**
 * Configuration faults met at dispatch time, against real processes and loopback servers.
 * Oracles:
 * - the registration rules: the spec's stdio `env` is "an object of literal string environment
 *   variables" and a document `tally ahp validate` accepts must be one the harness can run, so
 *   every name validation accepts reaches the backend process;
 * - RFC 6901: errors carry the full pointer of the registration field at fault (`/hooks/N/...`),
 *   with `~` written `~0` and `/` written `~1`;
 * - spec §12: secrets never appear in logs or error data and a registration holds only references,
 *   so a credential pasted into tokenEnv, tokenRef or clientSecretRef is never repeated by an
 *   error: the error names the field and its pointer instead.
 */
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseRegistration } from '../../src/ahp/registration/registration.js';
import type { Authentication, Backend } from '../../src/ahp/registration/types.js';
import { createTransport } from '../../src/ahp/transports/index.js';
import { fileSecretProvider, SecretError } from '../../src/ahp/transports/secrets.js';
import { backendEnvironment } from '../../src/ahp/transports/stdio-process.js';
import { TransportError } from '../../src/ahp/transports/transport.js';
import { UploadError, Uploader } from '../../src/ahp/transports/upload.js';
import { json, suiteServers } from './http-servers.js';
import { portable } from './registration-cases.js';
import {
  FAULT_BACKEND,
  httpBackend,
  interceptRequest,
  never,
  options,
  recordingLogger,
  stdioBackend,
  tempDir,
} from './transport-helpers.js';

type Answer = { id: unknown; result: Record<string, unknown> };

/** Credentials in documented vendor formats, pasted where a reference belongs. */
const GITHUB = 'ghp_16C7e42F292c6912E7710c838347Ae178B4a';
const API_KEY = 'sk-live-4f9a2b7c1d3e5f60718293a4';
const JWT =
  'eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';

/** Everything an error exposes (message, detail, stack) and every log line, as one text. */
function exposed(errors: unknown[], logs: unknown[] = []): string {
  return JSON.stringify([
    ...errors.map((e) =>
      e instanceof Error ? { m: e.message, d: (e as TransportError).detail, s: e.stack } : e,
    ),
    ...logs,
  ]);
}

function at(backend: Backend, index: number): Backend {
  return { ...backend, index };
}

describe('stdio env: runtime and validation agree', { timeout: 30_000 }, () => {
  const names = {
    'my-var': 'a',
    '1ST': 'b',
    'dotted.name': 'c',
    'with space': 'd',
    Ünï: 'e',
    'a/b~c': 'f',
    PLAIN: '$HOME stays literal',
  };

  for (const lifecycle of ['persistent', 'per_event'] as const) {
    test(`every name a valid registration holds reaches the ${lifecycle} process`, async () => {
      const doc = portable();
      doc.hooks[1].transport = {
        type: 'stdio',
        command: process.execPath,
        args: [FAULT_BACKEND, 'env'],
        lifecycle,
        env: names,
      };
      const { registration } = parseRegistration(doc);
      const backend = registration.hooks[1]!;
      const t = createTransport(backend, options());
      try {
        const answer = (await t.request(interceptRequest(), never())) as Answer;
        const childEnv = answer.result.env as Record<string, string>;
        for (const [name, value] of Object.entries(names)) assert.equal(childEnv[name], value, name);
      } finally {
        await t.close();
      }
    });
  }

  test('what validation refuses the runtime refuses too, at the same escaped pointer', () => {
    const cases: [Record<string, string>, string][] = [
      [{ 'a/b~c=': 'x' }, '/hooks/1/transport/env/a~1b~0c='],
      [{ '': 'x' }, '/hooks/1/transport/env/'],
      [{ 'A\0B': 'x' }, '/hooks/1/transport/env/A\0B'],
      [{ 'x/y': 'a\0b' }, '/hooks/1/transport/env/x~1y'],
      [{ 'm~n': 'a\0b' }, '/hooks/1/transport/env/m~0n'],
    ];
    for (const [env, pointer] of cases) {
      const doc = portable();
      doc.hooks[1].transport.env = env;
      assert.throws(
        () => parseRegistration(doc),
        (e: unknown) =>
          (e as { issues: { pointer: string; rule: string }[] }).issues.some(
            (i) => i.pointer === pointer && i.rule === 'transport.stdio.env',
          ),
        pointer,
      );
      assert.throws(
        () => backendEnvironment(env, {}, '/hooks/1/transport'),
        (e: unknown) =>
          e instanceof TransportError && e.code === 'transport' && e.detail?.pointer === pointer,
        pointer,
      );
      assert.throws(
        () => createTransport(at(stdioBackend('echo', [], 'persistent', { env }), 1), options()),
        (e: unknown) => e instanceof TransportError && e.detail?.pointer === pointer,
        pointer,
      );
    }
  });
});

describe('configuration errors name the registration pointer', { timeout: 30_000 }, () => {
  const serve = suiteServers();

  test('a refused endpoint URL: /hooks/N/transport/url', () => {
    for (const [url, code] of [
      ['http://policy.example.com/hooks', 'transport'],
      ['https://user:pw@policy.example.com/hooks', 'auth'],
    ] as const) {
      assert.throws(
        () => createTransport(at(httpBackend(url), 2), options()),
        (e: unknown) =>
          e instanceof TransportError &&
          e.code === code &&
          e.detail?.pointer === '/hooks/2/transport/url' &&
          e.detail?.field === 'url' &&
          e.message.includes('/hooks/2/transport/url') &&
          !e.message.includes('pw@'),
        url,
      );
    }
  });

  for (const lifecycle of ['persistent', 'per_event'] as const) {
    test(`a ${lifecycle} backend that cannot start: /hooks/N/transport`, async () => {
      const backend: Backend = {
        index: 3,
        id: 'org.tally.test.missing',
        transport: {
          kind: 'stdio',
          command: join(tempDir(), 'no-such-backend'),
          args: [],
          lifecycle,
          env: {},
        },
        subscriptions: [],
      };
      const t = createTransport(backend, options());
      try {
        const error = await t.request(interceptRequest(), never()).catch((e: unknown) => e);
        assert.ok(error instanceof TransportError && error.code === 'transport', String(error));
        assert.equal(error.detail?.pointer, '/hooks/3/transport');
      } finally {
        await t.close();
      }
    });
  }

  test('an unset tokenEnv or an unresolvable tokenRef: the field and its pointer, never the value', async () => {
    const s = await serve((seen, res) => json(res, 200, { jsonrpc: '2.0', id: null, seen: seen.url }));
    const { logger, lines } = recordingLogger();
    const dir = tempDir();
    mkdirSync(join(dir, 'secrets'));
    writeFileSync(join(dir, 'secrets', API_KEY), 'the-token-itself');
    chmodSync(join(dir, 'secrets', API_KEY), 0o644);
    const cases: [Authentication, string][] = [
      [{ type: 'bearer', tokenEnv: GITHUB }, 'tokenEnv'],
      [{ type: 'bearer', tokenRef: API_KEY }, 'tokenRef'], // exists, but readable by others
      [{ type: 'bearer', tokenRef: JWT }, 'tokenRef'], // missing
      [{ type: 'bearer', tokenRef: `/${API_KEY}` }, 'tokenRef'], // not a relative name
    ];
    const errors: unknown[] = [];
    for (const [binding, field] of cases) {
      const t = createTransport(at(httpBackend(s.url, binding), 4), options({ logger }, dir));
      const error = await t.request(interceptRequest(), never()).catch((e: unknown) => e);
      await t.close();
      assert.ok(error instanceof TransportError && error.code === 'auth', String(error));
      assert.equal(error.detail?.field, field);
      assert.equal(error.detail?.pointer, `/hooks/4/authentication/${field}`);
      assert.ok(error.message.includes(field) && error.message.includes(`/hooks/4/authentication/${field}`));
      errors.push(error);
    }
    assert.equal(s.seen.length, 0, 'nothing is sent without the configured credential');
    const text = exposed(errors, lines);
    for (const value of [GITHUB, API_KEY, JWT, 'the-token-itself']) assert.ok(!text.includes(value), value);
  });

  test('an unresolvable clientSecretRef of an OAuth preset: the field and its pointer, never the value', async () => {
    const state = { issuer: '' };
    const as = await serve((seen, res) => {
      if (seen.url === '/.well-known/oauth-authorization-server') {
        return json(res, 200, {
          issuer: state.issuer,
          token_endpoint: `${state.issuer}/token`,
          grant_types_supported: ['client_credentials'],
        });
      }
      res.writeHead(404).end();
    });
    state.issuer = as.url;
    const rs = await serve((_seen, res) => res.writeHead(401).end());
    const preset: Authentication = {
      type: 'oauth',
      issuer: as.url,
      resource: rs.url,
      clientId: 'client-1',
      clientSecretRef: API_KEY,
      flow: 'client_credentials',
      scopes: [],
    };
    const { logger, lines } = recordingLogger();
    const t = createTransport(at(httpBackend(rs.url, preset), 0), options({ logger }));
    const error = await t.request(interceptRequest(), never()).catch((e: unknown) => e);
    await t.close();
    assert.ok(error instanceof TransportError && error.code === 'auth', String(error));
    assert.equal(error.detail?.field, 'clientSecretRef');
    assert.equal(error.detail?.pointer, '/hooks/0/authentication/clientSecretRef');
    assert.equal(rs.seen.length, 0);
    assert.ok(!exposed([error], lines).includes(API_KEY));
  });

  test('an upload binding: endpoint and auth pointers, never the reference value', async () => {
    const env = { TALLY_HOME: tempDir() };
    const opts = { secrets: fileSecretProvider(env), env, pointer: '/hooks/0/subscriptions/1/upload' };
    assert.throws(
      () => new Uploader({ endpoint: 'http://uploads.example/bytes', timeoutMs: 1000, maxBytes: 10 }, opts),
      (e: unknown) =>
        e instanceof UploadError &&
        e.detail?.pointer === '/hooks/0/subscriptions/1/upload/endpoint' &&
        e.detail?.field === 'upload.endpoint',
    );
    const s = await serve((_seen, res) => res.writeHead(201).end());
    const up = new Uploader(
      { endpoint: s.url, timeoutMs: 5000, maxBytes: 10, auth: { type: 'bearer', tokenRef: API_KEY } },
      opts,
    );
    const error = await up.upload(Buffer.from('abc')).catch((e: unknown) => e);
    assert.ok(error instanceof UploadError && error.code === 'auth', String(error));
    assert.equal(error.detail?.pointer, '/hooks/0/subscriptions/1/upload/auth/tokenRef');
    assert.equal(error.detail?.field, 'tokenRef');
    assert.equal(s.seen.length, 0);
    assert.ok(!exposed([error]).includes(API_KEY));
    // Without a pointer the field alone is named; the value still never is.
    const bare = new Uploader(
      { endpoint: s.url, timeoutMs: 5000, maxBytes: 10, auth: { type: 'bearer', tokenEnv: GITHUB } },
      { secrets: fileSecretProvider(env), env },
    );
    const unset = await bare.upload(Buffer.from('abc')).catch((e: unknown) => e);
    assert.ok(unset instanceof UploadError && unset.code === 'auth');
    assert.deepEqual(unset.detail, { field: 'tokenEnv' });
    assert.ok(!exposed([unset]).includes(GITHUB));
  });
});

describe('secret provider errors', () => {
  test('name the fault and the secrets directory, never the reference or its file path', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'secrets', 'sub'), { recursive: true });
    writeFileSync(join(dir, 'secrets', API_KEY), 'x');
    chmodSync(join(dir, 'secrets', API_KEY), 0o640);
    writeFileSync(join(dir, 'secrets', GITHUB), '');
    chmodSync(join(dir, 'secrets', GITHUB), 0o600);
    mkdirSync(join(dir, 'secrets', JWT));
    const provider = fileSecretProvider({ TALLY_HOME: dir });
    const cases: [string, string][] = [
      [API_KEY, 'mode'],
      [GITHUB, 'empty'],
      [JWT, 'not-file'],
      [`sub/${API_KEY}`, 'missing'],
      [`../${API_KEY}`, 'bad-ref'],
    ];
    for (const [ref, code] of cases) {
      const error = await provider.resolve(ref).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof SecretError, ref);
      assert.equal(error.code, code, ref);
      const text = exposed([error]);
      for (const value of [API_KEY, GITHUB, JWT]) assert.ok(!text.includes(value), `${code}: ${value}`);
    }
  });
});
