/**
 * C2SP signed notes (c2sp.org/signed-note) with Ed25519 signatures: a UTF-8 text ending in a
 * newline, a blank line, then one or more lines `— <key name> base64(key ID || signature)`.
 *
 * The key ID is the first four bytes (big-endian) of SHA-256(name || 0x0A || 0x01 || public key);
 * a verifier key is written `<name>+<8 hex key ID>+<base64(0x01 || public key)>`, the form Go's
 * sumdb/note reads. Verification follows the spec: signatures from unknown keys are ignored, a
 * known key whose signature fails rejects the note, and a note no known key verified is rejected.
 */
import { type KeyObject, sign, verify } from 'node:crypto';
import { TallyError } from './errors.js';
import { sha256 } from './hash.js';
import { rawPublicKey, toPublicKey } from './keys.js';

export type NoteErrorCode = 'malformed' | 'bad-name' | 'bad-key' | 'bad-signature' | 'unverified';

export class NoteError extends TallyError<NoteErrorCode> {}

/** The signature type byte of Ed25519 in the signed-note registry. */
export const NOTE_ED25519 = 0x01;
/** Go's sumdb/note refuses more than 100 signatures; so do we. */
export const MAX_NOTE_SIGNATURES = 100;
export const MAX_NOTE_BYTES = 1 << 20;
const DASH = '\u2014 ';

export interface NoteVerifier {
  name: string;
  /** uint32 key ID. */
  keyId: number;
  publicKey: KeyObject;
}

export interface NoteSignature {
  name: string;
  keyId: number;
  /** The signature bytes after the four key ID bytes. */
  signature: Buffer;
}

export interface OpenedNote {
  text: string;
  /** The known keys whose signatures verified, in note order. */
  verified: { name: string; keyId: number }[];
  /** Signatures from keys the caller did not name (ignored, as the spec requires). */
  unknown: NoteSignature[];
}

/** Key names: non-empty, no Unicode spaces, no '+'. */
export function isNoteKeyName(name: string): boolean {
  return name.length > 0 && !/[\s+]/u.test(name) && name.isWellFormed();
}

function checkName(name: string): void {
  if (!isNoteKeyName(name))
    throw new NoteError('bad-name', `note key name ${JSON.stringify(name)} is empty or has a space or '+'`);
}

/** SHA-256(name || 0x0A || 0x01 || 32-byte key)[:4], big-endian. */
export function noteKeyId(name: string, publicKey: KeyObject | Uint8Array): number {
  checkName(name);
  const raw = rawPublicKey(publicKey);
  const hash = sha256(Buffer.concat([Buffer.from(name, 'utf8'), Buffer.from([0x0a, NOTE_ED25519]), raw]));
  return hash.readUInt32BE(0);
}

/** The verifier key text `<name>+<hex key ID>+<base64(0x01 || key)>`. */
export function noteVerifierKey(name: string, publicKey: KeyObject | Uint8Array): string {
  const raw = rawPublicKey(publicKey);
  const id = noteKeyId(name, raw).toString(16).padStart(8, '0');
  return `${name}+${id}+${Buffer.concat([Buffer.from([NOTE_ED25519]), raw]).toString('base64')}`;
}

export function parseNoteVerifierKey(vkey: string): NoteVerifier {
  // The base64 key may itself hold '+': split at the first two only, as Go's sumdb/note does.
  const first = vkey.indexOf('+');
  const second = vkey.indexOf('+', first + 1);
  if (first < 0 || second < 0)
    throw new NoteError('bad-key', 'a verifier key is <name>+<hex id>+<base64 key>');
  const [name, hex, b64] = [vkey.slice(0, first), vkey.slice(first + 1, second), vkey.slice(second + 1)];
  checkName(name);
  if (!/^[0-9a-f]{8}$/.test(hex)) throw new NoteError('bad-key', 'the verifier key ID is not 8 hex digits');
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.toString('base64') !== b64 || bytes.length !== 33 || bytes[0] !== NOTE_ED25519)
    throw new NoteError('bad-key', 'the verifier key is not base64 of 0x01 and a 32-byte Ed25519 key');
  const publicKey = toPublicKey(bytes.subarray(1));
  const keyId = Number.parseInt(hex, 16);
  if (noteKeyId(name, publicKey) !== keyId)
    throw new NoteError('bad-key', 'the verifier key ID does not match its name and key');
  return { name, keyId, publicKey };
}

function checkText(text: string): void {
  if (!text.endsWith('\n')) throw new NoteError('malformed', 'note text must end in a newline');
  if (!text.isWellFormed()) throw new NoteError('malformed', 'note text is not valid UTF-8');
  if (/[\u0000-\u0009\u000b-\u001f]/.test(text))
    throw new NoteError('malformed', 'note text has a control character other than newline');
}

/** Signs `text` (which must end in a newline) and returns the whole note. */
export function signNote(text: string, name: string, privateKey: KeyObject): string {
  checkText(text);
  if (text.includes('\n\n')) throw new NoteError('malformed', 'note text must not contain a blank line');
  const keyId = noteKeyId(name, privateKey);
  const id = Buffer.alloc(4);
  id.writeUInt32BE(keyId, 0);
  const signature = sign(null, Buffer.from(text, 'utf8'), privateKey);
  return `${text}\n${DASH}${name} ${Buffer.concat([id, signature]).toString('base64')}\n`;
}

/** Splits a note into its text and signature lines, checking the grammar only. */
export function parseNote(note: string | Uint8Array): { text: string; signatures: NoteSignature[] } {
  const bytes = typeof note === 'string' ? Buffer.from(note, 'utf8') : Buffer.from(note);
  if (bytes.length > MAX_NOTE_BYTES) throw new NoteError('malformed', 'note is larger than 1 MiB');
  const whole = bytes.toString('utf8');
  if (!Buffer.from(whole, 'utf8').equals(bytes)) throw new NoteError('malformed', 'note is not valid UTF-8');
  checkText(whole);
  const split = whole.lastIndexOf('\n\n');
  if (split < 0) throw new NoteError('malformed', 'note has no blank line before its signatures');
  const text = whole.slice(0, split + 1);
  const lines = whole.slice(split + 2, -1).split('\n');
  if (lines.length > MAX_NOTE_SIGNATURES)
    throw new NoteError('malformed', `note has more than ${MAX_NOTE_SIGNATURES} signatures`);
  const signatures = lines.map((line, i) => {
    const match = /^\u2014 (\S+) (\S+)$/u.exec(line);
    if (!match) throw new NoteError('malformed', `signature line ${i + 1} is not '— <name> <base64>'`);
    const [, name, b64] = match as unknown as [string, string, string];
    const raw = Buffer.from(b64, 'base64');
    if (!isNoteKeyName(name) || raw.toString('base64') !== b64 || raw.length < 5)
      throw new NoteError('malformed', `signature line ${i + 1} has a bad name or signature encoding`);
    return { name, keyId: raw.readUInt32BE(0), signature: raw.subarray(4) };
  });
  return { text, signatures };
}

/** Opens a note with the verifiers the caller trusts; throws unless one of them verified it. */
export function openNote(note: string | Uint8Array, verifiers: readonly NoteVerifier[]): OpenedNote {
  const { text, signatures } = parseNote(note);
  const message = Buffer.from(text, 'utf8');
  const verified: OpenedNote['verified'] = [];
  const unknown: NoteSignature[] = [];
  const seen = new Set<string>();
  for (const sig of signatures) {
    const key = verifiers.find((v) => v.name === sig.name && v.keyId === sig.keyId);
    if (!key) {
      unknown.push(sig);
      continue;
    }
    const tag = `${sig.name}+${sig.keyId}`;
    if (seen.has(tag)) continue;
    seen.add(tag);
    if (sig.signature.length !== 64 || !verify(null, message, key.publicKey, sig.signature))
      throw new NoteError('bad-signature', `the signature of ${sig.name} does not verify`, {
        name: sig.name,
      });
    verified.push({ name: sig.name, keyId: sig.keyId });
  }
  if (verified.length === 0)
    throw new NoteError('unverified', 'no trusted key signed this note', {
      names: signatures.map((s) => s.name),
    });
  return { text, verified, unknown };
}
