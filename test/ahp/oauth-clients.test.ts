/**
 * The local OAuth client file and `tally ahp dispatch --oauth-clients`.
 * Oracles: RFC 8414 §2 (an issuer is an https URL with no query or fragment), RFC 6749 §3.3
 * (scope-token characters), §4.4 and §2.3.1 (client_credentials with Basic client auth), RFC 8707
 * (`resource` parameter), RFC 9728 (`WWW-Authenticate: Bearer resource_metadata=…`, `resource`,
 * `authorization_servers`), RFC 6901 (pointer escaping), and the file's own rules: a client is
 * offered only to a resource listed for it and an issuer the endpoint named, first match wins, and
 * a literal secret is refused without being repeated.
 * The end-to-end cases run the real CLI against real loopback servers (protected resource,
 * metadata document, authorization server), spawned asynchronously so the servers keep answering.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { OAuthClientsError, parseOAuthClients } from '../../src/ahp/index.js';
import { answerFor, json, type Seen, suiteServers } from './http-servers.js';
import { dispatchFiles, tempDir } from './transport-helpers.js';

const TALLY = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));
const CLIENT_ID = 'tally-harness';
const CLIENT_SECRET = 'cs-5e0b19-never-printed';
const ISSUED = 'at-91c4d2-issued-token';
const SECRET_REF = 'team/ahp-client';

const ISS1 = 'https://auth-one.example.com';
const ISS2 = 'https://auth-two.example.com/tenant';
const R1 = 'https://policy.example.com/agent-hooks';
const R2 = 'https://other.example.com/hooks';

const client = (extra: Record<string, unknown> = {}) => ({
  issuer: ISS1,
  clientId: 'c1',
  clientSecretRef: 'team/c1',
  resources: [R1],
  ...extra,
});
const file = (...clients: unknown[]) => JSON.stringify({ clients });

function parseError(text: string): OAuthClientsError {
  try {
    parseOAuthClients(text);
  } catch (error) {
    assert.ok(error instanceof OAuthClientsError, `${text}: ${error}`);
    assert.equal(error.code, 'bad-oauth-clients');
    return error;
  }
  assert.fail(`accepted: ${text}`);
}

describe('OAuth client file: rules', () => {
  test('each fault names its JSON pointer, and the message starts with it', () => {
    const without = (key: string) => {
      const c: Record<string, unknown> = client();
      delete c[key];
      return c;
    };
    const cases: [string, string][] = [
      ['nope', ''],
      ['[]', ''],
      ['{"clients":[{"issuer":"a","issuer":"b"}]}', '/clients/0'],
      ['{"clients":[],"extra":1}', '/extra'],
      ['{"clients":[],"a/b~c":1}', '/a~1b~0c'],
      ['{}', '/clients'],
      ['{"clients":{}}', '/clients'],
      [file('x'), '/clients/0'],
      [file(client(), client({ extra: true })), '/clients/1/extra'],
      [file(without('issuer')), '/clients/0/issuer'],
      [file(client({ issuer: 'auth-one.example.com' })), '/clients/0/issuer'],
      [file(client({ issuer: 'http://auth-one.example.com' })), '/clients/0/issuer'],
      [file(client({ issuer: 'ftp://auth-one.example.com' })), '/clients/0/issuer'],
      [file(client({ issuer: `${ISS1}/?tenant=1` })), '/clients/0/issuer'],
      [file(client({ issuer: `${ISS1}/#top` })), '/clients/0/issuer'],
      [file(client({ issuer: 7 })), '/clients/0/issuer'],
      [file(without('clientId')), '/clients/0/clientId'],
      [file(client({ clientId: '' })), '/clients/0/clientId'],
      [file(client({ clientId: 12 })), '/clients/0/clientId'],
      [file(without('clientSecretRef')), '/clients/0/clientSecretRef'],
      [file(client({ clientSecretRef: '../escape' })), '/clients/0/clientSecretRef'],
      [file(client({ clientSecretRef: '/etc/passwd' })), '/clients/0/clientSecretRef'],
      [file(client({ clientSecretRef: 'a//b' })), '/clients/0/clientSecretRef'],
      [file(client({ clientSecretRef: '' })), '/clients/0/clientSecretRef'],
      [file(without('resources')), '/clients/0/resources'],
      [file(client({ resources: [] })), '/clients/0/resources'],
      [file(client({ resources: R1 })), '/clients/0/resources'],
      [file(client({ resources: [1] })), '/clients/0/resources/0'],
      [file(client({ resources: [R1, 'http://policy.example.com/agent-hooks'] })), '/clients/0/resources/1'],
      [file(client({ resources: ['agent-hooks'] })), '/clients/0/resources/0'],
      [file(client({ resources: [`${R1}?v=1`] })), '/clients/0/resources/0'],
      [file(client({ resources: [`${R1}#x`] })), '/clients/0/resources/0'],
      [file(client({ resources: ['https://Policy.Example.com/agent-hooks'] })), '/clients/0/resources/0'],
      [file(client({ resources: ['https://policy.example.com:443/agent-hooks'] })), '/clients/0/resources/0'],
      [file(client({ scopes: [] })), '/clients/0/scopes'],
      [file(client({ scopes: 'hooks' })), '/clients/0/scopes'],
      [file(client({ scopes: ['hooks', 'two words'] })), '/clients/0/scopes/1'],
      [file(client({ scopes: ['"quoted"'] })), '/clients/0/scopes/0'],
      [file(client({ scopes: ['back\\slash'] })), '/clients/0/scopes/0'],
      [file(client({ scopes: [''] })), '/clients/0/scopes/0'],
    ];
    for (const [text, pointer] of cases) {
      const error = parseError(text);
      assert.equal(error.detail?.pointer, pointer, text);
      assert.ok(error.message.startsWith(pointer === '' ? '(document): ' : `${pointer}: `), error.message);
    }
  });

  test('a resource in another spelling is refused with the spelling that would match', () => {
    const error = parseError(file(client({ resources: ['https://Policy.Example.com:443/agent-hooks'] })));
    assert.match(error.message, /https:\/\/policy\.example\.com\/agent-hooks/);
  });

  test('a literal client secret is refused, pointing at clientSecretRef, and never repeated', () => {
    for (const key of ['clientSecret', 'client_secret']) {
      for (const at of [0, 1]) {
        const clients = [client(), client()];
        (clients[at] as Record<string, unknown>)[key] = CLIENT_SECRET;
        const error = parseError(file(...clients));
        assert.equal(error.detail?.pointer, `/clients/${at}/${key}`);
        assert.match(error.message, /clientSecretRef/);
        assert.ok(!JSON.stringify([error.message, error.detail, error.stack]).includes(CLIENT_SECRET));
      }
    }
  });

  test('values are not repeated: a credential in a URL, a reference, or a number the parser trips on', () => {
    const cases = [
      file(client({ issuer: `https://user:${CLIENT_SECRET}@auth-one.example.com` })),
      file(client({ resources: [`https://user:${CLIENT_SECRET}@policy.example.com/agent-hooks`] })),
      file(client({ clientSecretRef: `pasted ${CLIENT_SECRET}` })),
      '{"clients":[{"clientSecret":123456789012345678901}]}',
    ];
    for (const text of cases) {
      const error = parseError(text);
      const shown = JSON.stringify([error.message, error.detail]);
      assert.ok(!shown.includes(CLIENT_SECRET) && !shown.includes('123456789012345678901'), shown);
    }
  });

  test('the policy: exact resource, issuer among the servers, first listed client wins', () => {
    const policy = parseOAuthClients(
      file(
        client({ clientId: 'a', clientSecretRef: 'team/a', resources: [R1, R2] }),
        {
          issuer: ISS2,
          clientId: 'b',
          clientSecretRef: 'team/b',
          resources: [R1],
          scopes: ['hooks', 'read:x'],
        },
        client({ clientId: 'c', clientSecretRef: 'team/c' }),
      ),
    );
    assert.deepEqual(policy(R1, [ISS1]), { issuer: ISS1, clientId: 'a', clientSecretRef: 'team/a' });
    assert.deepEqual(policy(R1, [ISS2]), {
      issuer: ISS2,
      clientId: 'b',
      clientSecretRef: 'team/b',
      scopes: ['hooks', 'read:x'],
    });
    // The order of the clients decides, not the order of the servers.
    assert.equal(policy(R1, [ISS2, ISS1])?.clientId, 'a');
    assert.equal(policy(R2, [ISS1])?.clientId, 'a');
    // R2 is listed only beside ISS1: the ISS2 client is never offered to it.
    assert.equal(policy(R2, [ISS2]), undefined);
    assert.equal(policy('https://third.example.com/hooks', [ISS1, ISS2]), undefined);
    // Exact strings: no trailing-slash or case folding.
    assert.equal(policy(`${R1}/`, [ISS1]), undefined);
    assert.equal(policy(R1, [`${ISS1}/`]), undefined);
    assert.equal(policy(R1, []), undefined);
  });

  test('accepted forms: bytes or text, loopback http, bare origin, no clients', () => {
    const loopback = file(
      client({ issuer: 'http://127.0.0.1:8443', resources: ['http://localhost:9000', 'http://[::1]:9/x/'] }),
    );
    const policy = parseOAuthClients(new TextEncoder().encode(loopback));
    assert.equal(policy('http://localhost:9000', ['http://127.0.0.1:8443'])?.clientId, 'c1');
    assert.equal(policy('http://[::1]:9/x/', ['http://127.0.0.1:8443'])?.clientId, 'c1');
    const bare = parseOAuthClients(
      file(client({ resources: ['https://policy.example.com', 'https://b.example/'] })),
    );
    assert.equal(bare('https://policy.example.com', [ISS1])?.clientId, 'c1');
    assert.equal(bare('https://b.example/', [ISS1])?.clientId, 'c1');
    assert.equal(parseOAuthClients('{"clients":[]}')(R1, [ISS1]), undefined);
  });
});

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI without blocking this process's event loop (the servers live here). */
function tally(args: string[], home: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [TALLY, ...args], {
      env: { ...process.env, TALLY_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString('utf8');
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
    });
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

type Outcome = { decision: string; subscriptions: { status: string; reason?: string }[] };

describe('tally ahp dispatch with a local OAuth client file', { timeout: 120_000 }, () => {
  const serve = suiteServers();

  /** The authorization server: RFC 8414 metadata and a token endpoint for one client and resource. */
  async function authorizationServer(resource: () => string) {
    let self = '';
    const server = await serve((seen, res) => {
      if (seen.method === 'GET' && seen.url === '/.well-known/oauth-authorization-server') {
        return json(res, 200, {
          issuer: self,
          token_endpoint: `${self}/token`,
          grant_types_supported: ['client_credentials'],
        });
      }
      if (seen.method === 'POST' && seen.url === '/token') {
        const form = new URLSearchParams(seen.body.toString('utf8'));
        const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
        if (seen.headers.authorization !== basic) return json(res, 401, { error: 'invalid_client' });
        if (form.get('grant_type') !== 'client_credentials')
          return json(res, 400, { error: 'unsupported_grant_type' });
        if (form.get('resource') !== resource()) return json(res, 400, { error: 'invalid_target' });
        return json(res, 200, { access_token: ISSUED, token_type: 'Bearer', expires_in: 300 });
      }
      res.writeHead(404).end();
    });
    self = server.url;
    return server;
  }

  /** The AHP endpoint at /ahp, and its RFC 9728 metadata naming `issuer`. */
  async function protectedBackend(issuer: () => string) {
    let self = '';
    const metadataPath = '/.well-known/oauth-protected-resource/ahp';
    const server = await serve((seen: Seen, res) => {
      if (seen.method === 'GET' && seen.url === metadataPath) {
        return json(res, 200, { resource: `${self}/ahp`, authorization_servers: [issuer()] });
      }
      if (seen.method === 'POST' && seen.url === '/ahp') {
        if (seen.headers.authorization === `Bearer ${ISSUED}`) return json(res, 200, answerFor(seen));
        res.writeHead(401, { 'www-authenticate': `Bearer resource_metadata="${self}${metadataPath}"` }).end();
        return;
      }
      res.writeHead(404).end();
    });
    self = server.url;
    return server;
  }

  /** Backend, authorization server, a TALLY_HOME holding the client secret, and the input files. */
  async function setup() {
    let as = '';
    const backend = await protectedBackend(() => as);
    const auth = await authorizationServer(() => `${backend.url}/ahp`);
    as = auth.url;
    const home = tempDir('tally-oauth-clients-');
    mkdirSync(join(home, 'secrets', 'team'), { recursive: true, mode: 0o700 });
    writeFileSync(join(home, 'secrets', SECRET_REF), `${CLIENT_SECRET}\n`);
    chmodSync(join(home, 'secrets', SECRET_REF), 0o600);
    const args = dispatchFiles(
      home,
      { id: 'org.tally.test.oauth', transport: { type: 'http', url: `${backend.url}/ahp` } },
      20_000,
      'evt-oauth-clients',
    );
    const clients = (resources: string[]) =>
      file({ issuer: auth.url, clientId: CLIENT_ID, clientSecretRef: SECRET_REF, resources });
    return { backend, auth, home, args, clients, resource: `${backend.url}/ahp` };
  }

  const leaks = (run: Run) => [CLIENT_SECRET, ISSUED].filter((s) => `${run.stdout}${run.stderr}`.includes(s));
  const tokenRequests = (auth: { seen: Seen[] }) => auth.seen.filter((s) => s.url === '/token');

  test('--oauth-clients FILE: discovery gets a token and the intercept is accepted', async () => {
    const { backend, auth, home, args, clients, resource } = await setup();
    const policyFile = join(home, 'clients.json');
    writeFileSync(policyFile, clients([resource]));
    const run = await tally([...args, '--oauth-clients', policyFile], home);
    assert.equal(run.status, 0, run.stderr);
    const outcome = JSON.parse(run.stdout) as Outcome;
    assert.equal(outcome.subscriptions[0]?.status, 'accepted', JSON.stringify(outcome));
    assert.equal(outcome.decision, 'allow');
    assert.ok(
      backend.seen.some((s) => s.method === 'POST' && s.headers.authorization === `Bearer ${ISSUED}`),
    );
    const [token] = tokenRequests(auth);
    assert.equal(new URLSearchParams(token!.body.toString('utf8')).get('resource'), resource);
    assert.deepEqual(leaks(run), []);
  });

  test('without the flag, TALLY_HOME/oauth-clients.json is used when it exists', async () => {
    const { backend, home, args, clients, resource } = await setup();
    writeFileSync(join(home, 'oauth-clients.json'), clients([resource]));
    const run = await tally(args, home);
    assert.equal(run.status, 0, run.stderr);
    assert.equal((JSON.parse(run.stdout) as Outcome).subscriptions[0]?.status, 'accepted');
    assert.ok(backend.seen.some((s) => s.headers.authorization === `Bearer ${ISSUED}`));
    assert.deepEqual(leaks(run), []);
  });

  test('no client file: the challenge ends in an auth failure (fail-closed denial)', async () => {
    const { backend, auth, home, args } = await setup();
    const run = await tally(args, home);
    assert.equal(run.status, 1, run.stderr);
    const outcome = JSON.parse(run.stdout) as Outcome;
    assert.equal(outcome.decision, 'deny');
    assert.equal(outcome.subscriptions[0]?.status, 'failed');
    assert.match(outcome.subscriptions[0]?.reason ?? '', /^auth\b/);
    assert.ok(!backend.seen.some((s) => s.headers.authorization !== undefined));
    assert.deepEqual(tokenRequests(auth), []);
    assert.deepEqual(leaks(run), []);
  });

  test('a client listed for another resource is never offered to this one', async () => {
    const { auth, home, args, clients, resource } = await setup();
    writeFileSync(join(home, 'oauth-clients.json'), clients([`${resource}/other`]));
    const run = await tally(args, home);
    assert.equal(run.status, 1, run.stderr);
    const outcome = JSON.parse(run.stdout) as Outcome;
    assert.equal(outcome.subscriptions[0]?.status, 'failed');
    assert.match(outcome.subscriptions[0]?.reason ?? '', /^auth\b/);
    assert.deepEqual(tokenRequests(auth), [], 'no token was requested with that client secret');
    assert.deepEqual(leaks(run), []);
  });

  test('a bad file is a usage error naming the file and the pointer; a literal secret is not echoed', async () => {
    const { backend, home, args } = await setup();
    const literal = join(home, 'literal.json');
    writeFileSync(literal, JSON.stringify({ clients: [{ ...client(), clientSecret: CLIENT_SECRET }] }));
    const run = await tally([...args, '--oauth-clients', literal], home);
    assert.equal(run.status, 2);
    assert.ok(run.stderr.includes(literal), run.stderr);
    assert.ok(run.stderr.includes('/clients/0/clientSecret'), run.stderr);
    assert.deepEqual(leaks(run), []);

    const fallback = join(home, 'oauth-clients.json');
    writeFileSync(fallback, file(client({ resources: [] })));
    const again = await tally(args, home);
    assert.equal(again.status, 2);
    assert.ok(again.stderr.includes(fallback), again.stderr);
    assert.ok(again.stderr.includes('/clients/0/resources'), again.stderr);

    const missing = await tally([...args, '--oauth-clients', join(home, 'absent.json')], home);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /absent\.json/);
    assert.deepEqual(backend.seen, [], 'nothing was sent for a bad file');
  });
});
