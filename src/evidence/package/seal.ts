/**
 * Sealing a session log into its package by streaming: the log is read once, each line is checked
 * (on a worker pool for long logs), folded into the Merkle root and the receipt, and copied to a
 * temporary package file; the seal line goes last, then the file is synced and renamed into place
 * (and the temporary files of sealing processes that died before their rename are removed).
 * Memory is bounded by the receipt, not by the log. Same bytes as `buildPackage`.
 */
import { open, rename, rm } from 'node:fs/promises';
import { digestParts } from '../../core/hash.js';
import type { PublicKeyInput } from '../../core/keys.js';
import { toPublicKey } from '../../core/keys.js';
import { removeStaleTemps } from '../../core/stale-temps.js';
import { createPipeline, defaultWorkers } from '../log/pipeline.js';
import { ChainVerifier, readLogLines } from '../log/reader.js';
import { type Receipt, ReceiptComposer } from '../receipt/receipt.js';
import type { Signer } from '../record/codec.js';
import { packageHeader, packageLine, packageSeal } from './build.js';
import {
  PackageError,
  type PackageFormat,
  type PackageHeader,
  type PackageSeal,
  recordLeaf,
  recordVersionOf,
} from './grammar.js';
import { MerkleAccumulator } from './merkle-accumulator.js';

export interface SealOptions {
  logPath: string;
  /** Where the package goes; written to a temporary file beside it, then renamed. */
  outPath: string;
  session: string;
  /** Records the log holds: the header, which names the count, is written before they are read. */
  records: number;
  signer: Signer;
  /** Keys the log's records may be signed with; default the signer's own. */
  trusted?: readonly PublicKeyInput[];
  /** Worker threads for signature checks; default as for verification. */
  workers?: number;
  mode?: number;
  /** Progress while a long log is read: records so far, of the total. */
  onProgress?: (records: number, total: number) => void;
  /** The package format; it must be the one the log's records have (v2 records: v2). Default v2. */
  format?: PackageFormat;
}

export interface SealResult {
  receipt: Receipt;
  header: PackageHeader;
  seal: PackageSeal;
  records: number;
  bytes: number;
  /** `sha256:<hex>` of the package's bytes, taken as they were written. */
  digest: string;
}

const WRITE_CHUNK = 1 << 20;

export async function sealLog(options: SealOptions): Promise<SealResult> {
  const { signer, records } = options;
  if (!Number.isSafeInteger(records) || records < 1)
    throw new PackageError('truncated', 'a package needs at least one record');
  const format = options.format ?? 'v2';
  const header = packageHeader(options.session, records, signer, format);
  const tmp = `${options.outPath}.${process.pid}.tmp`;
  // Made new: whatever stood at the name (a FIFO would hold the open forever) is removed first.
  await rm(tmp, { force: true });
  const file = await open(tmp, 'wx', options.mode ?? 0o644);
  const merkle = new MerkleAccumulator();
  const composer = new ReceiptComposer();
  const pipeline = createPipeline({
    chain: new ChainVerifier(
      options.trusted ?? [toPublicKey(signer.privateKey)],
      options.session,
      recordVersionOf(format),
    ),
    workers: options.workers ?? defaultWorkers(records),
    onRecord: (checked) => {
      merkle.add(recordLeaf(checked.digest, format));
      composer.add(checked.record);
      if (composer.records % 10_000 === 0) options.onProgress?.(composer.records, records);
    },
  });
  // One write buffer, filled and written again and again: a fresh buffer per write would only be
  // freed at the next garbage collection, so memory would grow with the log.
  const out = Buffer.allocUnsafe(WRITE_CHUNK);
  let used = 0;
  let written = 0;
  const hash = digestParts();
  const writeAll = async (bytes: Buffer): Promise<void> => {
    hash.update(bytes);
    for (let at = 0; at < bytes.length; ) {
      const { bytesWritten } = await file.write(bytes, at, bytes.length - at);
      at += bytesWritten;
    }
    written += bytes.length;
  };
  const flush = async (): Promise<void> => {
    if (used === 0) return;
    await writeAll(out.subarray(0, used));
    used = 0;
  };
  const put = async (bytes: Buffer): Promise<void> => {
    if (used + bytes.length > WRITE_CHUNK) await flush();
    if (bytes.length > WRITE_CHUNK) return writeAll(bytes);
    bytes.copy(out, used);
    used += bytes.length;
  };
  const newline = Buffer.from('\n');
  try {
    await put(packageLine(header));
    let seen = 0;
    for await (const { line, offset, torn } of readLogLines(options.logPath)) {
      if (torn)
        throw logError(`torn last line at byte ${offset}: ${line.length} bytes with no final newline`);
      if (seen === records) throw logError(`the log holds more than the ${records} records expected`);
      seen += 1;
      const room = pipeline.push(line, offset);
      if (room !== undefined) await room;
      if (pipeline.failed) break;
      await put(line);
      await put(newline);
    }
    const issue = await pipeline.drain();
    if (issue !== null) {
      throw new PackageError(
        'log',
        `session log ${options.logPath} does not verify (${issue.check} at seq ${issue.seq}, byte ${issue.offset}): ${issue.message}`,
        { ...issue },
      );
    }
    if (seen !== records) throw logError(`the log holds ${seen} records, ${records} expected`);
    const receipt = composer.finish(merkle.root().toString('hex'));
    const seal = packageSeal(receipt, records, signer, format);
    await put(packageLine(seal));
    await flush();
    await file.sync();
    await file.close();
    await rename(tmp, options.outPath);
    // What a sealing process killed before its rename left beside the package.
    await removeStaleTemps(options.outPath);
    return { receipt, header, seal, records, bytes: written, digest: hash.digest() };
  } catch (error) {
    await file.close().catch(() => {});
    await rm(tmp, { force: true });
    throw error;
  } finally {
    await pipeline.close();
  }
}

function logError(message: string): PackageError {
  return new PackageError('log', message);
}
