/**
 * The upload binding against a real loopback receiver. Oracles: the upload rules — POST to the
 * exact endpoint, `application/octet-stream`, exact Content-Length, `AHP-Content-SHA256` (computed
 * here with node:crypto, independently), only 201 with a matching `{ref,size,sha256}` receipt
 * confirms; 202/204 do not; maxBytes refuses, never truncates; auth is the endpoint's own.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import { fileSecretProvider } from '../../src/ahp/transports/secrets.js';
import { UploadError, Uploader } from '../../src/ahp/transports/upload.js';
import { json, type Seen, suiteServers } from './http-servers.js';
import { tempDir } from './transport-helpers.js';

const BYTES = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 3, 255]);
const DIGEST = createHash('sha256').update(BYTES).digest('hex');
const env = { TALLY_HOME: tempDir(), UPLOAD_TOKEN: 'upload-token-42f1' };
const opts = { secrets: fileSecretProvider(env), env };

describe('upload binding', { timeout: 30_000 }, () => {
  const receiver = suiteServers();
  const receipt = (seen: Seen) => ({
    ref: 'att-1',
    size: seen.body.length,
    sha256: createHash('sha256').update(seen.body).digest('hex'),
  });

  test('one POST of the raw bytes with exact framing; a matching 201 receipt confirms', async () => {
    const s = await receiver((seen, res) => json(res, 201, receipt(seen)));
    const up = new Uploader(
      {
        endpoint: `${s.url}/bytes?bucket=a`,
        timeoutMs: 5000,
        maxBytes: 1024,
        auth: { type: 'bearer', tokenEnv: 'UPLOAD_TOKEN' },
      },
      opts,
    );
    assert.deepStrictEqual(await up.upload(BYTES), { ref: 'att-1', size: BYTES.length, sha256: DIGEST });
    const seen = s.seen[0]!;
    assert.equal(seen.method, 'POST');
    assert.equal(seen.url, '/bytes?bucket=a');
    assert.equal(seen.headers['content-type'], 'application/octet-stream');
    assert.equal(seen.headers['content-length'], String(BYTES.length));
    assert.equal(seen.headers['ahp-content-sha256'], DIGEST);
    assert.equal(seen.headers['transfer-encoding'], undefined);
    assert.equal(seen.headers.authorization, 'Bearer upload-token-42f1');
    assert.deepStrictEqual(seen.body, BYTES);
  });

  test('anything but a matching 201 receipt fails', async () => {
    const cases: [string, (seen: Seen, res: import('node:http').ServerResponse) => void][] = [
      ['http-status', (_s, res) => res.writeHead(202).end()],
      ['http-status', (_s, res) => res.writeHead(204).end()],
      ['http-status', (_s, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}')],
      ['http-status', (_s, res) => res.writeHead(302, { location: 'http://127.0.0.1:9/' }).end()],
      ['http-status', (_s, res) => res.writeHead(400).end()],
      ['too-large', (_s, res) => res.writeHead(413).end()],
      ['auth', (_s, res) => res.writeHead(403).end()],
      ['receipt', (seen, res) => json(res, 201, { ...receipt(seen), size: seen.body.length - 1 })],
      ['receipt', (seen, res) => json(res, 201, { ...receipt(seen), sha256: '0'.repeat(64) })],
      ['receipt', (seen, res) => json(res, 201, { ...receipt(seen), ref: '' })],
      ['receipt', (seen, res) => json(res, 201, { ...receipt(seen), extra: true })],
      ['receipt', (_s, res) => res.writeHead(201, { 'content-type': 'text/plain' }).end('ok')],
    ];
    for (const [code, answer] of cases) {
      const s = await receiver(answer);
      const error = await new Uploader({ endpoint: s.url, timeoutMs: 5000, maxBytes: 1024 }, opts)
        .upload(BYTES)
        .catch((e: unknown) => e);
      assert.ok(error instanceof UploadError, String(error));
      assert.equal(error.code, code);
    }
  });

  test('over maxBytes is refused before connecting; the budget bounds a hanging receiver', async () => {
    const s = await receiver(() => {});
    const small = new Uploader({ endpoint: s.url, timeoutMs: 5000, maxBytes: BYTES.length - 1 }, opts);
    assert.equal(((await small.upload(BYTES).catch((e: unknown) => e)) as UploadError).code, 'too-large');
    assert.equal(s.seen.length, 0);
    const slow = new Uploader({ endpoint: s.url, timeoutMs: 200, maxBytes: 1024 }, opts);
    assert.equal(((await slow.upload(BYTES).catch((e: unknown) => e)) as UploadError).code, 'timeout');
  });

  test('an unresolvable upload credential sends nothing; plain http only to loopback', async () => {
    const s = await receiver((seen, res) => json(res, 201, receipt(seen)));
    const up = new Uploader(
      { endpoint: s.url, timeoutMs: 5000, maxBytes: 1024, auth: { type: 'bearer', tokenRef: 'absent' } },
      opts,
    );
    assert.equal(((await up.upload(BYTES).catch((e: unknown) => e)) as UploadError).code, 'auth');
    assert.equal(s.seen.length, 0);
    assert.throws(
      () => new Uploader({ endpoint: 'http://uploads.example/bytes', timeoutMs: 1, maxBytes: 1 }, opts),
      UploadError,
    );
  });
});
