/**
 * What a page shows of a package, read from its bytes without trusting them: the header's session
 * and signer keys, and the receipt the seal carries. Verification is the panel's job (in the
 * browser); this only reads, and says what it could not read.
 */
import { keyId } from '../../core/keys.js';
import { arr, type Json, obj, str } from './read.js';

export interface PackageView {
  session: string | null;
  /** The signer keys the header lists: id and base64 raw key. */
  keys: { id: string; publicKey: string }[];
  receipt: Json | null;
  /** Why the receipt could not be read, when it could not. */
  problem: string | null;
}

/** The first or the last non-empty line, found without decoding the records between them. */
function lineAt(bytes: Buffer, which: 'first' | 'last'): string {
  if (which === 'first') {
    const nl = bytes.indexOf(0x0a);
    return bytes.subarray(0, nl < 0 ? bytes.length : nl).toString('utf8');
  }
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0x0a) end--;
  const start = bytes.lastIndexOf(0x0a, end - 1) + 1;
  return bytes.subarray(start, end).toString('utf8');
}

export function viewPackage(bytes: Buffer): PackageView {
  const view: PackageView = { session: null, keys: [], receipt: null, problem: null };
  try {
    const header = obj(JSON.parse(lineAt(bytes, 'first')) as Json);
    view.session = str(header.session) ?? null;
    for (const k of arr(header.keys)) {
      const publicKey = str(obj(k).public_key);
      if (publicKey === undefined) continue;
      const raw = Buffer.from(publicKey, 'base64');
      if (raw.length === 32) view.keys.push({ id: keyId(raw), publicKey });
    }
  } catch {
    view.problem = 'the package header cannot be read';
  }
  try {
    const seal = obj(JSON.parse(lineAt(bytes, 'last')) as Json);
    const payload = str(obj(seal.receipt).payload);
    if (payload === undefined) throw new Error('no receipt');
    view.receipt = JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as Json;
  } catch {
    view.problem ??= 'the receipt in the package seal cannot be read';
  }
  return view;
}
