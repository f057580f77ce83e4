/** Shared pieces of the transport tests: real backends, a recording logger, temp homes. */

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Authentication, Backend, Registration } from '../../src/ahp/registration/types.js';
import type { Logger, TransportOptions } from '../../src/ahp/transports/index.js';
import { fileSecretProvider } from '../../src/ahp/transports/secrets.js';
import type { JsonRpcRequest } from '../../src/ahp/transports/transport.js';
import { TransportError } from '../../src/ahp/transports/transport.js';
import { tempDir as trackedTempDir } from '../temp.js';

export const FAULT_BACKEND = fileURLToPath(new URL('./backends/fault-backend.js', import.meta.url));
export const SHARED = new URL('../../../../shared/', import.meta.url);

export interface LogLine {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
}

export function recordingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  return { lines, logger: (level, message, fields) => lines.push({ level, message, fields }) };
}

export function tempDir(prefix = 'tally-ahp-'): string {
  return trackedTempDir(prefix);
}

export function options(extra: Partial<TransportOptions> = {}, home = tempDir()): TransportOptions {
  const env = { ...process.env, TALLY_HOME: home, ...(extra.env ?? {}) };
  return { secrets: fileSecretProvider(env), killGraceMs: 200, ...extra, env };
}

export function stdioBackend(
  mode: string,
  args: string[] = [],
  lifecycle: 'persistent' | 'per_event' = 'persistent',
  more: { cwd?: string; env?: Record<string, string> } = {},
): Backend {
  return {
    index: 0,
    id: `org.tally.test.${mode.replace(/[^a-z]/g, '')}`,
    transport: {
      kind: 'stdio',
      command: process.execPath,
      args: [FAULT_BACKEND, mode, ...args],
      lifecycle,
      cwd: more.cwd,
      env: more.env ?? {},
    },
    subscriptions: [],
  };
}

export function httpBackend(
  url: string,
  authentication?: Authentication,
  id = 'org.tally.test.http',
): Backend {
  return { index: 0, id, transport: { kind: 'http', url }, authentication, subscriptions: [] };
}

let counter = 0;
/** A minimal hooks/intercept request whose id equals its event id. */
export function interceptRequest(id = `evt-${++counter}`): JsonRpcRequest {
  return {
    jsonrpc: '2.0',
    id,
    method: 'hooks/intercept',
    params: {
      protocolVersion: 'draft',
      event: {
        id,
        source: 'urn:tally:test',
        type: 'tool.before',
        time: '2026-01-01T00:00:00Z',
        call: { id: 'call-1' },
        path: 'native',
        tool: { origin: 'native', name: 'Bash', input: { command: 'ls' } },
      },
      capabilities: { effects: ['deny'] },
    },
  };
}

/** A signal that never fires: for calls the test expects to settle on their own. */
export function never(): AbortSignal {
  return new AbortController().signal;
}

/** Awaits a rejection and returns the TransportError code. */
export async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TransportError) return error.code;
    throw error;
  }
  throw new Error('expected a TransportError, but the call resolved');
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A registration of `backend` alone, with one intercept subscription to `tool.before`. */
export function interceptRegistration(
  backend: Backend,
  failurePolicy: 'fail-open' | 'fail-closed',
  timeoutMs: number,
): Registration {
  const subscription = {
    index: 0,
    id: 'a',
    events: ['tool.before'],
    mode: 'intercept' as const,
    timeoutMs,
    failurePolicy,
    content: { default: 'body' as const, categories: {} },
    includeNative: false,
  };
  return { protocolVersion: 'draft', hooks: [{ ...backend, subscriptions: [subscription] }] };
}

/**
 * Files for `tally ahp dispatch` in `dir`: a wire-format registration with one hook (`id`,
 * `transport`) holding one fail-closed intercept subscription on `tool.before`, and one
 * tool.before event. Returns the CLI arguments that run it, `--json` included.
 */
export function dispatchFiles(
  dir: string,
  hook: { id: string; transport: Record<string, unknown> },
  timeoutMs: number,
  eventId: string,
): string[] {
  const registration = {
    protocolVersion: 'draft',
    hooks: [
      {
        ...hook,
        subscriptions: [
          {
            events: ['tool.before'],
            mode: 'intercept',
            timeoutMs,
            failurePolicy: 'fail-closed',
            content: { default: 'body' },
          },
        ],
      },
    ],
  };
  const event = (interceptRequest(eventId).params as { event: unknown }).event;
  writeFileSync(join(dir, 'registration.json'), JSON.stringify(registration));
  writeFileSync(join(dir, 'event.json'), JSON.stringify(event));
  return [
    'ahp',
    'dispatch',
    '--registration',
    join(dir, 'registration.json'),
    '--event',
    join(dir, 'event.json'),
    '--json',
  ];
}
