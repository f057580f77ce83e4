/**
 * Tampering with a real package: every kind of change the issue lists must make verification fail
 * with a check that names what broke, and nothing may throw. Oracles: the package layout documented
 * in src/evidence/package.ts (header line, one line per record, seal line) and the list.
 */

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { canonicalize } from '../../src/core/canonical.js';
import { signEnvelope } from '../../src/core/dsse.js';
import { generateKeyPair, keyId, rawPublicKey } from '../../src/core/keys.js';
import { createKey } from '../../src/core/keystore.js';
import { MAX_LINE_BYTES } from '../../src/evidence/log/reader.js';
import { type CheckResult, type VerifyResult, verifyPackage } from '../../src/evidence/package/verify.js';
import { loadShipSigner } from '../../src/session/identity.js';
import {
  type Fixture,
  joinLines,
  makeFixture,
  packageLines,
  runSession,
  steppingClock,
  variedEvents,
} from '../session/fixture.js';
import { tempDir } from '../temp.js';

const NOW = new Date('2026-03-01T00:00:00Z');

let fx: Fixture;
let pkg: Buffer;
let lines: Buffer[];
/** A second session by the same ship key: its records are validly signed but belong elsewhere. */
let otherLines: Buffer[];

async function verify(bytes: Uint8Array, trusted = [fx.signer.key.publicKey]): Promise<VerifyResult> {
  return verifyPackage(bytes, { trusted, now: NOW });
}

/** The first failing check, which must be a real failure and not a skip. */
/** The fixed order of docs/formats.md#verification-result (no certificate given here). */
const ORDER = [
  'package_format',
  'signer_pinned',
  'record_format',
  'record_signatures',
  'record_session',
  'record_sequence',
  'record_chain',
  'record_count',
  'not_after_now',
  'timestamps_ordered',
  'session_complete',
  'call_ids_unique',
  'unfinished_call',
  'log_repaired',
  'workspace_reconciled',
  'between_sessions',
  'harness_reported',
  'merkle_root',
  'receipt_signature',
  'receipt_recomputed',
  'receipt_complete',
];

function firstFailure(result: VerifyResult): CheckResult {
  // Every check is reported, once, in the fixed order, however verification ended.
  assert.deepEqual(
    result.checks.map((c) => c.check),
    ORDER,
  );
  const failed = result.checks.find((c) => !c.ok && c.code !== 'skipped');
  assert.ok(failed, `expected a failing check: ${JSON.stringify(result.checks)}`);
  // Nothing after the failure may claim ok: later checks are skipped or failing too. The one
  // exception is signer_pinned, settled from the header before a late format fault is found.
  const after = result.checks.slice(result.checks.indexOf(failed) + 1);
  for (const c of after) {
    const settledEarlier = failed.check === 'package_format' && c.check === 'signer_pinned';
    assert.ok(!c.ok || c.code === 'info' || settledEarlier, `${c.check} passed after a failure`);
  }
  return failed;
}

async function expectFailure(bytes: Uint8Array, checks: string[], codes?: string[]): Promise<CheckResult> {
  const result = await verify(bytes);
  assert.equal(result.ok, false);
  const failed = firstFailure(result);
  assert.ok(checks.includes(failed.check), `failed ${failed.check} (${failed.code}), expected ${checks}`);
  if (codes) assert.ok(codes.includes(failed.code), `code ${failed.code}, expected one of ${codes}`);
  return failed;
}

function seal(): Record<string, unknown> {
  return JSON.parse(lines[lines.length - 1]!.toString()) as Record<string, unknown>;
}

function withSeal(value: unknown): Buffer {
  return joinLines([...lines.slice(0, -1), Buffer.from(canonicalize(value))]);
}

function withHeader(value: unknown): Buffer {
  return joinLines([Buffer.from(canonicalize(value)), ...lines.slice(1)]);
}

interface FlipPass {
  where: string;
}

/** Flips bytes across the package; returns the flips that still verified. */
async function flipScan(): Promise<FlipPass[]> {
  const starts: number[] = [];
  let at = 0;
  for (const l of lines) {
    starts.push(at);
    at += l.length + 1;
  }
  const positions = new Set<number>();
  const span = (from: number, to: number, step = 1) => {
    for (let i = from; i < to; i += step) positions.add(i);
  };
  const lineEnd = (line: number) => (line + 1 < starts.length ? starts[line + 1]! : pkg.length);
  for (const line of [0, 3, lines.length - 2]) span(starts[line]!, lineEnd(line));
  const sealAt = starts[lines.length - 1]!;
  const payload = lines[lines.length - 1]!.indexOf('"payload":"');
  span(sealAt, sealAt + payload + 40);
  span(sealAt + payload + 40, pkg.length - 200, 7);
  span(pkg.length - 200, pkg.length);
  span(0, pkg.length, 13);
  const out: FlipPass[] = [];
  for (const position of positions) {
    const flips = [(b: number) => b ^ 0x01, (b: number) => (b === 0x41 ? 0x42 : 0x41)];
    for (const flip of position % 13 === 0 ? flips : flips.slice(0, 1)) {
      const bytes = Buffer.from(pkg);
      const was = bytes[position]!;
      bytes[position] = flip(was);
      const result = await verify(bytes);
      if (!result.ok) {
        firstFailure(result);
        continue;
      }
      const line = starts.filter((s) => s <= position).length - 1;
      const context = pkg.subarray(Math.max(starts[line]!, position - 16), position + 8).toString();
      out.push({ where: `byte ${position} (line ${line + 1}: ${JSON.stringify(context)})` });
    }
  }
  return out;
}

before(async () => {
  fx = await makeFixture('tally-tamper-');
  const run = await runSession(fx, variedEvents(fx.root), { clock: steppingClock('2026-02-01T10:00:00Z') });
  pkg = run.bytes;
  lines = packageLines(pkg);
  const other = await runSession(fx, variedEvents(fx.root).slice(0, 3), {
    clock: steppingClock('2026-02-01T11:00:00Z'),
  });
  otherLines = packageLines(other.bytes);
});

describe('package tampering', () => {
  it('the untouched package verifies (the baseline the other cases break)', async () => {
    const result = await verify(pkg);
    assert.equal(result.ok, true, JSON.stringify(result.checks.filter((c) => !c.ok)));
    // header + records (start, 8 events, the reconciliation's summary, end) + seal, and the file ends
    // with a newline.
    assert.equal(lines.length, 1 + 11 + 1);
    assert.equal(pkg[pkg.length - 1], 0x0a);
  });

  it('any single flipped byte fails verification, wherever it is, and nothing throws', async () => {
    // Every byte of the header, of a tool record, of the last record and of the seal outside its
    // receipt payload; a stride through everything else. Two different flips per position.
    const passed = await flipScan();
    assert.deepEqual(passed.slice(0, 20), [], `${passed.length} flips still verified`);
  });

  it('a deleted record fails record_sequence; a deleted last record fails too', async () => {
    const middle = [...lines];
    middle.splice(4, 1);
    await expectFailure(joinLines(middle), ['record_sequence'], ['sequence-gap']);
    const last = [...lines];
    last.splice(lines.length - 2, 1);
    await expectFailure(joinLines(last), ['record_format', 'record_count', 'package_format']);
  });

  it('an inserted record fails: from another session, a re-signed copy, a duplicate', async () => {
    const foreign = [...lines];
    foreign.splice(3, 0, otherLines[3]!);
    await expectFailure(joinLines(foreign), ['record_session'], ['session-mismatch']);

    // The same record re-signed by a key that is not pinned.
    const stranger = generateKeyPair();
    const envelope = JSON.parse(lines[3]!.toString()) as { payload: string; payloadType: string };
    const resigned = signEnvelope(Buffer.from(envelope.payload, 'base64'), envelope.payloadType, {
      privateKey: stranger.privateKey,
    });
    const copy = [...lines];
    copy.splice(4, 0, Buffer.from(canonicalize(resigned)));
    await expectFailure(joinLines(copy), ['record_signatures'], ['bad-signature']);
    const replaced = [...lines];
    replaced[3] = Buffer.from(canonicalize(resigned));
    await expectFailure(joinLines(replaced), ['record_signatures'], ['bad-signature']);

    const duplicate = [...lines];
    duplicate.splice(3, 0, lines[3]!);
    await expectFailure(joinLines(duplicate), ['record_sequence'], ['sequence-gap']);
  });

  it('reordered records fail record_sequence', async () => {
    const swapped = [...lines];
    [swapped[2], swapped[3]] = [swapped[3]!, swapped[2]!];
    await expectFailure(joinLines(swapped), ['record_sequence'], ['sequence-gap']);
    const reversed = [lines[0]!, ...lines.slice(1, -1).reverse(), lines[lines.length - 1]!];
    await expectFailure(joinLines(reversed), ['record_sequence'], ['sequence-gap']);
  });

  it('an edited receipt field fails: unsigned, signed by a stranger, or re-signed by the ship key', async () => {
    const s = seal();
    const envelope = s.receipt as { payload: string; payloadType: string; signatures: unknown[] };
    const receipt = JSON.parse(Buffer.from(envelope.payload, 'base64').toString()) as Record<string, unknown>;
    assert.equal(typeof receipt.record_count, 'number');
    const edited = canonicalize({ ...receipt, record_count: (receipt.record_count as number) - 1 });
    const unsigned = { ...envelope, payload: Buffer.from(edited).toString('base64') };
    await expectFailure(withSeal({ ...s, receipt: unsigned }), ['receipt_signature'], ['bad-signature']);

    const stranger = generateKeyPair();
    const byStranger = signEnvelope(edited, envelope.payloadType, stranger.privateKey);
    await expectFailure(withSeal({ ...s, receipt: byStranger }), ['receipt_signature'], ['bad-signature']);

    // Even the ship key cannot make a receipt the records do not produce.
    const byShip = signEnvelope(edited, envelope.payloadType, {
      privateKey: fx.signer.privateKey,
      keyid: fx.signer.keyId,
    });
    await expectFailure(withSeal({ ...s, receipt: byShip }), ['receipt_recomputed'], ['receipt-mismatch']);

    // An edit that keeps the length (one hex digit of the root inside the receipt) is caught too, and
    // the failure names the first byte where the signed receipt and the records' receipt differ.
    const original = Buffer.from(envelope.payload, 'base64');
    const root = receipt.merkle_root as string;
    const sameLength = Buffer.from(
      canonicalize({ ...receipt, merkle_root: `${root.startsWith('0') ? '1' : '0'}${root.slice(1)}` }),
    );
    assert.equal(sameLength.length, original.length);
    let expectedAt = 0;
    while (original[expectedAt] === sameLength[expectedAt]) expectedAt++;
    const resigned = signEnvelope(sameLength, envelope.payloadType, {
      privateKey: fx.signer.privateKey,
      keyid: fx.signer.keyId,
    });
    const failed = await expectFailure(
      withSeal({ ...s, receipt: resigned }),
      ['receipt_recomputed'],
      ['receipt-mismatch'],
    );
    assert.equal((failed.detail as { first_difference: number }).first_difference, expectedAt);
  });

  it('a sealed Merkle root or size that does not match the records fails merkle_root', async () => {
    const s = seal();
    const merkle = s.merkle as { root: string; size: number };
    const root = `${merkle.root.slice(0, -1)}${merkle.root.endsWith('0') ? '1' : '0'}`;
    await expectFailure(withSeal({ ...s, merkle: { ...merkle, root } }), ['merkle_root'], ['root-mismatch']);
    await expectFailure(withSeal({ ...s, merkle: { ...merkle, size: merkle.size + 1 } }), ['merkle_root']);
  });

  it('a swapped key in the header fails', async () => {
    const header = JSON.parse(lines[0]!.toString()) as { keys: { key_id: string; public_key: string }[] };
    const stranger = generateKeyPair();
    const foreign = {
      key_id: keyId(stranger.publicKey),
      public_key: rawPublicKey(stranger.publicKey).toString('base64'),
    };
    await expectFailure(withHeader({ ...header, keys: [foreign] }), ['signer_pinned'], ['untrusted-signer']);
  });

  it('a header whose key id is kept but whose public key is swapped fails', async () => {
    const header = JSON.parse(lines[0]!.toString()) as { keys: { key_id: string; public_key: string }[] };
    const stranger = rawPublicKey(generateKeyPair().publicKey).toString('base64');
    const mismatched = [{ key_id: header.keys[0]!.key_id, public_key: stranger }];
    await expectFailure(withHeader({ ...header, keys: mismatched }), ['package_format', 'signer_pinned']);
  });

  it('a header naming another session fails', async () => {
    const header = JSON.parse(lines[0]!.toString()) as { session: string };
    const other = JSON.parse(otherLines[0]!.toString()) as { session: string };
    await expectFailure(withHeader({ ...header, session: other.session }), [
      'package_format',
      'record_session',
    ]);
  });

  it('verifying with only a foreign key pinned fails signer_pinned', async () => {
    const dir = tempDir('tally-foreign-');
    createKey(dir, 'ship');
    const other = await loadShipSigner({ home: dir, project: null, state: dir }, async () => undefined);
    const result = await verify(pkg, [other.key.publicKey]);
    assert.equal(result.ok, false);
    const failed = firstFailure(result);
    assert.equal(failed.check, 'signer_pinned');
    assert.equal(failed.code, 'untrusted-signer');
  });

  it('a truncated file fails at every line boundary and inside every line', async () => {
    const cuts = new Set<number>([0, 1]);
    let at = 0;
    for (const l of lines) {
      cuts.add(at + Math.floor(l.length / 2));
      at += l.length + 1;
      cuts.add(at - 1); // just before the newline (for the last line: only it missing)
      if (at < pkg.length) cuts.add(at); // at a line boundary
    }
    for (const cut of [...cuts].sort((a, b) => a - b)) {
      const result = await verify(pkg.subarray(0, cut));
      assert.equal(result.ok, false, `truncated at ${cut} of ${pkg.length} still verified`);
      const failed = firstFailure(result);
      assert.ok(
        ['package_format', 'record_count', 'record_format'].includes(failed.check),
        `cut at ${cut}: ${failed.check} ${failed.code}`,
      );
    }
  });

  it('a package missing only its final newline fails', async () => {
    await expectFailure(pkg.subarray(0, pkg.length - 1), ['package_format']);
  });

  it('trailing garbage after the seal fails package_format', async () => {
    for (const tail of ['garbage', 'garbage\n', '\n', '{}\n', lines[1]!.toString()]) {
      const failed = await expectFailure(Buffer.concat([pkg, Buffer.from(tail)]), ['package_format']);
      assert.equal(failed.code, 'trailing-data', `tail ${JSON.stringify(tail.slice(0, 20))}`);
    }
  });

  it('a line longer than any record or seal may be fails package_format without being parsed', async () => {
    const huge = Buffer.alloc(MAX_LINE_BYTES + 1, 0x78);
    // In place of the first record, newline or not, and as trailing data after the seal.
    for (const bytes of [
      Buffer.concat([
        lines[0]!,
        Buffer.from('\n'),
        huge,
        Buffer.from('\n'),
        ...lines.slice(2).flatMap((l) => [l, Buffer.from('\n')]),
      ]),
      Buffer.concat([lines[0]!, Buffer.from('\n'), huge]),
      Buffer.concat([pkg, huge]),
    ]) {
      const failed = await expectFailure(bytes, ['package_format'], ['line-too-long']);
      assert.match(JSON.stringify(failed.detail), /longer than 67108864 bytes/);
    }
  });

  it('an empty file, a lone newline and non-package JSON fail package_format', async () => {
    await expectFailure(Buffer.alloc(0), ['package_format'], ['empty']);
    await expectFailure(Buffer.from('\n'), ['package_format'], ['bad-header']);
    await expectFailure(Buffer.from('{"type":"something/else"}\n'), ['package_format'], ['bad-header']);
    await expectFailure(Buffer.from([0xff, 0xfe, 0x00, 0x0a]), ['package_format'], ['bad-header']);
  });
});
