/**
 * The seal's checks of the receipt: it is signed by a pinned key, it is byte for byte the receipt
 * these records compose into (the two compared by the SHA-256 of their exact bytes, so neither copy
 * is held while the other is made), and it left no row out.
 */
import { type TrustedKeys, verifyEnvelope } from '../../core/dsse.js';
import { sha256 } from '../../core/hash.js';
import { type Receipt, receiptBytes } from '../receipt/receipt.js';
import { SHARED_LISTS } from '../receipt/row-share.js';
import type { Checks } from './checks.js';
import { type PackageSeal, RECEIPT_PAYLOAD_TYPE } from './grammar.js';
import type { RecordFold } from './verify-fold.js';

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

/** The recomputed receipt and who signed it, or null when either check failed (recorded in `checks`). */
export function checkReceipt(
  checks: Checks,
  seal: PackageSeal,
  fold: RecordFold,
  root: string,
  trusted: TrustedKeys,
): { receipt: Receipt; signers: string[] } | null {
  let signed: ReceiptDigest;
  let signers: string[];
  try {
    const verified = verifyEnvelope(seal.receipt, trusted, { strict: true });
    if (verified.payloadType !== RECEIPT_PAYLOAD_TYPE) throw new Error(`payloadType ${verified.payloadType}`);
    signed = digestOf(verified.payload);
    signers = verified.keyIds;
    checks.pass('receipt_signature', { signed_by: verified.keyIds });
  } catch (error) {
    checks.fail('receipt_signature', 'bad-signature', (error as Error).message);
    return null;
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
    return null;
  }
  if (recomputed.length !== signed.length || !recomputed.sha256.equals(signed.sha256)) {
    // Only now, on the failure path, are both byte strings made again to say where they differ.
    const signedBytes = Buffer.from(seal.receipt.payload, 'base64');
    checks.fail('receipt_recomputed', 'receipt-mismatch', {
      message: 'the signed receipt is not the receipt these records produce',
      first_difference: firstDifference(receiptBytes(receipt), signedBytes),
    });
    return null;
  }
  checks.pass('receipt_recomputed', { bytes: recomputed.length });
  completeCheck(checks, receipt);
  return { receipt, signers };
}

/**
 * Whether the receipt shows every row its records give: one that had to leave rows out past its
 * size bound does not show every change, even though the records hold it.
 */
function completeCheck(checks: Checks, receipt: Receipt): void {
  const omitted: Record<string, number> = {};
  for (const list of SHARED_LISTS) {
    const count = receipt[`${list}_omitted`]?.count;
    if (count !== undefined) omitted[list] = count;
  }
  const lists = Object.entries(omitted);
  const sections = receipt.sections_omitted ?? [];
  if (lists.length === 0 && sections.length === 0) {
    checks.pass('receipt_complete', {});
    return;
  }
  const left = [...lists.map(([l, n]) => `${n} of ${l}`), ...sections.map((s) => `all of ${s}`)];
  checks.fail('receipt_complete', 'rows-omitted', {
    omitted,
    ...(sections.length > 0 ? { sections } : {}),
    message: `the receipt leaves out what passed its size bound (${left.join(', ')}): the package's records hold it, the receipt does not show it`,
  });
}
