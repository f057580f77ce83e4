/**
 * Tampered variants of a real package, each made by changing its bytes the way an attacker
 * could: the oracle for every variant is the CLI verifier's verdict on the same bytes, and the
 * expected failing check is named here from how the bytes were changed.
 */
import type { KeyObject } from 'node:crypto';
import { canonicalize } from '../../../src/core/canonical.js';
import { signEnvelope } from '../../../src/core/dsse.js';
import { joinLines, packageLines } from '../../session/fixture.js';

/** The browser verifier as the build wrote it: what pages load. */
export const BUNDLE = 'dist/src/hub/pages/verifier.js';

export interface Verdict {
  ok: boolean;
  checks: { check: string; ok: boolean; code: string; detail: unknown }[];
}

/** What must agree between the browser and the CLI: every check's name, outcome, code and detail. */
export function verdictOf(result: Verdict): string {
  return JSON.stringify({ ok: result.ok, checks: result.checks });
}

export interface TamperCase {
  name: string;
  bytes: Buffer;
  /** The check the change must make fail first (null: the package stays valid). */
  expect: string | null;
}

function flipInBase64(line: Buffer, field: 'payload' | 'sig'): Buffer {
  const text = line.toString('utf8');
  const at = text.indexOf(`"${field}":"`) + field.length + 4 + 8;
  const out = Buffer.from(text, 'utf8');
  out[at] = out[at] === 0x41 ? 0x42 : 0x41; // 'A' ↔ 'B': still base64, other bytes
  return out;
}

function sealOf(lines: Buffer[]): Record<string, unknown> {
  return JSON.parse(lines[lines.length - 1]!.toString('utf8')) as Record<string, unknown>;
}

function withSeal(lines: Buffer[], seal: unknown): Buffer {
  return joinLines([...lines.slice(0, -1), Buffer.from(canonicalize(seal), 'utf8')]);
}

export function tamperCorpus(good: Buffer, signer: KeyObject): TamperCase[] {
  const lines = packageLines(good);
  const records = lines.length - 2;
  const cases: TamperCase[] = [{ name: 'untouched', bytes: good, expect: null }];
  const replaceLine = (index: number, line: Buffer) =>
    joinLines(lines.map((l, i) => (i === index ? line : l)));

  cases.push({
    name: 'byte flipped in a record payload',
    bytes: replaceLine(2, flipInBase64(lines[2]!, 'payload')),
    expect: 'record_signatures',
  });
  cases.push({
    name: 'byte flipped in a record signature',
    bytes: replaceLine(3, flipInBase64(lines[3]!, 'sig')),
    expect: 'record_signatures',
  });
  cases.push({
    name: 'record dropped',
    bytes: joinLines(lines.filter((_, i) => i !== 3)),
    expect: 'record_sequence',
  });
  cases.push({
    name: 'records swapped',
    bytes: joinLines(lines.map((l, i) => (i === 2 ? lines[3]! : i === 3 ? lines[2]! : l))),
    expect: 'record_sequence',
  });
  cases.push({
    name: 'last record and seal cut off',
    bytes: joinLines(lines.slice(0, -2)),
    expect: 'record_count',
  });
  cases.push({ name: 'seal cut off', bytes: joinLines(lines.slice(0, -1)), expect: 'package_format' });
  cases.push({
    name: 'trailing data',
    bytes: Buffer.concat([good, Buffer.from('{}\n')]),
    expect: 'package_format',
  });

  const seal = sealOf(lines);
  const merkle = seal.merkle as Record<string, unknown>;
  const root = String(merkle.root);
  const otherRoot = (root[0] === '0' ? '1' : '0') + root.slice(1);
  cases.push({
    name: 'Merkle root changed',
    bytes: withSeal(lines, { ...seal, merkle: { ...merkle, root: otherRoot } }),
    expect: 'merkle_root',
  });

  const envelope = seal.receipt as { payload: string; payloadType: string; signatures: unknown[] };
  const receipt = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as Record<
    string,
    unknown
  >;
  const changed = { ...receipt, record_count: records + 1 };
  cases.push({
    name: 'receipt changed, signature kept',
    bytes: withSeal(lines, {
      ...seal,
      receipt: { ...envelope, payload: Buffer.from(canonicalize(changed)).toString('base64') },
    }),
    expect: 'receipt_signature',
  });
  cases.push({
    name: 'receipt changed and signed again by the signer',
    bytes: withSeal(lines, {
      ...seal,
      receipt: signEnvelope(canonicalize(changed), envelope.payloadType, signer),
    }),
    expect: 'receipt_recomputed',
  });
  return cases;
}
