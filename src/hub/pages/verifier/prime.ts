/**
 * The WebCrypto pass that runs before the shared (synchronous) verifier in a browser: every DSSE
 * envelope in the package or in the hub's witnessed heads, and every signature of a signed note, is
 * checked with `crypto.subtle.verify('Ed25519', …)` under the pinned keys it could be verified
 * with, and the verdicts are recorded for the `node:crypto` seam (./browser-crypto.ts) to answer
 * from.
 */
import { Buffer } from 'buffer';
import { pae } from '../../../core/dsse.js';
import { keyId } from '../../../core/keys.js';
import { parseNote } from '../../../core/signed-note.js';
import { recordVerdict } from './browser-crypto.js';

interface Pinned {
  id: string;
  raw: Uint8Array;
  key: CryptoKey;
}

export async function importPinned(keys: readonly Uint8Array[]): Promise<Pinned[]> {
  if (globalThis.crypto?.subtle === undefined)
    throw new Error(
      'this page is not a secure context, so the browser offers no WebCrypto to check signatures: serve the hub over HTTPS (or open it on localhost)',
    );
  return Promise.all(
    keys.map(async (raw) => ({
      id: keyId(raw),
      raw,
      key: await globalThis.crypto.subtle.importKey('raw', Uint8Array.from(raw), { name: 'Ed25519' }, false, [
        'verify',
      ]),
    })),
  );
}

async function check(message: Uint8Array, pinned: Pinned, signature: Uint8Array): Promise<void> {
  let ok = false;
  try {
    ok = await globalThis.crypto.subtle.verify(
      { name: 'Ed25519' },
      pinned.key,
      Uint8Array.from(signature),
      Uint8Array.from(message),
    );
  } catch {
    ok = false;
  }
  recordVerdict(message, pinned.raw, signature, ok);
}

function isEnvelope(
  value: unknown,
): value is { payload: string; payloadType: string; signatures: unknown[] } {
  const v = value as Record<string, unknown> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.payload === 'string' &&
    typeof v.payloadType === 'string' &&
    Array.isArray(v.signatures)
  );
}

/** Every envelope in a JSON value (a record line is one; the seal holds the receipt's). */
function* envelopesIn(
  value: unknown,
  depth = 0,
): Generator<{ payload: string; payloadType: string; signatures: unknown[] }> {
  if (depth > 8 || typeof value !== 'object' || value === null) return;
  if (isEnvelope(value)) {
    yield value;
    return;
  }
  for (const child of Array.isArray(value) ? value : Object.values(value))
    yield* envelopesIn(child, depth + 1);
}

async function primeEnvelope(
  envelope: { payload: string; payloadType: string; signatures: unknown[] },
  pinned: readonly Pinned[],
): Promise<void> {
  const message = pae(envelope.payloadType, Buffer.from(envelope.payload, 'base64'));
  const work: Promise<void>[] = [];
  for (const entry of envelope.signatures) {
    const s = entry as { keyid?: unknown; sig?: unknown } | null;
    if (typeof s?.sig !== 'string') continue;
    const signature = Buffer.from(s.sig, 'base64');
    if (signature.length !== 64) continue;
    const hinted = pinned.find((p) => p.id === s.keyid);
    for (const p of hinted ? [hinted] : pinned) work.push(check(message, p, signature));
  }
  await Promise.all(work);
}

/** Checks the envelopes' signatures, a few hundred envelopes at a time. */
async function primeAll(
  envelopes: Iterable<{ payload: string; payloadType: string; signatures: unknown[] }>,
  pinned: readonly Pinned[],
): Promise<void> {
  let batch: Promise<void>[] = [];
  for (const envelope of envelopes) {
    batch.push(primeEnvelope(envelope, pinned));
    if (batch.length >= 256) {
      await Promise.all(batch);
      batch = [];
    }
  }
  await Promise.all(batch);
}

function* envelopesInLines(
  text: string,
): Generator<{ payload: string; payloadType: string; signatures: unknown[] }> {
  for (const line of text.split('\n')) {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    yield* envelopesIn(value);
  }
}

/** Checks every signature of every envelope in the package's lines under the pinned keys. */
export function primePackage(bytes: Uint8Array, pinned: readonly Pinned[]): Promise<void> {
  return primeAll(envelopesInLines(new TextDecoder().decode(bytes)), pinned);
}

/** Checks every signature of every envelope in a JSON answer (a hub's witnessed heads) under the pinned keys. */
export function primeEnvelopesIn(value: unknown, pinned: readonly Pinned[]): Promise<void> {
  return primeAll(envelopesIn(value), pinned);
}

/** Checks the signatures of a signed note (a checkpoint) under the pinned key. */
export async function primeNote(note: string, pinned: Pinned): Promise<void> {
  let parsed: ReturnType<typeof parseNote>;
  try {
    parsed = parseNote(note);
  } catch {
    return;
  }
  const message = Buffer.from(parsed.text, 'utf8');
  await Promise.all(parsed.signatures.map((s) => check(message, pinned, s.signature)));
}
