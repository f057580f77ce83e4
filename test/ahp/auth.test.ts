/**
 * Endpoint authentication and the secret provider, against real loopback servers playing the
 * protected resource, the authorization server and the token endpoint.
 * Oracles: RFC 6750 (one `Authorization: Bearer` header), RFC 9728 (resource_metadata in the
 * challenge; well-known path endpoint-specific first, then root; `resource` must match), RFC 8414
 * (metadata path insertion; `issuer` must match), RFC 6749 §4.4 and §2.3.1 (client_credentials,
 * Basic client auth), RFC 8707 (`resource` parameter); and the binding rules: an explicit binding
 * never falls back, an unresolvable credential sends nothing, credentials are per endpoint.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createTransport } from '../../src/ahp/transports/index.js';
import { fileSecretProvider, SecretError } from '../../src/ahp/transports/secrets.js';
import { TransportError } from '../../src/ahp/transports/transport.js';
import { answerFor, json, suiteServers } from './http-servers.js';
import {
  httpBackend,
  interceptRequest,
  never,
  options,
  recordingLogger,
  tempDir,
} from './transport-helpers.js';

const TOKEN = 'tok-3f9a1c7e-very-secret';
const CLIENT_SECRET = 'cs-77aa21-also-secret';
const ISSUED = 'issued-8d2e4b-access-token';

function home(secrets: Record<string, [string, number]>): string {
  const dir = tempDir();
  mkdirSync(join(dir, 'secrets', 'team'), { recursive: true });
  for (const [name, [value, mode]] of Object.entries(secrets)) {
    const path = join(dir, 'secrets', name);
    writeFileSync(path, value);
    chmodSync(path, mode);
  }
  return dir;
}

/** Every error message, detail and log line, as text, for the no-leak checks. */
function exposed(errors: unknown[], logs: unknown[]): string {
  return JSON.stringify([
    ...errors.map((e) =>
      e instanceof Error ? { m: e.message, d: (e as TransportError).detail, s: e.stack } : e,
    ),
    ...logs,
  ]);
}

describe('secret provider', { timeout: 20_000 }, () => {
  test('resolves TALLY_HOME/secrets/<ref> at 0600 and refuses anything looser', async () => {
    const dir = home({
      good: [`${TOKEN}\n`, 0o600],
      'team/nested': [TOKEN, 0o400],
      wide: [TOKEN, 0o644],
      group: [TOKEN, 0o640],
      empty: ['', 0o600],
    });
    symlinkSync(join(dir, 'secrets', 'good'), join(dir, 'secrets', 'link'));
    // A FIFO at 0600 with no writer: opening it must not wait for one.
    execFileSync('mkfifo', ['-m', '600', join(dir, 'secrets', 'fifo')]);
    const provider = fileSecretProvider({ TALLY_HOME: dir });
    assert.equal(await provider.resolve('good'), TOKEN);
    assert.equal(await provider.resolve('team/nested'), TOKEN);
    const codes: Record<string, string> = {
      wide: 'mode',
      group: 'mode',
      empty: 'empty',
      missing: 'missing',
      link: 'not-file',
      fifo: 'not-file',
      '../good': 'bad-ref',
      '/etc/passwd': 'bad-ref',
      'a//b': 'bad-ref',
      '': 'bad-ref',
    };
    for (const [ref, code] of Object.entries(codes)) {
      const error = await provider.resolve(ref).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(error instanceof SecretError, ref);
      assert.equal(error.code, code, ref);
      assert.ok(!error.message.includes(TOKEN));
    }
  });
});

describe('endpoint authentication', { timeout: 30_000 }, () => {
  const serve = suiteServers();
  /** A protected resource accepting only `Bearer <accepted>`. */
  const protectedServer = (accepted: string, challenge = '') =>
    serve((seen, res) => {
      if (seen.headers.authorization === `Bearer ${accepted}`) return json(res, 200, answerFor(seen));
      res.writeHead(401, challenge ? { 'www-authenticate': challenge } : {}).end();
    });

  test('bearer from tokenEnv: exactly one Authorization header', async () => {
    const s = await protectedServer(TOKEN);
    const t = createTransport(
      httpBackend(s.url, { type: 'bearer', tokenEnv: 'AHP_TEST_TOKEN' }),
      options({ env: { AHP_TEST_TOKEN: TOKEN } }),
    );
    await t.request(interceptRequest(), never());
    const auth = s.seen[0]!.rawHeaders.filter(
      (_, i, a) => i % 2 === 0 && a[i]!.toLowerCase() === 'authorization',
    );
    assert.equal(auth.length, 1);
    assert.equal(s.seen[0]!.headers.authorization, `Bearer ${TOKEN}`);
    assert.ok(!s.seen[0]!.body.toString().includes(TOKEN), 'token in the payload');
    await t.close();
  });

  test('bearer from tokenRef via the secret provider', async () => {
    const s = await protectedServer(TOKEN);
    const t = createTransport(
      httpBackend(s.url, { type: 'bearer', tokenRef: 'team/policy' }),
      options({}, home({ 'team/policy': [TOKEN, 0o600] })),
    );
    const request = interceptRequest();
    const answer = (await t.request(request, never())) as { id: unknown; result?: unknown };
    // The server answers 200 only to `Bearer <the secret file's bytes>`; anything else is a 401.
    assert.equal(answer.id, request.id);
    assert.ok(answer.result !== undefined);
    assert.equal(s.seen.length, 1, 'one request, no retry after a refusal');
    assert.equal(s.seen[0]!.headers.authorization, `Bearer ${TOKEN}`);
    assert.ok(!s.seen[0]!.body.toString().includes(TOKEN), 'token in the payload');
    await t.close();
  });

  test('an unresolvable credential sends nothing and never falls back', async () => {
    const s = await protectedServer(TOKEN, `Bearer resource_metadata="http://127.0.0.1:9/never"`);
    const { logger, lines } = recordingLogger();
    const errors: unknown[] = [];
    const cases = [
      [{ type: 'bearer', tokenEnv: 'AHP_UNSET_TOKEN' }, home({})],
      [{ type: 'bearer', tokenRef: 'wide' }, home({ wide: [TOKEN, 0o644] })],
      [{ type: 'bearer', tokenRef: 'missing' }, home({})],
    ] as const;
    for (const [binding, dir] of cases) {
      const t = createTransport(
        httpBackend(s.url, binding),
        options({ logger, oauthClients: () => ({ issuer: 'x', clientId: 'c', clientSecretRef: 'c' }) }, dir),
      );
      const error = await t.request(interceptRequest(), never()).catch((e: unknown) => e);
      assert.ok(error instanceof TransportError && error.code === 'auth', JSON.stringify(binding));
      errors.push(error);
      await t.close();
    }
    assert.equal(s.seen.length, 0, 'something was sent without the configured credential');
    assert.ok(!exposed(errors, lines).includes(TOKEN));
  });

  test('a rejected explicit bearer fails without discovery', async () => {
    const s = await protectedServer('another-token', `Bearer resource_metadata="${'http://127.0.0.1:9/x'}"`);
    const t = createTransport(
      httpBackend(s.url, { type: 'bearer', tokenEnv: 'T' }),
      options({ env: { T: TOKEN } }),
    );
    const error = await t.request(interceptRequest(), never()).catch((e: unknown) => e);
    assert.ok(error instanceof TransportError && error.code === 'auth');
    assert.equal(s.seen.length, 1);
    assert.ok(!exposed([error], []).includes(TOKEN));
    await t.close();
  });

  /** Authorization server + token endpoint; `issuerPath` exercises RFC 8414 path insertion. */
  async function authorizationServer(issuerPath = '', grants = ['client_credentials']) {
    const state = { issuer: '' };
    const as = await serve((seen, res) => {
      if (seen.method === 'GET' && seen.url === `/.well-known/oauth-authorization-server${issuerPath}`) {
        return json(res, 200, {
          issuer: state.issuer,
          token_endpoint: `${state.issuer}/token`,
          grant_types_supported: grants,
        });
      }
      if (seen.method === 'POST' && seen.url === `${issuerPath}/token`) {
        const form = new URLSearchParams(seen.body.toString());
        const basic = Buffer.from(
          String(seen.headers.authorization).replace(/^Basic /, ''),
          'base64',
        ).toString();
        if (form.get('grant_type') !== 'client_credentials' || basic !== `client-1:${CLIENT_SECRET}`) {
          return json(res, 401, { error: 'invalid_client', error_description: `bad ${basic}` });
        }
        return json(res, 200, { access_token: ISSUED, token_type: 'Bearer', expires_in: 3600 });
      }
      res.writeHead(404).end();
    });
    state.issuer = `${as.url}${issuerPath}`;
    return { as, issuer: state.issuer };
  }

  test('no binding: 401 → RFC 9728 metadata from the challenge → RFC 8414 → client_credentials → retry', async () => {
    const { as, issuer } = await authorizationServer('/tenant');
    const rsState = { url: '' };
    const rs = await serve((seen, res) => {
      if (seen.url === '/meta')
        return json(res, 200, { resource: `${rsState.url}/hooks`, authorization_servers: [issuer] });
      if (seen.headers.authorization === `Bearer ${ISSUED}`) return json(res, 200, answerFor(seen));
      res
        .writeHead(401, { 'www-authenticate': `Bearer realm="x", resource_metadata="${rsState.url}/meta"` })
        .end();
    });
    rsState.url = rs.url;
    const { logger, lines } = recordingLogger();
    const policy = (resource: string, servers: readonly string[]) => {
      assert.equal(resource, `${rs.url}/hooks`);
      return servers.includes(issuer)
        ? { issuer, clientId: 'client-1', clientSecretRef: 'oauth/client' }
        : undefined;
    };
    const dir = home({});
    mkdirSync(join(dir, 'secrets', 'oauth'));
    writeFileSync(join(dir, 'secrets', 'oauth', 'client'), CLIENT_SECRET, { mode: 0o600 });
    const t = createTransport(httpBackend(`${rs.url}/hooks`), options({ logger, oauthClients: policy }, dir));
    const req = interceptRequest();
    assert.equal(((await t.request(req, never())) as { id: unknown }).id, req.id);
    assert.deepStrictEqual(
      rs.seen.map((x) => [x.method, x.url, x.headers.authorization ?? null]),
      [
        ['POST', '/hooks', null],
        ['GET', '/meta', null],
        ['POST', '/hooks', `Bearer ${ISSUED}`],
      ],
    );
    const tokenRequest = as.seen.find((x) => x.method === 'POST')!;
    const form = new URLSearchParams(tokenRequest.body.toString());
    assert.equal(form.get('resource'), `${rs.url}/hooks`);
    assert.equal(as.seen[0]!.url, '/.well-known/oauth-authorization-server/tenant');
    // The token is reused for the next request, with no new discovery.
    await t.request(interceptRequest(), never());
    assert.equal(rs.seen.length, 4);
    assert.ok(!exposed([], lines).includes(ISSUED) && !exposed([], lines).includes(CLIENT_SECRET));
    await t.close();
  });

  test('no header: well-known endpoint-specific path first, then the origin root; resource must match', async () => {
    const { issuer } = await authorizationServer();
    const state = { url: '', resource: '' };
    const rs = await serve((seen, res) => {
      if (seen.url === '/.well-known/oauth-protected-resource')
        return json(res, 200, { resource: state.resource, authorization_servers: [issuer] });
      if (seen.url.startsWith('/.well-known/')) return res.writeHead(404).end();
      if (seen.headers.authorization === `Bearer ${ISSUED}`) return json(res, 200, answerFor(seen));
      res.writeHead(401, { 'www-authenticate': 'Bearer' }).end();
    });
    state.url = rs.url;
    const dir = home({ client: [CLIENT_SECRET, 0o600] });
    const opts = options(
      { oauthClients: () => ({ issuer, clientId: 'client-1', clientSecretRef: 'client' }) },
      dir,
    );
    state.resource = 'https://someone-else.example/';
    const bad = createTransport(httpBackend(`${rs.url}/a/b`), opts);
    const error = await bad.request(interceptRequest(), never()).catch((e: unknown) => e);
    assert.ok(error instanceof TransportError && error.code === 'auth');
    assert.deepStrictEqual(
      rs.seen.filter((x) => x.method === 'GET').map((x) => x.url),
      ['/.well-known/oauth-protected-resource/a/b', '/.well-known/oauth-protected-resource'],
    );
    state.resource = rs.url;
    const good = createTransport(httpBackend(`${rs.url}/a/b`), opts);
    await good.request(interceptRequest(), never());
    await bad.close();
    await good.close();
  });

  test('without a trusted local OAuth client the challenge fails as auth', async () => {
    const { issuer } = await authorizationServer();
    const state = { url: '' };
    const rs = await serve((seen, res) => {
      if (seen.url === '/m') return json(res, 200, { resource: state.url, authorization_servers: [issuer] });
      res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${state.url}/m"` }).end();
    });
    state.url = rs.url;
    for (const oauthClients of [
      undefined,
      () => undefined,
      () => ({ issuer: 'https://other.example', clientId: 'c', clientSecretRef: 'c' }),
    ]) {
      const t = createTransport(httpBackend(`${rs.url}`), options({ oauthClients }));
      const error = await t.request(interceptRequest(), never()).catch((e: unknown) => e);
      assert.ok(error instanceof TransportError && error.code === 'auth');
      await t.close();
    }
  });

  test('the OAuth preset acquires a token up front; a credential is never shared across endpoints', async () => {
    const { issuer } = await authorizationServer('', ['client_credentials']);
    const a = await protectedServer(ISSUED);
    const b = await serve((seen, res) => json(res, 200, answerFor(seen)));
    const dir = home({ client: [CLIENT_SECRET, 0o600] });
    const preset = {
      type: 'oauth' as const,
      issuer,
      resource: a.url,
      clientId: 'client-1',
      clientSecretRef: 'client',
      flow: 'client_credentials' as const,
      scopes: ['hooks'],
    };
    const ta = createTransport(httpBackend(a.url, preset), options({}, dir));
    const tb = createTransport(httpBackend(b.url, undefined, 'org.tally.test.other'), options({}, dir));
    await ta.request(interceptRequest(), never());
    await tb.request(interceptRequest(), never());
    assert.equal(a.seen[0]!.headers.authorization, `Bearer ${ISSUED}`);
    assert.equal(b.seen[0]!.headers.authorization, undefined);
    const pkce = createTransport(
      httpBackend(a.url, { ...preset, flow: 'authorization_code_pkce' }),
      options({}, dir),
    );
    const error = await pkce.request(interceptRequest(), never()).catch((e: unknown) => e);
    assert.ok(error instanceof TransportError && error.code === 'auth');
    await Promise.all([ta.close(), tb.close(), pkce.close()]);
  });

  test('a refused client secret is an auth failure that names no secret', async () => {
    const { issuer } = await authorizationServer();
    const a = await protectedServer(ISSUED);
    const { logger, lines } = recordingLogger();
    const preset = {
      type: 'oauth' as const,
      issuer,
      resource: a.url,
      clientId: 'client-1',
      clientSecretRef: 'client',
      flow: 'client_credentials' as const,
      scopes: [],
    };
    const t = createTransport(
      httpBackend(a.url, preset),
      options({ logger }, home({ client: ['wrong-secret-value', 0o600] })),
    );
    const error = await t.request(interceptRequest(), never()).catch((e: unknown) => e);
    assert.ok(error instanceof TransportError && error.code === 'auth');
    assert.equal(error.detail?.error, 'invalid_client');
    assert.ok(!exposed([error], lines).includes('wrong-secret-value'));
    assert.equal(a.seen.length, 0);
    await t.close();
  });

  test('the deadline covers authentication: a hanging token endpoint settles as timeout', async () => {
    const hanging = await serve((seen, res) => {
      if (seen.method === 'GET')
        return json(res, 200, { issuer: `${hanging.url}`, token_endpoint: `${hanging.url}/token` });
    });
    const a = await protectedServer(ISSUED);
    const preset = {
      type: 'oauth' as const,
      issuer: hanging.url,
      resource: a.url,
      clientId: 'client-1',
      clientSecretRef: 'client',
      flow: 'client_credentials' as const,
      scopes: [],
    };
    const t = createTransport(
      httpBackend(a.url, preset),
      options({}, home({ client: [CLIENT_SECRET, 0o600] })),
    );
    const error = await t.request(interceptRequest(), AbortSignal.timeout(200)).catch((e: unknown) => e);
    assert.ok(error instanceof TransportError);
    assert.equal(error.code, 'timeout');
    assert.equal(a.seen.length, 0);
    await t.close();
  });
});
