/**
 * A signature-checking worker: takes a batch of record lines, runs `checkLine` on each (parse,
 * Ed25519 signature, canonical payload) and hands back the payloads and their digests, stopping at
 * the first line that fails. Order-dependent checks stay on the main thread (record-pipeline.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { trustKeys } from '../core/dsse.js';
import { sha256 } from '../core/hash.js';
import { checkLine } from './log-reader.js';
import type { BatchRequest, BatchResult } from './record-pipeline.js';

const trusted = trustKeys((workerData as { keys: Uint8Array[] }).keys);

parentPort!.on('message', (request: BatchRequest) => {
  const lines = Buffer.from(request.lines.buffer, request.lines.byteOffset, request.lines.byteLength);
  const payloads: Buffer[] = [];
  const digests = Buffer.allocUnsafe(request.ends.length * 32);
  const keyIds: string[] = [];
  let failure: BatchResult['failure'];
  let start = 0;
  for (let i = 0; i < request.ends.length; i++) {
    const end = request.ends[i]!;
    const checked = checkLine(lines.subarray(start, end), trusted);
    start = end;
    if (!checked.ok) {
      failure = { index: i, check: checked.check, message: checked.message };
      break;
    }
    payloads.push(checked.payload);
    sha256(checked.payload).copy(digests, i * 32);
    keyIds.push(checked.keyIds.join('\n'));
  }
  const payloadEnds = new Uint32Array(payloads.length);
  let at = 0;
  payloads.forEach((p, i) => {
    at += p.length;
    payloadEnds[i] = at;
  });
  const packed = new Uint8Array(at);
  at = 0;
  for (const p of payloads) {
    packed.set(p, at);
    at += p.length;
  }
  const result: BatchResult = {
    id: request.id,
    payloads: packed,
    payloadEnds,
    digests: new Uint8Array(digests.buffer, digests.byteOffset, payloads.length * 32),
    keyIds,
    ...(failure ? { failure } : {}),
  };
  parentPort!.postMessage(result, [packed.buffer, payloadEnds.buffer]);
});
