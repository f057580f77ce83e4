/**
 * The session package grammar, in one place: one self-contained, line-oriented file.
 *
 *   line 1        header: type, session id, record count, the public keys that signed
 *   lines 2..N+1  the records, byte for byte the lines of the session log (DSSE envelopes)
 *   line N+2      seal: the RFC 9162 Merkle root over the record digests, and the signed receipt
 *   (nothing after)
 *
 * `PackageReader` walks that grammar line by line for every reader (the verifier, `package
 * inspect`, the hub's ingest); parseHeader/parseSeal read the two framing lines strictly.
 * Format: docs/formats.md#package.
 */
import { canonicalize } from '../../core/canonical.js';
import type { Envelope } from '../../core/dsse.js';
import { TallyError } from '../../core/errors.js';
import { isJsonObject, jsonErrorMessage } from '../../core/json.js';
import { keyId } from '../../core/keys.js';
import { leafHash } from '../../core/merkle.js';

/** Package formats: v1 (leaf = record digest), v2 (leaf = RFC 9162 leaf hash of the digest). */
export type PackageFormat = 'v1' | 'v2';
export const PACKAGE_FORMAT: PackageFormat = 'v2';

export const PACKAGE_TYPES = { v1: 'tally/package/v1', v2: 'tally/package/v2' } as const;
export const SEAL_TYPES = { v1: 'tally/package-seal/v1', v2: 'tally/package-seal/v2' } as const;
/** The current format's types. */
export const PACKAGE_TYPE = PACKAGE_TYPES.v2;
export const SEAL_TYPE = SEAL_TYPES.v2;
export const RECEIPT_PAYLOAD_TYPE = 'application/vnd.tally.receipt+json';
export const MERKLE_ALGORITHM = 'rfc9162-sha256';

export type PackageErrorCode = 'header' | 'seal' | 'truncated' | 'log' | 'trailing-data' | 'missing-seal';
export class PackageError extends TallyError<PackageErrorCode> {}

export interface PackageKey {
  key_id: string;
  /** Raw 32-byte Ed25519 public key, standard base64. */
  public_key: string;
}

export interface PackageHeader {
  type: (typeof PACKAGE_TYPES)[PackageFormat];
  session: string;
  record_count: number;
  keys: PackageKey[];
}

export interface PackageSeal {
  type: (typeof SEAL_TYPES)[PackageFormat];
  merkle: { algorithm: typeof MERKLE_ALGORITHM; size: number; root: string };
  receipt: Envelope;
}

/** The format a header's type names. */
export function formatOf(header: PackageHeader): PackageFormat {
  return header.type === PACKAGE_TYPES.v1 ? 'v1' : 'v2';
}

/** The record version each package format holds. */
export function recordVersionOf(format: PackageFormat): 1 | 2 {
  return format === 'v1' ? 1 : 2;
}

/**
 * The Merkle leaf hash of a record: in v2 the RFC 9162 leaf hash SHA-256(0x00 ‖ digest) of the
 * 32-byte record digest; in v1 the digest itself (kept so v1 packages still verify).
 */
export function recordLeaf(digest: Uint8Array, format: PackageFormat): Buffer {
  return format === 'v1' ? Buffer.from(digest) : leafHash(digest);
}

function object(value: unknown, what: string, code: 'header' | 'seal'): Record<string, unknown> {
  if (!isJsonObject(value)) throw new PackageError(code, `${what} is not a JSON object`);
  return value;
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
    throw new PackageError(code, `${what} is not JSON (${jsonErrorMessage(error)})${hint}`, undefined, {
      cause: error,
    });
  }
  const parsed = object(value, what, code);
  if (canonicalize(parsed) !== text) throw new PackageError(code, `${what} is not in canonical JSON form`);
  return parsed;
}

/** The header of a whole package: its first line, parsed (the bytes are not copied). */
export function packageHeader(bytes: Uint8Array): PackageHeader {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const nl = buf.indexOf(0x0a);
  return parseHeader(buf.subarray(0, nl < 0 ? buf.length : nl));
}

export function parseHeader(line: Buffer | string): PackageHeader {
  const h = canonicalLine(line, 'line 1', 'header');
  if (h.type !== PACKAGE_TYPES.v1 && h.type !== PACKAGE_TYPES.v2)
    throw new PackageError(
      'header',
      `line 1 has type ${JSON.stringify(h.type)}, expected ${PACKAGE_TYPES.v2} (or ${PACKAGE_TYPES.v1})`,
    );
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

/** The seal line of a package of `format`. */
export function parseSeal(line: Buffer | string, format: PackageFormat = PACKAGE_FORMAT): PackageSeal {
  const s = canonicalLine(line, 'seal line', 'seal');
  if (s.type !== SEAL_TYPES[format])
    throw new PackageError(
      'seal',
      `seal line has type ${JSON.stringify(s.type)}, expected ${SEAL_TYPES[format]} (the header says ${format})`,
    );
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

/** One line of a package, placed in the grammar. */
export type PackagePart =
  | { part: 'header'; header: PackageHeader }
  | { part: 'record'; index: number; line: Buffer; offset: number }
  | { part: 'seal'; line: Buffer; offset: number };

/**
 * Walks the grammar: header, exactly `record_count` records, one seal, nothing after. `next` says
 * what a line is (throwing PackageError for a bad header or a line after the seal); `finish` says
 * whether the package ended where the grammar allows.
 */
export class PackageReader {
  private header: PackageHeader | null = null;
  private records = 0;
  private sealed = false;

  get format(): PackageFormat | null {
    return this.header && formatOf(this.header);
  }

  get recordsRead(): number {
    return this.records;
  }

  next(line: Buffer, offset: number): PackagePart {
    if (this.header === null) {
      this.header = parseHeader(line);
      return { part: 'header', header: this.header };
    }
    if (this.records < this.header.record_count)
      return { part: 'record', index: this.records++, line, offset };
    if (this.sealed)
      throw new PackageError('trailing-data', `unexpected data at byte ${offset}, after the seal`, {
        offset,
      });
    this.sealed = true;
    return { part: 'seal', line, offset };
  }

  /** Throws when the package stopped short: no header, missing records, no seal. */
  finish(): void {
    if (this.header === null) throw new PackageError('header', 'the package is empty');
    if (this.records < this.header.record_count)
      throw new PackageError(
        'truncated',
        `header says ${this.header.record_count} records, package holds ${this.records}`,
      );
    if (!this.sealed)
      throw new PackageError('missing-seal', 'the package ends without its seal line (truncated?)');
  }
}
