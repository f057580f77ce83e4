/**
 * The chain head kept outside the log: an authenticated file (`<home>/heads/<session>.head.json`,
 * under the Tally home, not in the project tree) naming the last durable record's seq and digest,
 * rewritten once per group commit after the log's own fdatasync. Deleting the last lines of a log
 * needs no key; making the head agree with the shorter log does. So a log shorter than its head is
 * refused (`truncated-log`, naming the missing range), and a non-empty log whose head file is gone
 * is `head-missing`, never resumed as if nothing happened.
 *
 * Each of the file's two slots holds an envelope of the chain-head payload the hub witnesses
 * (docs/formats.md#hub-formats), `{digest, seq, session, time, type: "tally/chain-head/v1"}`, and
 * a newline, padded with zero bytes. The envelope is DSSE's, authenticated by an HMAC-SHA256 of its
 * PAE under a key derived from the ship key (HKDF-SHA256, RFC 5869) instead of an Ed25519
 * signature: only a holder of the ship key ever reads a head file (the store and the repair, which
 * append with that key), so a MAC proves to them what a signature would, at a twentieth of the cost
 * of the signature it replaces on every group commit. A head signed with the ship key (the form
 * before) is still read.
 */
import { createHmac, hkdfSync, type KeyObject, timingSafeEqual } from 'node:crypto';
import { closeSync, fdatasync, fsyncSync, mkdirSync, openSync, write, writeSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { canonicalBytes, canonicalize, parseJson } from '../../core/canonical.js';
import { asEnvelope, decodeBase64, type Envelope, pae, verifyEnvelope } from '../../core/dsse.js';
import { TallyError } from '../../core/errors.js';
import { sha256 } from '../../core/hash.js';
import { toPublicKey } from '../../core/keys.js';
import { openRegularSync, readUpTo } from '../../core/regular-file.js';
import { digestRef, parseEnvelopeLine, type Signer } from '../record/codec.js';

export const HEAD_FILE_TYPE = 'tally/chain-head/v1';
export const HEAD_FILE_PAYLOAD_TYPE = 'application/vnd.tally.head+json';

/** The key id of a head's MAC: the scheme, then the ship key it is derived from. */
const MAC_KEYID_PREFIX = 'hmac-sha256:';
const MAC_KEY_INFO = 'tally/chain-head-mac/v1';
const macKeys = new WeakMap<KeyObject, Buffer>();

/** The ship key's head MAC key: HKDF-SHA256 of its Ed25519 seed, made once per key. */
function macKeyOf(privateKey: KeyObject): Buffer {
  let key = macKeys.get(privateKey);
  if (key === undefined) {
    const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d ?? '', 'base64url');
    if (seed.length !== 32) throw new HeadFileError('head-invalid', 'the ship key is not an Ed25519 key');
    key = Buffer.from(hkdfSync('sha256', seed, Buffer.alloc(0), MAC_KEY_INFO, 32));
    macKeys.set(privateKey, key);
  }
  return key;
}

function headMac(signer: Signer, payload: Uint8Array): Buffer {
  return createHmac('sha256', macKeyOf(signer.privateKey))
    .update(pae(HEAD_FILE_PAYLOAD_TYPE, payload))
    .digest();
}

/** The payload of a head envelope whose MAC is this signer's, else an error saying why not. */
function verifyMac(value: unknown, signer: Signer): Buffer {
  const envelope = asEnvelope(value);
  if (envelope.signatures.length !== 1) throw new Error('a head carries exactly one MAC');
  const [only] = envelope.signatures;
  if (only!.keyid !== `${MAC_KEYID_PREFIX}${signer.keyId}`) throw new Error('a MAC under another key');
  if (envelope.payloadType !== HEAD_FILE_PAYLOAD_TYPE) throw new Error(`payloadType ${envelope.payloadType}`);
  const payload = decodeBase64(envelope.payload, 'payload');
  const given = decodeBase64(only!.sig, 'sig');
  const expected = headMac(signer, payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw new Error('a MAC that does not verify');
  return payload;
}

/** True for an envelope whose one authenticator is a head MAC (the other form is a signature). */
function isMacEnvelope(value: unknown): boolean {
  const signatures = (value as Partial<Envelope> | null)?.signatures;
  return (
    Array.isArray(signatures) &&
    typeof signatures[0]?.keyid === 'string' &&
    signatures[0].keyid.startsWith(MAC_KEYID_PREFIX)
  );
}

/** `head-invalid`: the head file exists but is not a head of this session under this ship key. */
export class HeadFileError extends TallyError<'head-invalid'> {}

export interface StoredHead {
  seq: number;
  digest: string;
}

/** Where the head of session `session` is kept under the Tally home `home`. */
export function headFilePath(home: string, session: string): string {
  return join(home, 'heads', `${session}.head.json`);
}

/** The seq and digest of a log line (a record envelope the store just made durable). */
export function headOfLine(line: Buffer): StoredHead {
  const envelope = parseEnvelopeLine(line);
  const payload = Buffer.from(envelope.payload, 'base64');
  const record = JSON.parse(payload.toString('utf8')) as { seq: number };
  return { seq: record.seq, digest: digestRef(sha256(payload)) };
}

/**
 * Bytes per slot: one page each. The file holds two slots, written alternately (slot = seq mod 2)
 * in place, with the file kept open: a write torn by a crash spoils at most its own page, and the
 * other slot still holds the head before it. Only the first write (which creates the file) is
 * synced. A later head lost in a crash leaves an older one, which only lags the log — the safe
 * direction: a log is refused only when it is *shorter* than its head — while a cut made on a
 * running system meets the latest head, which the page cache holds. So a group commit pays one
 * MAC and one in-place write for the head, not a second sync.
 */
export const HEAD_SLOT_BYTES = 4096;

export class HeadFile {
  private fd: number | null = null;
  private created = false;
  private readonly slot = Buffer.alloc(HEAD_SLOT_BYTES);

  constructor(
    readonly path: string,
    private readonly session: string,
    private readonly signer: Signer,
  ) {}

  /** The stored head (the later of the two slots that verify); null when there is no head file. */
  read(): StoredHead | null {
    let bytes: Buffer;
    try {
      // Its two slots, from a regular file only (a FIFO in its place is refused, never waited on).
      const { fd } = openRegularSync(this.path);
      try {
        bytes = readUpTo(fd, 2 * HEAD_SLOT_BYTES);
      } finally {
        closeSync(fd);
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    if (bytes.length === 0) return null; // created, never written: no head was ever durable
    let best: StoredHead | null = null;
    let why = 'no slot holds a head';
    for (let at = 0; at < bytes.length; at += HEAD_SLOT_BYTES) {
      const slot = bytes.subarray(at, Math.min(bytes.length, at + HEAD_SLOT_BYTES));
      const end = slot.indexOf(0x0a);
      if (end <= 0) continue;
      try {
        const head = this.parse(slot.subarray(0, end));
        if (best === null || head.seq > best.seq) best = head;
      } catch (error) {
        why = (error as Error).message;
      }
    }
    if (best === null)
      throw new HeadFileError(
        'head-invalid',
        `the head file ${this.path} is not a chain head of session ${this.session} under this ship's key (${why})`,
        { path: this.path },
      );
    return best;
  }

  private parse(line: Buffer): StoredHead {
    const value = parseJson(line);
    let payload: Buffer;
    if (isMacEnvelope(value)) payload = verifyMac(value, this.signer);
    else {
      const verified = verifyEnvelope(value, [toPublicKey(this.signer.privateKey)], { strict: true });
      if (verified.payloadType !== HEAD_FILE_PAYLOAD_TYPE)
        throw new Error(`payloadType ${verified.payloadType}`);
      payload = verified.payload;
    }
    const head = parseJson(payload) as Record<string, unknown>;
    if (head.type !== HEAD_FILE_TYPE || head.session !== this.session) throw new Error('not this session');
    if (!Number.isSafeInteger(head.seq) || typeof head.digest !== 'string')
      throw new Error('no seq or digest');
    return { seq: head.seq as number, digest: head.digest };
  }

  /**
   * Writes the head into its slot: in place and not synced, except the write that creates the file
   * (synced with its directory, so a new head file is durable before its append is acknowledged).
   */
  async write(head: StoredHead, time = new Date()): Promise<void> {
    const payload = canonicalBytes({
      digest: head.digest,
      seq: head.seq,
      session: this.session,
      time: time.toISOString(),
      type: HEAD_FILE_TYPE,
    });
    const envelope: Envelope = {
      payload: payload.toString('base64'),
      payloadType: HEAD_FILE_PAYLOAD_TYPE,
      signatures: [
        {
          keyid: `${MAC_KEYID_PREFIX}${this.signer.keyId}`,
          sig: headMac(this.signer, payload).toString('base64'),
        },
      ],
    };
    const line = `${canonicalize(envelope)}\n`;
    const bytes = Buffer.byteLength(line);
    if (bytes > HEAD_SLOT_BYTES)
      throw new HeadFileError('head-invalid', `a chain head of ${bytes} bytes does not fit its slot`);
    // One slot buffer for the file's life (a head is written once per group commit, one at a time).
    const slot = this.slot;
    slot.write(line, 0, 'utf8');
    slot.fill(0, bytes);
    if (this.fd === null) {
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      let created = false;
      try {
        this.fd = openRegularSync(this.path, 'r+').fd;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        this.fd = openRegularSync(this.path, 'w+', 0o600).fd;
        created = true;
      }
      this.created = created;
    }
    const fd = this.fd;
    const at = (head.seq % 2) * HEAD_SLOT_BYTES;
    if (!this.created) {
      // Into the page cache, never synced (see HEAD_SLOT_BYTES): cheaper in place than a round trip.
      writeSync(fd, slot, 0, slot.length, at);
      return;
    }
    // A new head file is durable, name and first head, before the append is acknowledged.
    await new Promise<void>((resolve, reject) =>
      write(fd, slot, 0, slot.length, at, (error) => (error ? reject(error) : resolve())),
    );
    await new Promise<void>((resolve, reject) =>
      fdatasync(fd, (error) => (error ? reject(error) : resolve())),
    );
    const dir = openSync(dirname(this.path), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
    this.created = false;
  }

  /** Releases the open file, if any. */
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
