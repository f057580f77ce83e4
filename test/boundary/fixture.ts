/**
 * A boundary over a memory store with a real ship key, a real certificate, and real third-party
 * backends: `tally ahp serve --stdio` with a rule file (the real CLI, a real process) and the fault
 * backend (slow, hanging) from the AHP tests.
 */

import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseRegistration } from '../../src/ahp/registration/registration.js';
import type { Registration } from '../../src/ahp/registration/types.js';
import { type Boundary, type BoundaryOptions, openBoundary } from '../../src/boundary/boundary.js';
import { generateKeyPair, keyId } from '../../src/core/keys.js';
import { type AgentCertificate, issueCertificate } from '../../src/evidence/certificate.js';
import { MemoryRecordStore } from '../../src/evidence/log/store.js';
import { decodeRecordPayload, parseEnvelopeLine } from '../../src/evidence/record/codec.js';
import type { EventRecord } from '../../src/evidence/record/record.js';
import { tempDir } from '../temp.js';

export const TALLY_BIN = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));
export const FAULT_BACKEND = fileURLToPath(new URL('../ahp/backends/fault-backend.js', import.meta.url));

export interface BoundaryFixture {
  dir: string;
  root: string;
  store: MemoryRecordStore;
  boundary: Boundary;
  certificate: AgentCertificate;
  records(): Promise<EventRecord[]>;
  close(): Promise<void>;
}

const { privateKey } = generateKeyPair();
export const signer = { privateKey, keyId: keyId(privateKey) };

export function certificateFor(
  policy: { allow: string[]; forbid?: string[]; escalate?: string[] },
  validUntil?: Date,
) {
  return issueCertificate(
    {
      name: 'coder',
      allow: policy.allow,
      forbid: policy.forbid ?? [],
      escalate: policy.escalate ?? [],
      validFrom: new Date(Date.now() - 3_600_000),
      validUntil: validUntil ?? new Date(Date.now() + 3_600_000),
    },
    privateKey,
  ).certificate;
}

/** A wire-format hook entry: a real `tally ahp serve --stdio` with these rules. */
export function rulesBackend(
  dir: string,
  id: string,
  rules: unknown[],
  subscription: Record<string, unknown> = {},
) {
  const file = join(dir, `${id}.rules.json`);
  writeFileSync(file, JSON.stringify({ rules }));
  return {
    id,
    transport: {
      type: 'stdio',
      command: process.execPath,
      args: [TALLY_BIN, 'ahp', 'serve', '--stdio', '--rules', file],
      lifecycle: 'persistent',
    },
    subscriptions: [
      {
        events: ['tool.before'],
        mode: 'intercept',
        timeoutMs: 5000,
        failurePolicy: 'fail-closed',
        content: { default: 'body' },
        ...subscription,
      },
    ],
  };
}

/** A wire-format hook entry: the fault backend in `mode` (`slow 2000`, `hang`, `echo`). */
export function faultBackend(id: string, mode: string[], subscription: Record<string, unknown> = {}) {
  return {
    id,
    transport: {
      type: 'stdio',
      command: process.execPath,
      args: [FAULT_BACKEND, ...mode],
      lifecycle: 'persistent',
    },
    subscriptions: [
      {
        events: ['tool.before'],
        mode: 'intercept',
        timeoutMs: 200,
        failurePolicy: 'fail-open',
        content: { default: 'body' },
        ...subscription,
      },
    ],
  };
}

export function registrationOf(hooks: unknown[]): Registration {
  return parseRegistration({ protocolVersion: 'draft', hooks }).registration;
}

/** `hooks` may be a function of the fixture's directory (for backends that need files there). */
export async function openFixture(
  certificate: AgentCertificate | null,
  hooksOrMake: unknown[] | null | ((dir: string) => unknown[]),
  extra: Partial<BoundaryOptions> = {},
): Promise<BoundaryFixture> {
  const dir = tempDir('tally-boundary-');
  const made = typeof hooksOrMake === 'function' ? hooksOrMake(dir) : hooksOrMake;
  const hooks = made === null || made.length === 0 ? null : made;
  const root = join(dir, 'repo');
  const store = new MemoryRecordStore();
  let boundary: Boundary;
  try {
    boundary = openBoundary({
      session: { id: 'ses_20260101T000000Z_0000beef', root },
      store,
      signer,
      certificate,
      registration: hooks === null ? null : registrationOf(hooks),
      harness: { env: { PATH: process.env.PATH ?? '' } },
      ...extra,
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    dir,
    root,
    store,
    boundary,
    certificate: certificate!,
    async records() {
      const out: EventRecord[] = [];
      for await (const line of store.lines()) {
        out.push(decodeRecordPayload(Buffer.from(parseEnvelopeLine(line).payload, 'base64')));
      }
      return out;
    },
    async close() {
      await boundary.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let n = 0;
export function toolBefore(name: string, input: Record<string, unknown>, cwd?: string) {
  n += 1;
  return {
    type: 'tool.before',
    call: { id: `call-${n}` },
    path: 'native',
    tool: { origin: 'native', name, input },
    ...(cwd ? { session: { id: 'h1', cwd } } : {}),
  };
}
