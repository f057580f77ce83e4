/**
 * A Dispatcher over in-process backends for the dispatcher tests: subscription builders, one
 * backend per entry recording every message it receives, and the event a message carried.
 */
import assert from 'node:assert/strict';
import { Dispatcher, type DispatcherOptions } from '../../src/ahp/harness/dispatcher.js';
import type { Backend, Subscription } from '../../src/ahp/registration/types.js';
import { type MemoryHandler, memoryTransport } from '../../src/ahp/transports/memory.js';
import type { JsonRpcNotification, JsonRpcRequest } from '../../src/ahp/transports/transport.js';

export type Message = JsonRpcRequest | JsonRpcNotification;

/** A fail-open intercept subscription on `tool.before`, body content, 2 s deadline. */
export function intercept(id: string, extra: Partial<Subscription> = {}): Subscription {
  return {
    index: 0,
    id,
    events: ['tool.before'],
    mode: 'intercept',
    timeoutMs: 2000,
    failurePolicy: 'fail-open',
    content: { default: 'body', categories: {} },
    includeNative: false,
    ...extra,
  } as Subscription;
}
export function observe(id: string, extra: Partial<Subscription> = {}): Subscription {
  return {
    index: 0,
    id,
    events: ['*'],
    mode: 'observe',
    content: { default: 'body', categories: {} },
    includeNative: false,
    ...extra,
  } as Subscription;
}

/** One backend per entry, each answering with its handler; every message is recorded per backend. */
export function setup(
  entries: { id: string; subs: Subscription[]; handler?: MemoryHandler }[],
  options: Partial<DispatcherOptions> = {},
) {
  const received = new Map<string, Message[]>();
  const hooks: Backend[] = entries.map((e, index) => ({
    index,
    id: e.id,
    transport: { kind: 'http', url: 'http://127.0.0.1:9/' },
    subscriptions: e.subs.map((s, i) => ({ ...s, index: i })),
  }));
  const dispatcher = new Dispatcher({
    registration: { protocolVersion: 'draft', hooks },
    transportFactory: (backend) => {
      const entry = entries.find((e) => e.id === backend.id);
      return memoryTransport((message, signal) => {
        received.set(backend.id, [...(received.get(backend.id) ?? []), message]);
        return entry?.handler?.(message, signal) ?? answer(message, []);
      });
    },
    ...options,
  });
  return { dispatcher, received };
}

/** The event a received message carried; fails the test when the message is missing. */
export function eventOf(message: Message | undefined): Record<string, unknown> {
  assert.ok(message, 'a message was received');
  return (message.params as { event: Record<string, unknown> }).event;
}

/** The success answer to `message` with `effects` (none for a notification). */
export function answer(message: Message, effects: unknown[]) {
  if (!('id' in message)) return undefined;
  return { jsonrpc: '2.0', id: message.id, result: { protocolVersion: 'draft', effects } };
}
