/**
 * The session package: one self-contained, line-oriented file `<session>.tally`.
 *
 *   line 1        header: type, session id, record count, the public keys that signed
 *   lines 2..N+1  the records, byte for byte the lines of the session log (DSSE envelopes)
 *   line N+2      seal: the RFC 9162 Merkle root over the record digests, and the signed receipt
 *
 * Lines let a verifier stream a package of any size. Everything in it is canonical JSON and
 * Ed25519 signatures are deterministic, so the same records always give the same bytes.
 * Format: docs/formats.md#package.
 */
import { canonicalize } from '../../core/canonical.js';
import { type Envelope, signEnvelope } from '../../core/dsse.js';
import { TallyError } from '../../core/errors.js';
import { keyId, rawPublicKey, toPublicKey } from '../../core/keys.js';
import type { CheckedRecord } from '../log/reader.js';
import { type Receipt, ReceiptComposer, receiptBytes } from '../receipt/receipt.js';
import { MAX_LINE_BYTES, type Signer } from '../record/codec.js';
import { MerkleAccumulator } from './merkle-accumulator.js';

export const PACKAGE_TYPE = 'tally/package/v1';
export const SEAL_TYPE = 'tally/package-seal/v1';
export const RECEIPT_PAYLOAD_TYPE = 'application/vnd.tally.receipt+json';
export const MERKLE_ALGORITHM = 'rfc9162-sha256';

export class PackageError extends TallyError<'header' | 'seal' | 'truncated' | 'log'> {}

export interface PackageKey {
  key_id: string;
  /** Raw 32-byte Ed25519 public key, standard base64. */
  public_key: string;
}

export interface PackageHeader {
  type: typeof PACKAGE_TYPE;
  session: string;
  record_count: number;
  keys: PackageKey[];
}

export interface PackageSeal {
  type: typeof SEAL_TYPE;
  merkle: { algorithm: typeof MERKLE_ALGORITHM; size: number; root: string };
  receipt: Envelope;
}

export interface SealedPackage {
  bytes: Buffer;
  receipt: Receipt;
  header: PackageHeader;
  seal: PackageSeal;
}

export function packageHeader(session: string, recordCount: number, signer: Signer): PackageHeader {
  const publicKey = toPublicKey(signer.privateKey);
  return {
    type: PACKAGE_TYPE,
    session,
    record_count: recordCount,
    keys: [{ key_id: signer.keyId, public_key: rawPublicKey(publicKey).toString('base64') }],
  };
}

/** The seal line's content: the Merkle root and the receipt, signed. */
export function packageSeal(receipt: Receipt, size: number, signer: Signer): PackageSeal {
  return {
    type: SEAL_TYPE,
    merkle: { algorithm: MERKLE_ALGORITHM, size, root: receipt.merkle_root },
    receipt: signEnvelope(receiptBytes(receipt), RECEIPT_PAYLOAD_TYPE, {
      privateKey: signer.privateKey,
      keyid: signer.keyId,
    }),
  };
}

/**
 * A header or seal as its package line. A line longer than any reader accepts (MAX_LINE_BYTES) is
 * refused here, so no package is written that its own verifier would refuse.
 */
export function packageLine(value: PackageHeader | PackageSeal): Buffer {
  const line = Buffer.from(`${canonicalize(value)}\n`);
  if (line.length - 1 > MAX_LINE_BYTES) {
    const what = value.type === SEAL_TYPE ? 'seal' : 'header';
    throw new PackageError(
      what,
      `the ${what} line would be ${line.length - 1} bytes, more than the ${MAX_LINE_BYTES} a package line may hold` +
        (what === 'seal' ? ' (the receipt is too large: its rows repeat very long commands or paths)' : ''),
      { bytes: line.length - 1, limit: MAX_LINE_BYTES },
    );
  }
  return line;
}

/**
 * Builds a package in memory from verified records (in order) and their log lines. The receipt is
 * composed from the records, so it can be recomputed by anyone holding the package. Sealing a
 * session log streams instead (seal.ts); both give the same bytes.
 */
export function buildPackage(
  lines: readonly Buffer[],
  checked: readonly CheckedRecord[],
  signer: Signer,
): SealedPackage {
  if (lines.length !== checked.length || checked.length === 0) {
    throw new PackageError(
      'truncated',
      `a package needs at least one record and one line per record (${lines.length} lines, ${checked.length} records)`,
    );
  }
  const merkle = new MerkleAccumulator();
  const composer = new ReceiptComposer();
  for (const c of checked) {
    merkle.add(c.digest);
    composer.add(c.record);
  }
  const receipt = composer.finish(merkle.root().toString('hex'));
  const header = packageHeader(checked[0]!.record.session, checked.length, signer);
  const seal = packageSeal(receipt, checked.length, signer);
  const parts: Buffer[] = [packageLine(header)];
  for (const line of lines) parts.push(line, Buffer.from('\n'));
  parts.push(packageLine(seal));
  return { bytes: Buffer.concat(parts), receipt, header, seal };
}

function object(value: unknown, what: string, code: 'header' | 'seal'): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new PackageError(code, `${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

function idOf(raw: Buffer): string | null {
  try {
    return keyId(raw);
  } catch {
    return null;
  }
}

/** A header or seal line: one JSON object, spelled exactly as canonical JSON (as Tally writes it). */
function canonicalLine(
  line: Buffer | string,
  what: string,
  code: 'header' | 'seal',
): Record<string, unknown> {
  const text = line.toString();
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const hint = code === 'header' ? '; is this a .tally package?' : '';
    throw new PackageError(code, `${what} is not JSON (${(error as Error).message})${hint}`);
  }
  const parsed = object(value, what, code);
  if (canonicalize(parsed) !== text) throw new PackageError(code, `${what} is not in canonical JSON form`);
  return parsed;
}

export function parseHeader(line: Buffer | string): PackageHeader {
  const h = canonicalLine(line, 'line 1', 'header');
  if (h.type !== PACKAGE_TYPE)
    throw new PackageError('header', `line 1 has type ${JSON.stringify(h.type)}, expected ${PACKAGE_TYPE}`);
  if (typeof h.session !== 'string') throw new PackageError('header', 'header.session must be a string');
  if (!Number.isSafeInteger(h.record_count) || (h.record_count as number) < 1) {
    throw new PackageError('header', 'header.record_count must be a positive integer');
  }
  if (
    !Array.isArray(h.keys) ||
    h.keys.some((k) => typeof k?.key_id !== 'string' || typeof k?.public_key !== 'string')
  ) {
    throw new PackageError('header', 'header.keys must be a list of {key_id, public_key}');
  }
  (h.keys as PackageKey[]).forEach((k, i) => {
    const raw = Buffer.from(k.public_key, 'base64');
    if (raw.length !== 32 || raw.toString('base64') !== k.public_key || idOf(raw) !== k.key_id) {
      throw new PackageError(
        'header',
        `header.keys[${i}]: public_key is not the 32-byte Ed25519 key whose id is ${k.key_id}`,
        { pointer: `/keys/${i}/public_key` },
      );
    }
  });
  return h as unknown as PackageHeader;
}

export function parseSeal(line: Buffer | string): PackageSeal {
  const s = canonicalLine(line, 'seal line', 'seal');
  if (s.type !== SEAL_TYPE)
    throw new PackageError('seal', `seal line has type ${JSON.stringify(s.type)}, expected ${SEAL_TYPE}`);
  const m = object(s.merkle, 'seal.merkle', 'seal');
  if (
    m.algorithm !== MERKLE_ALGORITHM ||
    !Number.isSafeInteger(m.size) ||
    typeof m.root !== 'string' ||
    !/^[0-9a-f]{64}$/.test(m.root)
  ) {
    throw new PackageError('seal', 'seal.merkle must be {algorithm: "rfc9162-sha256", size, root: 64 hex}');
  }
  object(s.receipt, 'seal.receipt', 'seal');
  return s as unknown as PackageSeal;
}
