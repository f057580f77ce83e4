/**
 * Offline verification of a session package: one fixed, ordered list of named checks, each
 * `{check, ok, code, detail}`. Nothing here touches the network or the clock: `now` is an input.
 * A check that cannot run because an earlier one failed is reported with code "skipped".
 */

import { type TrustedKeys, trustKeys, verifyEnvelope } from '../../core/dsse.js';
import { sha256 } from '../../core/hash.js';
import { type PublicKeyInput, shipId, toPublicKey } from '../../core/keys.js';
import { LineSplitter, LineTooLongError } from '../../core/lines.js';
import { type AgentCertificate, verifyCertificate } from '../certificate.js';
import { createPipeline, defaultWorkers, type RecordPipeline } from '../log/pipeline.js';
import {
  ChainVerifier,
  type CheckedRecord,
  LineTooLong,
  type LogIssue,
  type LogLine,
  MAX_LINE_BYTES,
} from '../log/reader.js';
import { type Receipt, ReceiptComposer, receiptBytes } from '../receipt/receipt.js';
import type { EventRecord } from '../record/record.js';
import { type CrossVerification, crossVerify } from './cross-verify.js';
import {
  type PackageHeader,
  type PackageSeal,
  parseHeader,
  parseSeal,
  RECEIPT_PAYLOAD_TYPE,
} from './grammar.js';
import { MerkleAccumulator } from './merkle-accumulator.js';

export type CheckName =
  | 'package_format'
  | 'signer_pinned'
  | 'record_format'
  | 'record_signatures'
  | 'record_session'
  | 'record_sequence'
  | 'record_chain'
  | 'record_count'
  | 'merkle_root'
  | 'receipt_signature'
  | 'receipt_recomputed'
  | 'certificate_signature'
  | 'ship_id_match'
  | 'within_validity_window'
  | 'unauthorized_calls'
  | 'escalations'
  | 'never_called';

export interface CheckResult {
  check: CheckName;
  ok: boolean;
  /** "ok", "skipped", "info", or a failure code naming what broke. */
  code: string;
  detail: string | Record<string, unknown>;
}

export interface VerifyOptions {
  /** Pinned public keys: only these are trusted, whatever the package carries. */
  trusted: readonly PublicKeyInput[];
  /** A certificate envelope for cross-verification. */
  certificate?: unknown;
  /** The time the verification is made at (RFC 3339 in the output). */
  now: Date;
  onProgress?: (records: number, total: number) => void;
  /**
   * Worker threads that check record signatures; 0 checks everything on this thread. Default:
   * every core when the package holds at least POOL_THRESHOLD records, else 0. Results are the
   * same either way.
   */
  workers?: number;
}

export interface VerifyResult {
  ok: boolean;
  session: string | null;
  now: string;
  trusted_keys: string[];
  checks: CheckResult[];
  receipt: Receipt | null;
  cross: CrossVerification | null;
}

/** Every check, in the order it is reported (docs/formats.md#verification-result). */
const CHECK_ORDER: readonly CheckName[] = [
  'package_format',
  'signer_pinned',
  'record_format',
  'record_signatures',
  'record_session',
  'record_sequence',
  'record_chain',
  'record_count',
  'merkle_root',
  'receipt_signature',
  'receipt_recomputed',
  'certificate_signature',
  'ship_id_match',
  'within_validity_window',
  'unauthorized_calls',
  'escalations',
  'never_called',
];

/** The record checks, and the cross-verification checks (run only with a certificate), in order. */
const RECORD_CHECKS = CHECK_ORDER.filter((check) => check.startsWith('record_'));
const CROSS_CHECKS = CHECK_ORDER.slice(CHECK_ORDER.indexOf('certificate_signature'));

const ISSUE_TO_CHECK = {
  parse: ['record_format', 'malformed'],
  schema: ['record_format', 'bad-record'],
  signature: ['record_signatures', 'bad-signature'],
  session: ['record_session', 'session-mismatch'],
  sequence: ['record_sequence', 'sequence-gap'],
  chain: ['record_chain', 'broken-chain'],
} as const;

class Checks {
  readonly list: CheckResult[] = [];
  pass(check: CheckName, detail: CheckResult['detail'], code = 'ok'): void {
    this.list.push({ check, ok: true, code, detail });
  }
  fail(check: CheckName, code: string, detail: CheckResult['detail']): void {
    this.list.push({ check, ok: false, code, detail });
  }
  skip(checks: readonly CheckName[], why: string): void {
    for (const check of checks)
      if (!this.list.some((c) => c.check === check))
        this.list.push({ check, ok: false, code: 'skipped', detail: why });
  }
  /** The results in the one fixed order of CHECK_ORDER, however verification ended. */
  sort(): void {
    this.list.sort((a, b) => CHECK_ORDER.indexOf(a.check) - CHECK_ORDER.indexOf(b.check));
  }
}

/** Splits package bytes into lines (views, no copying), refusing a line longer than `maxLineBytes`. */
export function* bufferLines(bytes: Uint8Array, maxLineBytes = MAX_LINE_BYTES): Generator<LogLine> {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const splitter = new LineSplitter(maxLineBytes);
  const ready: LogLine[] = [];
  const take = (line: Buffer, offset: number) => {
    ready.push({ line, offset, torn: false });
  };
  // Fed in slices so the lines waiting to be yielded stay few, whatever the package's size.
  for (let at = 0; at < buf.length; at += BUFFER_SLICE) {
    try {
      splitter.push(buf.subarray(at, Math.min(buf.length, at + BUFFER_SLICE)), take);
    } catch (error) {
      if (!(error instanceof LineTooLongError)) throw error;
      yield* ready;
      throw new LineTooLong(error.offset, maxLineBytes);
    }
    yield* ready;
    ready.length = 0;
  }
  const rest = splitter.end();
  if (rest) yield { ...rest, torn: true };
}

const BUFFER_SLICE = 1 << 20;

/**
 * What cross-verification needs of the records, kept while they stream past: the session's first
 * `session.start`, its tool calls (and whether each ran) and permission resolutions, and the
 * session window.
 */
class CrossRecords {
  readonly records: EventRecord[] = [];
  private first: string | undefined;
  private last: string | undefined;
  private sawStart = false;

  add(record: EventRecord): void {
    this.first ??= record.time;
    this.last = record.time;
    const type = record.event.type;
    if (type === 'session.start' && !this.sawStart) {
      this.sawStart = true;
      this.records.push(record);
    } else if (type === 'tool.before' || type === 'tool.permission.resolved') this.records.push(record);
    else if (type === 'tool.after') {
      // The call and whether it ran matter here; its output need not be held.
      const { id, time, source, call, tool, execution, outcome } = record.event;
      this.records.push({ ...record, event: { id, type, time, source, call, tool, execution, outcome } });
    }
  }

  window(): { start: string; end: string } {
    return { start: this.first!, end: this.last! };
  }
}

/** The records' running results: Merkle root, receipt, chain head, cross-verification facts. */
class RecordFold {
  readonly merkle = new MerkleAccumulator();
  readonly composer = new ReceiptComposer();
  composeError: Error | null = null;
  head: Buffer | null = null;
  readonly cross: CrossRecords | null;

  constructor(withCross: boolean) {
    this.cross = withCross ? new CrossRecords() : null;
  }

  add(checked: CheckedRecord): void {
    this.merkle.add(checked.digest);
    this.head = checked.digest;
    this.cross?.add(checked.record);
    if (this.composeError !== null) return;
    try {
      this.composer.add(checked.record);
    } catch (error) {
      this.composeError = error as Error;
    }
  }
}

export async function verifyPackageLines(
  lines: Iterable<LogLine> | AsyncIterable<LogLine>,
  options: VerifyOptions,
): Promise<VerifyResult> {
  const checks = new Checks();
  const trusted: TrustedKeys = trustKeys(options.trusted);
  const result: VerifyResult = {
    ok: false,
    session: null,
    now: options.now.toISOString(),
    trusted_keys: [...trusted.byId.keys()].sort(),
    checks: checks.list,
    receipt: null,
    cross: null,
  };
  const downstream: CheckName[] = [
    'signer_pinned',
    ...RECORD_CHECKS,
    'merkle_root',
    'receipt_signature',
    'receipt_recomputed',
  ];
  if (options.certificate !== undefined) downstream.push(...CROSS_CHECKS);
  const finish = () => {
    checks.skip(['package_format', ...downstream], 'an earlier check failed');
    checks.sort();
    result.ok = checks.list.every((c) => c.ok);
    return result;
  };

  let header: PackageHeader | null = null;
  let sealLine: LogLine | null = null;
  let tornRecord: number | null = null;
  let extra = 0;
  let pipeline: RecordPipeline | null = null;
  let issue: LogIssue | null = null;
  const fold = new RecordFold(options.certificate !== undefined);
  let accepted = 0;
  let overlong: LineTooLong | null = null;
  try {
    let submitted = 0;
    for await (const item of lines) {
      const { line, offset, torn } = item;
      if (header === null) {
        try {
          header = parseHeader(line);
        } catch (error) {
          checks.fail('package_format', 'bad-header', (error as Error).message);
          return finish();
        }
        result.session = header.session;
        const packageKeys = header.keys.map((k) => k.key_id);
        const pinned = packageKeys.filter((id) => trusted.byId.has(id));
        if (pinned.length === 0) {
          checks.pass('package_format', 'header read');
          checks.fail('signer_pinned', 'untrusted-signer', {
            message: 'none of the keys that signed this package is pinned; pass --trust with the signer key',
            package_keys: packageKeys,
            trusted_keys: result.trusted_keys,
          });
          return finish();
        }
        checks.pass('signer_pinned', { pinned });
        const total = header.record_count;
        pipeline = createPipeline({
          chain: new ChainVerifier(trusted, header.session),
          workers: options.workers ?? defaultWorkers(total),
          onRecord: (checked) => {
            fold.add(checked);
            accepted += 1;
            if (accepted % 10_000 === 0) options.onProgress?.(accepted, total);
          },
        });
        continue;
      }
      if (submitted < header.record_count) {
        if (pipeline!.failed) break;
        if (torn) {
          tornRecord = offset;
          break;
        }
        submitted += 1;
        const room = pipeline!.push(line, offset);
        if (room !== undefined) await room;
        continue;
      }
      if (sealLine === null) sealLine = { line: Buffer.from(line), offset, torn };
      else extra += 1;
    }
    if (pipeline !== null) issue = await pipeline.drain();
  } catch (error) {
    if (!(error instanceof LineTooLong)) throw error;
    overlong = error;
  } finally {
    await pipeline?.close();
  }
  if (overlong !== null) {
    checks.fail('package_format', 'line-too-long', { offset: overlong.offset, message: overlong.message });
    return finish();
  }
  if (header === null) {
    checks.fail('package_format', 'empty', 'the package is empty');
    return finish();
  }
  if (issue !== null) {
    const [check, code] = ISSUE_TO_CHECK[issue.check];
    checks.fail(check, code, { seq: issue.seq, offset: issue.offset, message: issue.message });
    return finish();
  }
  if (tornRecord !== null) {
    checks.fail('record_count', 'truncated', { offset: tornRecord, message: 'package ends inside a record' });
    return finish();
  }
  if (accepted < header.record_count) {
    checks.fail(
      'record_count',
      'truncated',
      `header says ${header.record_count} records, package holds ${accepted}`,
    );
    return finish();
  }
  if (sealLine === null) {
    checks.fail('package_format', 'missing-seal', 'the package ends without its seal line (truncated?)');
    return finish();
  }
  let seal: PackageSeal;
  try {
    seal = parseSeal(sealLine.line);
  } catch (error) {
    checks.fail('package_format', 'bad-seal', { offset: sealLine.offset, message: (error as Error).message });
    return finish();
  }
  if (sealLine.torn) {
    checks.fail('package_format', 'truncated', {
      offset: sealLine.offset,
      message: 'the seal line has no final newline (truncated?)',
    });
    return finish();
  }
  // The parsed seal holds everything needed from here on; its line need not be kept as well.
  sealLine = null;
  if (extra > 0) {
    checks.fail('package_format', 'trailing-data', `${extra} unexpected line(s) after the seal`);
    return finish();
  }
  const count = accepted;
  checks.pass('package_format', { records: count });
  checks.pass('record_format', { records: count });
  checks.pass('record_signatures', { records: count });
  checks.pass('record_session', { session: header.session });
  checks.pass('record_sequence', { first: 0, last: count - 1 });
  checks.pass('record_chain', { head: fold.head === null ? null : `sha256:${fold.head.toString('hex')}` });
  checks.pass('record_count', { records: count });

  const root = fold.merkle.root().toString('hex');
  if (seal.merkle.root !== root || seal.merkle.size !== count) {
    checks.fail('merkle_root', 'root-mismatch', {
      sealed: seal.merkle.root,
      recomputed: root,
      sealed_size: seal.merkle.size,
      size: count,
    });
    return finish();
  }
  checks.pass('merkle_root', { root, size: count });

  // The signed receipt and the recomputed one are compared by the SHA-256 of their exact bytes, so
  // neither copy is held while the other is made: one is hashed and let go before the next exists.
  let signed: ReceiptDigest;
  let receiptSigners: string[];
  try {
    const verified = verifyEnvelope(seal.receipt, trusted, { strict: true });
    if (verified.payloadType !== RECEIPT_PAYLOAD_TYPE) throw new Error(`payloadType ${verified.payloadType}`);
    signed = digestOf(verified.payload);
    receiptSigners = verified.keyIds;
    checks.pass('receipt_signature', { signed_by: verified.keyIds });
  } catch (error) {
    checks.fail('receipt_signature', 'bad-signature', (error as Error).message);
    return finish();
  }
  let receipt: Receipt;
  let recomputed: ReceiptDigest;
  try {
    if (fold.composeError !== null) throw fold.composeError;
    receipt = fold.composer.finish(root);
    recomputed = digestOf(receiptBytes(receipt));
  } catch (error) {
    checks.fail('receipt_recomputed', 'receipt-mismatch', {
      message: `these records do not compose into a receipt: ${(error as Error).message}`,
    });
    return finish();
  }
  if (recomputed.length !== signed.length || !recomputed.sha256.equals(signed.sha256)) {
    // Only now, on the failure path, are both byte strings made again to say where they differ.
    const signedBytes = Buffer.from(seal.receipt.payload, 'base64');
    checks.fail('receipt_recomputed', 'receipt-mismatch', {
      message: 'the signed receipt is not the receipt these records produce',
      first_difference: firstDifference(receiptBytes(receipt), signedBytes),
    });
    return finish();
  }
  checks.pass('receipt_recomputed', { bytes: recomputed.length });
  result.receipt = receipt;

  if (options.certificate !== undefined)
    crossChecks(checks, options, fold.cross!, trusted, receiptSigners, result);
  return finish();
}

interface ReceiptDigest {
  sha256: Buffer;
  length: number;
}

function digestOf(bytes: Buffer): ReceiptDigest {
  return { sha256: sha256(bytes), length: bytes.length };
}

function firstDifference(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

function crossChecks(
  checks: Checks,
  options: VerifyOptions,
  records: CrossRecords,
  trusted: TrustedKeys,
  receiptSigners: string[],
  result: VerifyResult,
): void {
  let certificate: AgentCertificate;
  try {
    certificate = verifyCertificate(options.certificate, trusted).certificate;
    checks.pass('certificate_signature', { serial: certificate.serial, agent: certificate.agent.name });
  } catch (error) {
    checks.fail('certificate_signature', 'bad-certificate', (error as Error).message);
    return;
  }
  // The receipt signer's identity must be the one the certificate was issued for.
  const signerShips = receiptSigners.map((id) => shipId(toPublicKey(trusted.byId.get(id)!)));
  if (signerShips.includes(certificate.ship_id)) {
    checks.pass('ship_id_match', { ship_id: certificate.ship_id });
  } else {
    checks.fail('ship_id_match', 'ship-mismatch', { certificate: certificate.ship_id, session: signerShips });
  }
  const window = records.window();
  const inside =
    Date.parse(window.start) >= Date.parse(certificate.valid_from) &&
    Date.parse(window.end) <= Date.parse(certificate.valid_until);
  const detail = {
    session: window,
    certificate: { valid_from: certificate.valid_from, valid_until: certificate.valid_until },
  };
  if (inside) checks.pass('within_validity_window', detail);
  else checks.fail('within_validity_window', 'outside-window', detail);

  const cross = crossVerify(certificate, records.records);
  result.cross = cross;
  const executed = cross.unauthorized.filter((c) => !c.blocked);
  const list = cross.unauthorized.map((c) => ({
    seq: c.seq,
    tool: c.tool,
    verdict: c.verdict,
    ...(c.pattern ? { pattern: c.pattern } : {}),
    blocked: c.blocked,
  }));
  if (executed.length === 0)
    checks.pass('unauthorized_calls', {
      count: cross.unauthorized.length,
      blocked: cross.unauthorized.length,
      calls: list,
    });
  else
    checks.fail('unauthorized_calls', 'unauthorized', {
      count: cross.unauthorized.length,
      executed: executed.length,
      calls: list,
    });
  const unapproved = cross.escalations.filter((c) => !c.approved && !c.blocked);
  const escalations = cross.escalations.map((c) => ({
    seq: c.seq,
    tool: c.tool,
    pattern: c.pattern,
    approved: c.approved,
    blocked: c.blocked,
  }));
  if (unapproved.length === 0)
    checks.pass('escalations', { count: cross.escalations.length, calls: escalations });
  else
    checks.fail('escalations', 'unapproved-escalation', {
      count: cross.escalations.length,
      unapproved: unapproved.length,
      calls: escalations,
    });
  checks.pass('never_called', { patterns: cross.neverCalled }, 'info');
}

/** Verifies a whole package held in memory. */
export function verifyPackage(bytes: Uint8Array, options: VerifyOptions): Promise<VerifyResult> {
  return verifyPackageLines(bufferLines(bytes), options);
}
