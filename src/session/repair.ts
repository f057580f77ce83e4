/**
 * `tally session repair`: a line in a live log that is not a record of its chain (a foreign line,
 * corrupt bytes, a record of another session) must not brick the project. Repair sets those bytes
 * aside into a quarantine file beside the log (as a torn tail is on open), keeps every record that
 * continues the chain, and appends a `tally.log.repaired` record naming the ranges, their size and
 * digest. It refuses — changing nothing — when setting bytes aside would drop a record the log's
 * head says was acknowledged. A head file that is gone is re-established from the log, and the
 * repaired record says so.
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { openBoundary } from '../boundary/boundary.js';
import { eventId, TALLY_SOURCE_URI } from '../boundary/prepare.js';
import { trustKeys } from '../core/dsse.js';
import { sha256 } from '../core/hash.js';
import { toPublicKey } from '../core/keys.js';
import { FileRecordStore, StoreError } from '../evidence/log/file-store.js';
import { HeadFile, HeadFileError, headFilePath, headOfLine } from '../evidence/log/head-file.js';
import { acquireLock } from '../evidence/log/lock.js';
import { ChainVerifier, LineTooLong, readLogLines } from '../evidence/log/reader.js';
import { digestRef } from '../evidence/record/codec.js';
import { type ShipSigner, signerHome } from './identity.js';
import { logPath, SessionError, type SessionInfo } from './store.js';

export interface RepairedRange {
  /** Byte offset in the log before the repair, and how many bytes (with their newline). */
  offset: number;
  bytes: number;
}

export interface RepairResult {
  /** False when the log was whole and its head present: nothing was changed. */
  repaired: boolean;
  ranges: RepairedRange[];
  bytes: number;
  /** `sha256:` of the bytes set aside, in log order. */
  digest: string | null;
  quarantinePath: string | null;
  /** The last record kept, which the chain continues from. */
  lastSeq: number;
  headMissing: boolean;
  /** The seq of the `tally.log.repaired` record. */
  seq: number | null;
}

/**
 * Reads the log once: the lines that continue the chain are copied to `keptPath` as they pass (the
 * log may be long), the ones that do not are held (they are set aside, and are few).
 */
async function scan(path: string, keptPath: string, signer: ShipSigner, session: string) {
  const verifier = new ChainVerifier(trustKeys([toPublicKey(signer.privateKey)]), session);
  const bad: Buffer[] = [];
  const ranges: RepairedRange[] = [];
  let last: Buffer | null = null;
  const out = openSync(keptPath, 'w', 0o600);
  const newline = Buffer.from('\n');
  try {
    for await (const { line, offset, torn } of readLogLines(path)) {
      let ok = false;
      if (!torn) {
        try {
          verifier.check(line, offset);
          ok = true;
        } catch {
          ok = false;
        }
      }
      if (ok) {
        writeSync(out, line);
        writeSync(out, newline);
        last = Buffer.from(line);
        continue;
      }
      const bytes = torn ? Buffer.from(line) : Buffer.concat([line, newline]);
      bad.push(bytes);
      const previous = ranges[ranges.length - 1];
      if (previous && previous.offset + previous.bytes === offset) previous.bytes += bytes.length;
      else ranges.push({ offset, bytes: bytes.length });
    }
    fsyncSync(out);
  } catch (error) {
    if (error instanceof LineTooLong)
      throw new SessionError(
        'corrupt',
        `${path} holds a line longer than any record may be (at byte ${error.offset}); it cannot be repaired in place`,
      );
    throw error;
  } finally {
    closeSync(out);
  }
  return { bad, ranges, last, count: verifier.count };
}

function writeSynced(path: string, parts: readonly Buffer[], flag: string): void {
  const fd = openSync(path, flag, 0o600);
  try {
    for (const part of parts) writeSync(fd, part);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function syncDir(path: string): void {
  const fd = openSync(dirname(path), 'r');
  fsyncSync(fd);
  closeSync(fd);
}

export async function repairSession(options: {
  state: string;
  session: SessionInfo;
  signer: ShipSigner;
  lockTimeoutMs?: number;
}): Promise<RepairResult> {
  const { session, signer } = options;
  if (session.state === 'closed')
    throw new SessionError(
      'already-closed',
      `session ${session.id} is closed: its package is what it recorded`,
    );
  const path = logPath(options.state, session.id);
  const head = new HeadFile(headFilePath(signerHome(signer), session.id), session.id, signer);
  const lock = await acquireLock(path, options.lockTimeoutMs ?? 2000);
  let found: Awaited<ReturnType<typeof scan>>;
  let headMissing = false;
  let quarantinePath: string | null = null;
  const tmp = `${path}.repair-${process.pid}.tmp`;
  try {
    found = await scan(path, tmp, signer, session.id);
    // A head file that holds no valid head (spoilt, or not this ship's) is re-established like a missing one.
    let stored: ReturnType<HeadFile['read']>;
    try {
      stored = head.read();
    } catch (error) {
      if (!(error instanceof HeadFileError)) throw error;
      stored = null;
    }
    const lastSeq = found.count - 1;
    if (stored !== null && lastSeq < stored.seq)
      throw new StoreError(
        'truncated-log',
        `repairing ${path} would leave records ${lastSeq + 1}–${stored.seq} out, and its chain head says they were recorded: nothing was changed (the log was cut or overwritten; its bytes are as they were)`,
        { path, missing: { from: lastSeq + 1, to: stored.seq } },
      );
    headMissing = stored === null && found.last !== null;
    if (found.ranges.length === 0 && !headMissing) {
      return {
        repaired: false,
        ranges: [],
        bytes: 0,
        digest: null,
        quarantinePath: null,
        lastSeq,
        headMissing,
        seq: null,
      };
    }
    if (found.ranges.length > 0) {
      // The bad bytes are durable in their own file before they leave the log.
      quarantinePath = `${path}.foreign-${found.ranges[0]!.offset}`;
      for (let n = 2; ; n++) {
        try {
          writeSynced(quarantinePath, found.bad, 'wx');
          break;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
          quarantinePath = `${path}.foreign-${found.ranges[0]!.offset}-${n}`;
        }
      }
      renameSync(tmp, path);
      syncDir(path);
    }
    if (headMissing && found.last !== null) await head.write(headOfLine(found.last));
  } finally {
    rmSync(tmp, { force: true });
    head.close();
    lock.release();
  }
  const bytes = found.bad.reduce((n, b) => n + b.length, 0);
  const digest = bytes > 0 ? digestRef(sha256(Buffer.concat(found.bad))) : null;
  const lastSeq = found.count - 1;
  const store = await FileRecordStore.open(path, { head });
  try {
    const boundary = openBoundary({
      session: { id: session.id, root: session.root },
      store,
      signer,
      certificate: null,
      registration: null,
      harness: { env: {} },
    });
    const { seq } = await boundary.note({
      source: 'recorder',
      event: {
        id: eventId(),
        type: 'tally.log.repaired',
        time: new Date().toISOString(),
        source: TALLY_SOURCE_URI,
        session: { id: session.id },
        extensions: {
          'dev.tally.repaired': {
            ranges: found.ranges,
            bytes,
            digest,
            quarantine: quarantinePath === null ? null : basename(quarantinePath),
            after_seq: lastSeq,
            head_missing: headMissing,
          },
        },
      },
    });
    await boundary.close();
    return { repaired: true, ranges: found.ranges, bytes, digest, quarantinePath, lastSeq, headMissing, seq };
  } finally {
    await store.close();
  }
}
