/**
 * A signature-checking worker: takes a batch of record lines, runs `checkLine` on each (parse,
 * Ed25519 signature, canonical payload) and hands back the payloads and their digests, stopping at
 * the first line that fails. Order-dependent checks stay on the main thread (record-pipeline.ts).
 * Result buffers are reused once the main thread hands them back, and each request's buffer goes
 * back with its result, so no buffer is allocated per batch once the pool is warm.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { trustKeys } from '../../core/dsse.js';
import { sha256 } from '../../core/hash.js';
import { type BatchRequest, type BatchResult, SPARE_BUFFERS, takeBuffer } from './pipeline.js';
import { checkLine } from './reader.js';

const trusted = trustKeys((workerData as { keys: Uint8Array[] }).keys);
const spares: Uint8Array[] = [];

parentPort!.on('message', (request: BatchRequest) => {
  for (const buffer of request.returned) if (spares.length < SPARE_BUFFERS) spares.push(buffer);
  const lines = Buffer.from(request.lines.buffer, request.lines.byteOffset, request.lines.byteLength);
  const payloads: Buffer[] = [];
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
    keyIds.push(checked.keyIds.join('\n'));
  }
  const digestBytes = payloads.length * 32;
  const payloadEnds = new Uint32Array(payloads.length);
  let at = 0;
  payloads.forEach((p, i) => {
    at += p.length;
    payloadEnds[i] = at;
  });
  const data = takeBuffer(spares, digestBytes + at);
  const out = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  at = digestBytes;
  payloads.forEach((p, i) => {
    sha256(p).copy(out, i * 32);
    out.set(p, at);
    at += p.length;
  });
  const result: BatchResult = {
    id: request.id,
    data,
    payloadEnds,
    keyIds,
    ...(failure ? { failure } : {}),
    spare: request.lines,
  };
  parentPort!.postMessage(result, [
    data.buffer as ArrayBuffer,
    payloadEnds.buffer,
    request.lines.buffer as ArrayBuffer,
  ]);
});
