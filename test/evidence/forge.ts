/**
 * Forgeries by the key holder: the records of a real package, changed and re-signed in a fresh
 * chain with the ship key (records encoded and linked by hand), then sealed from a real log file. Every signature, link and the Merkle
 * root of the result are valid; only checks of the session's own consistency can catch it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sealLog } from '../../src/evidence/package/seal.js';
import type { AppendInput } from '../../src/evidence/record/chain.js';
import { digestRef, encodeRecord, type Signer } from '../../src/evidence/record/codec.js';
import type { EventRecord } from '../../src/evidence/record/record.js';
import { packageLines } from '../session/fixture.js';

/** The records of a package, decoded. */
export function packageRecords(bytes: Buffer): EventRecord[] {
  return packageLines(bytes)
    .slice(1, -1)
    .map((line) => {
      const envelope = JSON.parse(line.toString()) as { payload: string };
      return JSON.parse(Buffer.from(envelope.payload, 'base64').toString()) as EventRecord;
    });
}

/** A record as the chain's input again, with its time. */
export function asInput(record: EventRecord): { input: AppendInput; time: Date } {
  const { source, event, agent, decision, answers, binding, resolved, flags } = record;
  return {
    input: {
      source,
      event,
      ...(agent ? { agent } : {}),
      ...(decision ? { decision } : {}),
      ...(answers ? { answers } : {}),
      ...(binding ? { binding } : {}),
      ...(resolved ? { resolved } : {}),
      ...(flags ? { flags } : {}),
    },
    time: new Date(record.time),
  };
}

/** Re-signs `entries` as session `session`'s log in `dir` and seals it: the forged package's bytes. */
export async function forgePackage(
  dir: string,
  session: string,
  signer: Signer,
  entries: ReadonlyArray<{ input: AppendInput; time: Date }>,
): Promise<Buffer> {
  // Encoded by hand, not through RecordChain: the key holder writes whatever bytes they like,
  // including times the recorder itself would never write.
  let prev: string | null = null;
  const lines = entries.map((e, seq) => {
    const record = { v: 2, seq, time: e.time.toISOString(), session, ...e.input, prev } as EventRecord;
    const { line, digest } = encodeRecord(record, signer);
    prev = digestRef(digest);
    return line;
  });
  const logPath = join(dir, `${session}.forged.log`);
  writeFileSync(logPath, Buffer.concat(lines));
  const outPath = join(dir, `${session}.forged.tally`);
  await sealLog({ logPath, outPath, session, records: entries.length, signer, workers: 0 });
  return readFileSync(outPath);
}
