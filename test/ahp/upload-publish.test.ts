/**
 * Upload before publish through the real dispatcher: a body-selected image attachment is uploaded
 * to the subscription's own loopback receiver (real socket, real `Uploader`) and the intercept the
 * backend receives carries the receiver's ref; the upload happens before the intercept is sent.
 * Oracles: the content upload binding (only a verified 201 receipt confirms; on failure never
 * inline bytes, emit a gap or apply the failure policy) and the official intercept-request schema
 * for what goes on the wire. Digests are computed here with node:crypto.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import type { InterceptCapabilities } from '../../src/ahp/harness/compose.js';
import { dispatch } from '../../src/ahp/harness/dispatcher.js';
import { eventCapabilities } from '../../src/ahp/protocol/capabilities.js';
import type { Registration, Subscription } from '../../src/ahp/registration/types.js';
import { memoryTransport } from '../../src/ahp/transports/memory.js';
import { fileSecretProvider } from '../../src/ahp/transports/secrets.js';
import type { JsonRpcNotification, JsonRpcRequest } from '../../src/ahp/transports/transport.js';
import { Uploader } from '../../src/ahp/transports/upload.js';
import type { CanonicalEvent } from '../../src/core/event.js';
import { json, suiteServers } from './http-servers.js';
import { officialValid } from './messages-oracle.js';
import { tempDir } from './transport-helpers.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 7, 7, 7]);
const DIGEST = createHash('sha256').update(PNG).digest('hex');
const env = { TALLY_HOME: tempDir() };
const uploaderFor = (binding: ConstructorParameters<typeof Uploader>[0]) =>
  new Uploader(binding, { secrets: fileSecretProvider(env), env, allowInsecureHttp: true });

/** A turn.start (an official catalogue fixture's shape) whose prompt holds text and one image. */
function turnStart(): CanonicalEvent {
  return {
    id: 'evt-upload-1',
    source: 'urn:test:harness',
    time: '2026-09-15T12:00:00Z',
    type: 'turn.start',
    turn: { id: 'turn1' },
    trigger: 'user',
    items: [
      {
        id: 'm1',
        role: 'user',
        parts: [
          { id: 'p1', kind: 'text', mediaType: 'text/plain', selection: 'body', text: 'what is this?' },
          { id: 'img1', kind: 'attachment', mediaType: 'image/png', selection: 'body' },
        ],
      },
    ],
  };
}

const capabilities: InterceptCapabilities = { effects: ['deny', 'message'] };

function registration(subscription: Partial<Subscription>): Registration {
  return {
    protocolVersion: 'draft',
    hooks: [
      {
        index: 0,
        id: 'org.tally.test.uploads',
        transport: { kind: 'http', url: 'http://127.0.0.1:9/' },
        subscriptions: [
          {
            index: 0,
            events: ['turn.start'],
            mode: 'intercept',
            timeoutMs: 5000,
            failurePolicy: 'fail-closed',
            content: { default: 'body', categories: {} },
            includeNative: false,
            ...subscription,
          },
        ],
      },
    ],
  };
}

type Message = JsonRpcRequest | JsonRpcNotification;

/** A backend that records every message in `received` and answers each request with `effects`. */
function recordingBackend(received: Message[], effects: unknown[] = []) {
  return () =>
    memoryTransport((message) => {
      received.push(message);
      return 'id' in message
        ? { jsonrpc: '2.0', id: message.id, result: { protocolVersion: 'draft', effects } }
        : undefined;
    });
}
type Json = Record<string, unknown>;
/** The second part of the first item: the image. */
function imagePart(m: Message): Json {
  const event = (m.params as { event: { items: { parts: Json[] }[] } }).event;
  return event.items[0]?.parts[1] ?? {};
}

describe('upload before publish', { timeout: 30_000 }, () => {
  const receiver = suiteServers();

  test('the image is uploaded first and the intercept carries the receiver-allocated ref', async () => {
    const order: string[] = [];
    const server = await receiver((seen, res) => {
      order.push('upload');
      json(res, 201, {
        ref: 'blob-77',
        size: seen.body.length,
        sha256: createHash('sha256').update(seen.body).digest('hex'),
      });
    });
    const received: Message[] = [];
    const outcome = await dispatch({
      registration: registration({
        upload: { endpoint: `${server.url}/up`, timeoutMs: 5000, maxBytes: 1024 },
      }),
      transportFactory: () =>
        memoryTransport((message) => {
          order.push(message.method);
          received.push(message);
          return 'id' in message
            ? { jsonrpc: '2.0', id: message.id, result: { protocolVersion: 'draft', effects: [] } }
            : undefined;
        }),
      uploaderFor,
      event: turnStart(),
      capabilities,
      attachments: new Map([['img1', PNG]]),
    });
    assert.deepEqual(order, ['upload', 'hooks/intercept']);
    assert.deepStrictEqual(server.seen[0]?.body, PNG);
    assert.equal(server.seen[0]?.headers['ahp-content-sha256'], DIGEST);
    const request = received[0] as JsonRpcRequest;
    assert.deepStrictEqual(imagePart(request), {
      id: 'img1',
      kind: 'attachment',
      mediaType: 'image/png',
      selection: 'body',
      body: { ref: 'blob-77' },
    });
    assert.ok(officialValid('intercept-request.schema.json', request), 'the published request is valid AHP');
    assert.equal(outcome.subscriptions[0]?.status, 'accepted');
    assert.equal(outcome.decision, 'allow');
  });

  test('an invalid event uploads nothing: the request is refused before any byte leaves', async () => {
    const server = await receiver((seen, res) => {
      json(res, 201, { ref: 'never', size: seen.body.length, sha256: 'x' });
    });
    const { trigger: _trigger, ...untriggered } = turnStart();
    const sent: Message[] = [];
    const outcome = await dispatch({
      registration: registration({
        upload: { endpoint: `${server.url}/up`, timeoutMs: 5000, maxBytes: 1024 },
      }),
      transportFactory: () =>
        memoryTransport((message) => {
          sent.push(message);
          return undefined;
        }),
      uploaderFor,
      event: untriggered as CanonicalEvent,
      capabilities,
      attachments: new Map([['img1', PNG]]),
    });
    assert.equal(server.seen.length, 0, 'no upload');
    assert.equal(sent.length, 0, 'no request');
    assert.equal(outcome.subscriptions[0]?.status, 'failed');
    assert.match(outcome.subscriptions[0]?.reason ?? '', /^invalid request: \/params\/event\/trigger/);
  });

  test('an edit beside a pending attachment is accepted: only what the edit breaks is held against it', async () => {
    const server = await receiver((seen, res) => {
      json(res, 201, {
        ref: 'blob-9',
        size: seen.body.length,
        sha256: createHash('sha256').update(seen.body).digest('hex'),
      });
    });
    const event = turnStart();
    const added = {
      id: 'm2',
      role: 'user',
      parts: [{ id: 'p9', kind: 'text', mediaType: 'text/plain', selection: 'body', text: 'be brief' }],
    };
    const outcome = await dispatch({
      registration: registration({
        upload: { endpoint: `${server.url}/up`, timeoutMs: 5000, maxBytes: 1024 },
      }),
      transportFactory: recordingBackend(
        [],
        [{ type: 'modify', target: 'prompt', operation: 'merge', value: [added] }],
      ),
      uploaderFor,
      event,
      capabilities: eventCapabilities(event) as InterceptCapabilities,
      attachments: new Map([['img1', PNG]]),
    });
    assert.equal(outcome.subscriptions[0]?.status, 'accepted', outcome.subscriptions[0]?.reason);
    assert.equal(outcome.decision, 'allow');
  });

  test('a failed upload under fail-closed sends nothing and denies with the synthetic reason', async () => {
    const server = await receiver((_seen, res) => res.writeHead(500).end());
    const received: Message[] = [];
    const outcome = await dispatch({
      registration: registration({
        upload: { endpoint: `${server.url}/up`, timeoutMs: 5000, maxBytes: 1024 },
      }),
      transportFactory: () => memoryTransport((m) => void received.push(m)),
      uploaderFor,
      event: turnStart(),
      capabilities,
      attachments: new Map([['img1', PNG]]),
    });
    assert.equal(received.length, 0);
    assert.equal(outcome.decision, 'deny');
    assert.equal(outcome.denial?.synthetic, true);
    assert.equal(outcome.subscriptions[0]?.status, 'failed');
    assert.match(outcome.subscriptions[0]?.reason ?? '', /^upload: /);
  });

  test('under fail-open the backend gets a gap with size and digest, never the bytes', async () => {
    const server = await receiver((_seen, res) => res.writeHead(202).end());
    const received: Message[] = [];
    const outcome = await dispatch({
      registration: registration({
        failurePolicy: 'fail-open',
        upload: { endpoint: `${server.url}/up`, timeoutMs: 5000, maxBytes: 1024 },
      }),
      transportFactory: recordingBackend(received),
      uploaderFor,
      event: turnStart(),
      capabilities,
      attachments: new Map([['img1', PNG]]),
    });
    const part = imagePart(received[0] as Message);
    assert.deepStrictEqual(part, {
      id: 'img1',
      kind: 'attachment',
      mediaType: 'image/png',
      selection: 'body',
      gap: { reason: 'upload failed' },
      size: PNG.length,
      sha256: DIGEST,
    });
    assert.ok(officialValid('intercept-request.schema.json', received[0]));
    assert.equal(outcome.decision, 'allow');
    assert.match(outcome.subscriptions[0]?.reason ?? '', /sent as a gap/);
  });

  test('a metadata selection uploads nothing and describes the image by size and digest', async () => {
    const server = await receiver((_seen, res) => res.writeHead(500).end());
    const received: Message[] = [];
    await dispatch({
      registration: registration({
        content: { default: 'body', categories: { images: 'metadata' } },
        upload: { endpoint: `${server.url}/up`, timeoutMs: 5000, maxBytes: 1024 },
      }),
      transportFactory: recordingBackend(received),
      uploaderFor,
      event: turnStart(),
      capabilities,
      attachments: new Map([['img1', PNG]]),
    });
    assert.equal(server.seen.length, 0);
    assert.deepStrictEqual(imagePart(received[0] as Message), {
      id: 'img1',
      kind: 'attachment',
      mediaType: 'image/png',
      selection: 'metadata',
      size: PNG.length,
      sha256: DIGEST,
    });
    assert.ok(officialValid('intercept-request.schema.json', received[0]));
  });

  test('observers upload to their own endpoint and get their own ref', async () => {
    const server = await receiver((seen, res) =>
      json(res, 201, {
        ref: 'obs-ref',
        size: seen.body.length,
        sha256: createHash('sha256').update(seen.body).digest('hex'),
      }),
    );
    const received: Message[] = [];
    await dispatch({
      registration: registration({
        mode: 'observe',
        upload: { endpoint: `${server.url}/observer`, timeoutMs: 5000, maxBytes: 1024 },
      }),
      transportFactory: () => memoryTransport((m) => void received.push(m)),
      uploaderFor,
      event: turnStart(),
      attachments: new Map([['img1', PNG]]),
    });
    assert.equal(server.seen[0]?.url, '/observer');
    assert.equal(received[0]?.method, 'hooks/observe');
    assert.deepStrictEqual(imagePart(received[0] as Message).body, { ref: 'obs-ref' });
  });
});
