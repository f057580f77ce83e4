/**
 * Offline verification of a session package: one fixed, ordered list of named checks
 * (./checks.ts), each `{check, ok, code, detail}`, run as named steps — read the package (header,
 * records, seal: the grammar of ./grammar.ts), the seal's Merkle root, the receipt
 * (./verify-receipt.ts), cross-verification (./verify-cross.ts). Nothing here touches the network
 * or the clock: `now` is an input. A check that cannot run because an earlier one failed is
 * reported with code "skipped".
 */
import { type TrustedKeys, trustKeys } from '../../core/dsse.js';
import type { PublicKeyInput } from '../../core/keys.js';
import { LineSplitter, LineTooLongError } from '../../core/lines.js';
import { createPipeline, defaultWorkers, type RecordPipeline } from '../log/pipeline.js';
import { ChainVerifier, LineTooLong, type LogIssue, type LogLine, MAX_LINE_BYTES } from '../log/reader.js';
import type { Receipt } from '../receipt/receipt.js';
import {
  CHECK_ORDER,
  type CheckName,
  type CheckResult,
  Checks,
  CROSS_CHECKS,
  PACKAGE_CHECKS,
} from './checks.js';
import type { CrossVerification } from './cross-verify.js';
import {
  formatOf,
  PackageError,
  type PackageFormat,
  type PackageHeader,
  PackageReader,
  type PackageSeal,
  parseSeal,
  recordVersionOf,
} from './grammar.js';
import { crossChecks } from './verify-cross.js';
import { RecordFold } from './verify-fold.js';
import { checkReceipt } from './verify-receipt.js';
import { sessionChecks } from './verify-session.js';

export { CHECK_ORDER, type CheckName, type CheckResult };

export interface VerifyOptions {
  /** Pinned public keys: only these are trusted, whatever the package carries. */
  trusted: readonly PublicKeyInput[];
  /** A certificate envelope for cross-verification. */
  certificate?: unknown;
  /** Pinned approver keys: only approvals of escalations they signed count (docs/security.md). */
  approvers?: readonly PublicKeyInput[];
  /**
   * Key ids found in the tree being verified (a project's committed public key): never trusted
   * for being there; a package signed only by one fails `signer_pinned` as `repository-provided`.
   */
  repositoryKeys?: readonly string[];
  /** The time the verification is made at: records after it fail `not_after_now`. */
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
  /** The package format (`v1` packages still verify), null when the header could not be read. */
  format: PackageFormat | null;
  session: string | null;
  now: string;
  trusted_keys: string[];
  checks: CheckResult[];
  receipt: Receipt | null;
  cross: CrossVerification | null;
}

const ISSUE_TO_CHECK = {
  parse: ['record_format', 'malformed'],
  schema: ['record_format', 'bad-record'],
  signature: ['record_signatures', 'bad-signature'],
  session: ['record_session', 'session-mismatch'],
  sequence: ['record_sequence', 'sequence-gap'],
  chain: ['record_chain', 'broken-chain'],
} as const;

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

/** What reading the package's lines gave: framing, records folded, or the first failure. */
interface ReadOutcome {
  header: PackageHeader | null;
  seal: LogLine | null;
  fold: RecordFold | null;
  accepted: number;
  /** A record issue, a torn record, a framing failure: the check and code to report. */
  failure: { check: CheckName; code: string; detail: CheckResult['detail'] } | null;
}

/** Step 1: header, signer pinned, every record through the chain checks, the seal line. */
async function readPackage(
  lines: Iterable<LogLine> | AsyncIterable<LogLine>,
  options: VerifyOptions,
  trusted: TrustedKeys,
  checks: Checks,
  result: VerifyResult,
): Promise<ReadOutcome> {
  const reader = new PackageReader();
  const out: ReadOutcome = { header: null, seal: null, fold: null, accepted: 0, failure: null };
  let pipeline: RecordPipeline | null = null;
  let issue: LogIssue | null = null;
  const fail = (check: CheckName, code: string, detail: CheckResult['detail']) => {
    out.failure ??= { check, code, detail };
  };
  try {
    for await (const { line, offset, torn } of lines) {
      let part: ReturnType<PackageReader['next']>;
      try {
        part = reader.next(line, offset);
      } catch (error) {
        if (!(error instanceof PackageError)) throw error;
        if (error.code === 'trailing-data') fail('package_format', 'trailing-data', error.message);
        else fail('package_format', 'bad-header', error.message);
        break;
      }
      if (part.part === 'header') {
        const header = part.header;
        out.header = header;
        result.session = header.session;
        result.format = formatOf(header);
        const packageKeys = header.keys.map((k) => k.key_id);
        const pinned = packageKeys.filter((id) => trusted.byId.has(id));
        if (pinned.length === 0) {
          checks.pass('package_format', 'header read');
          const fromTree = packageKeys.filter((id) => options.repositoryKeys?.includes(id));
          if (fromTree.length > 0)
            fail('signer_pinned', 'repository-provided', {
              message:
                'the package is signed by a key that only the tree being verified provides (its committed public key): anyone who can write the tree can provide one; pin it yourself (tally trust add) if you trust it',
              package_keys: packageKeys,
              repository_keys: fromTree,
              trusted_keys: result.trusted_keys,
            });
          else
            fail('signer_pinned', 'untrusted-signer', {
              message:
                'none of the keys that signed this package is pinned; pass --trust with the signer key, or pin it (tally trust add)',
              package_keys: packageKeys,
              trusted_keys: result.trusted_keys,
            });
          break;
        }
        checks.pass('signer_pinned', { pinned });
        const fold = new RecordFold(formatOf(header), options.now, options.certificate !== undefined);
        out.fold = fold;
        const total = header.record_count;
        pipeline = createPipeline({
          chain: new ChainVerifier(trusted, header.session, recordVersionOf(formatOf(header))),
          workers: options.workers ?? defaultWorkers(total),
          onRecord: (checked) => {
            fold.add(checked);
            out.accepted += 1;
            if (out.accepted % 10_000 === 0) options.onProgress?.(out.accepted, total);
          },
        });
      } else if (part.part === 'record') {
        if (pipeline!.failed) break;
        if (torn) {
          fail('record_count', 'truncated', { offset, message: 'package ends inside a record' });
          break;
        }
        const room = pipeline!.push(line, offset);
        if (room !== undefined) await room;
      } else out.seal = { line: Buffer.from(line), offset, torn };
    }
    if (pipeline !== null) issue = await pipeline.drain();
  } catch (error) {
    if (!(error instanceof LineTooLong)) throw error;
    fail('package_format', 'line-too-long', { offset: error.offset, message: error.message });
  } finally {
    await pipeline?.close();
  }
  if (issue !== null) {
    const [check, code] = ISSUE_TO_CHECK[issue.check];
    out.failure = { check, code, detail: { seq: issue.seq, offset: issue.offset, message: issue.message } };
  }
  if (out.failure === null && out.header === null) fail('package_format', 'empty', 'the package is empty');
  if (out.failure === null && out.header !== null && out.accepted < out.header.record_count)
    fail(
      'record_count',
      'truncated',
      `header says ${out.header.record_count} records, package holds ${out.accepted}`,
    );
  if (out.failure === null && out.seal === null)
    fail('package_format', 'missing-seal', 'the package ends without its seal line (truncated?)');
  return out;
}

/** Step 2: the seal line parses, is complete, and its Merkle root is the records' root. */
function checkSeal(checks: Checks, read: ReadOutcome): { seal: PackageSeal; root: string } | null {
  const header = read.header!;
  const line = read.seal!;
  let seal: PackageSeal;
  try {
    seal = parseSeal(line.line, formatOf(header));
  } catch (error) {
    checks.fail('package_format', 'bad-seal', { offset: line.offset, message: (error as Error).message });
    return null;
  }
  if (line.torn) {
    checks.fail('package_format', 'truncated', {
      offset: line.offset,
      message: 'the seal line has no final newline (truncated?)',
    });
    return null;
  }
  const count = read.accepted;
  const fold = read.fold!;
  checks.pass('package_format', { records: count, format: formatOf(header) });
  checks.pass('record_format', { records: count });
  checks.pass('record_signatures', { records: count });
  checks.pass('record_session', { session: header.session });
  checks.pass('record_sequence', { first: 0, last: count - 1 });
  checks.pass('record_chain', { head: fold.head === null ? null : `sha256:${fold.head.toString('hex')}` });
  checks.pass('record_count', { records: count });
  if (fold.afterNow === null) checks.pass('not_after_now', { records: count });
  else
    checks.fail('not_after_now', 'after-now', {
      ...fold.afterNow,
      message: `record ${fold.afterNow.seq} is timestamped ${fold.afterNow.time}, after the verification time`,
    });
  sessionChecks(checks, fold.session, count);
  const root = fold.merkle.root().toString('hex');
  if (seal.merkle.root !== root || seal.merkle.size !== count) {
    checks.fail('merkle_root', 'root-mismatch', {
      sealed: seal.merkle.root,
      recomputed: root,
      sealed_size: seal.merkle.size,
      size: count,
    });
    return null;
  }
  checks.pass('merkle_root', { root, size: count });
  return { seal, root };
}

export async function verifyPackageLines(
  lines: Iterable<LogLine> | AsyncIterable<LogLine>,
  options: VerifyOptions,
): Promise<VerifyResult> {
  const checks = new Checks();
  const trusted: TrustedKeys = trustKeys(options.trusted);
  const result: VerifyResult = {
    ok: false,
    format: null,
    session: null,
    now: options.now.toISOString(),
    trusted_keys: [...trusted.byId.keys()].sort(),
    checks: checks.list,
    receipt: null,
    cross: null,
  };
  const expected: CheckName[] = [...PACKAGE_CHECKS];
  if (options.certificate !== undefined) expected.push(...CROSS_CHECKS);
  const finish = () => {
    checks.skip(expected, 'an earlier check failed');
    checks.sort();
    result.ok = checks.list.every((c) => c.ok);
    return result;
  };

  const read = await readPackage(lines, options, trusted, checks, result);
  if (read.failure !== null) {
    checks.fail(read.failure.check, read.failure.code, read.failure.detail);
    return finish();
  }
  const sealed = checkSeal(checks, read);
  if (sealed === null) return finish();
  const receipt = checkReceipt(checks, sealed.seal, read.fold!, sealed.root, trusted);
  if (receipt === null) return finish();
  result.receipt = receipt.receipt;
  if (options.certificate !== undefined)
    result.cross = crossChecks(checks, options, read.fold!.cross!, trusted, receipt.signers);
  return finish();
}

/** Verifies a whole package held in memory. */
export function verifyPackage(bytes: Uint8Array, options: VerifyOptions): Promise<VerifyResult> {
  return verifyPackageLines(bufferLines(bytes), options);
}
