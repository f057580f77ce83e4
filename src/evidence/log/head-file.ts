/**
 * The chain head kept outside the log: a signed file (`<home>/heads/<session>.head.json`, under the
 * Tally home, not in the project tree) naming the last durable record's seq and digest, rewritten
 * once per group commit after the log's own fdatasync. Deleting the last lines of a log needs no
 * key; making the head agree with the shorter log does. So a log shorter than its head is refused
 * (`truncated-log`, naming the missing range), and a non-empty log whose head file is gone is
 * `head-missing`, never resumed as if nothing happened.
 *
 * The file is the DSSE envelope of the chain-head payload the hub witnesses
 * (docs/formats.md#hub-formats): `{digest, seq, session, time, type: "tally/chain-head/v1"}`.
 */
import { readFileSync } from 'node:fs';
import { mkdir, open, rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { canonicalBytes, canonicalize, parseJson } from '../../core/canonical.js';
import { signEnvelope, verifyEnvelope } from '../../core/dsse.js';
import { TallyError } from '../../core/errors.js';
import { sha256 } from '../../core/hash.js';
import { toPublicKey } from '../../core/keys.js';
import { digestRef, parseEnvelopeLine, type Signer } from '../record/codec.js';

export const HEAD_FILE_TYPE = 'tally/chain-head/v1';
export const HEAD_FILE_PAYLOAD_TYPE = 'application/vnd.tally.head+json';

/** `head-invalid`: the head file exists but is not a head this signer signed for this session. */
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

export class HeadFile {
  constructor(
    readonly path: string,
    private readonly session: string,
    private readonly signer: Signer,
  ) {}

  /** The stored head, verified; null when there is no head file. */
  read(): StoredHead | null {
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.path);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    try {
      const { payload, payloadType } = verifyEnvelope(
        parseJson(bytes),
        [toPublicKey(this.signer.privateKey)],
        {
          strict: true,
        },
      );
      if (payloadType !== HEAD_FILE_PAYLOAD_TYPE) throw new Error(`payloadType ${payloadType}`);
      const head = parseJson(payload) as Record<string, unknown>;
      if (head.type !== HEAD_FILE_TYPE || head.session !== this.session) throw new Error('not this session');
      if (!Number.isSafeInteger(head.seq) || typeof head.digest !== 'string')
        throw new Error('no seq or digest');
      return { seq: head.seq as number, digest: head.digest };
    } catch (error) {
      throw new HeadFileError(
        'head-invalid',
        `the head file ${this.path} is not a chain head of session ${this.session} signed by this ship (${(error as Error).message})`,
        { path: this.path },
      );
    }
  }

  /** Writes the head durably (temporary file, fdatasync, rename): the old head or the new, never neither. */
  async write(head: StoredHead, time = new Date()): Promise<void> {
    const payload = canonicalBytes({
      digest: head.digest,
      seq: head.seq,
      session: this.session,
      time: time.toISOString(),
      type: HEAD_FILE_TYPE,
    });
    const envelope = signEnvelope(payload, HEAD_FILE_PAYLOAD_TYPE, {
      privateKey: this.signer.privateKey,
      keyid: this.signer.keyId,
    });
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    const tmp = `${this.path}.${process.pid}.tmp`;
    const file = await open(tmp, 'w', 0o600);
    try {
      await file.write(`${canonicalize(envelope)}\n`);
      await file.datasync();
    } finally {
      await file.close();
    }
    await rename(tmp, this.path);
  }
}
