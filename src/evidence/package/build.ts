/**
 * Writing packages: the header and seal lines, and a whole package in memory from verified
 * records. Everything is canonical JSON and Ed25519 signatures are deterministic, so the same
 * records always give the same bytes. Sealing a session log streams instead (./seal.ts); both give
 * the same bytes.
 */
import { canonicalize } from '../../core/canonical.js';
import { signEnvelope } from '../../core/dsse.js';
import { rawPublicKey, toPublicKey } from '../../core/keys.js';
import type { CheckedRecord } from '../log/reader.js';
import { type Receipt, ReceiptComposer, receiptBytes } from '../receipt/receipt.js';
import { MAX_LINE_BYTES, type Signer } from '../record/codec.js';
import {
  MERKLE_ALGORITHM,
  PACKAGE_TYPES,
  PackageError,
  type PackageFormat,
  type PackageHeader,
  type PackageSeal,
  RECEIPT_PAYLOAD_TYPE,
  recordLeaf,
  SEAL_TYPES,
} from './grammar.js';
import { MerkleAccumulator } from './merkle-accumulator.js';

export interface SealedPackage {
  bytes: Buffer;
  receipt: Receipt;
  header: PackageHeader;
  seal: PackageSeal;
}

/** The format of packages made of records of version `v`. */
export function formatForRecords(v: number): PackageFormat {
  return v === 1 ? 'v1' : 'v2';
}

export function packageHeader(
  session: string,
  recordCount: number,
  signer: Signer,
  format: PackageFormat = 'v2',
): PackageHeader {
  const publicKey = toPublicKey(signer.privateKey);
  return {
    type: PACKAGE_TYPES[format],
    session,
    record_count: recordCount,
    keys: [{ key_id: signer.keyId, public_key: rawPublicKey(publicKey).toString('base64') }],
  };
}

/** The seal line's content: the Merkle root and the receipt, signed. */
export function packageSeal(
  receipt: Receipt,
  size: number,
  signer: Signer,
  format: PackageFormat = 'v2',
): PackageSeal {
  return {
    type: SEAL_TYPES[format],
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
    const what = value.type.startsWith('tally/package-seal/') ? 'seal' : 'header';
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
 * composed from the records, so it can be recomputed by anyone holding the package.
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
  const format = formatForRecords(checked[0]!.record.v);
  const merkle = new MerkleAccumulator();
  const composer = new ReceiptComposer();
  for (const c of checked) {
    merkle.add(recordLeaf(c.digest, format));
    composer.add(c.record);
  }
  const receipt = composer.finish(merkle.root().toString('hex'));
  const header = packageHeader(checked[0]!.record.session, checked.length, signer, format);
  const seal = packageSeal(receipt, checked.length, signer, format);
  const parts: Buffer[] = [packageLine(header)];
  for (const line of lines) parts.push(line, Buffer.from('\n'));
  parts.push(packageLine(seal));
  return { bytes: Buffer.concat(parts), receipt, header, seal };
}
