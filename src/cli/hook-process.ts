/**
 * `tally hook …` as a whole process, what bin/tally.js runs on every command hook: the shim wired
 * to the process's file descriptors. stdin is read and the answer written with synchronous calls
 * (no process.stdin/stdout streams to set up), and the process exits as soon as the answer is out,
 * waiting for no socket, timer or child. scripts/build-bundles.mjs bundles this file and its
 * imports into one CommonJS file, dist/src/cli/hook-process.cjs, so a hook loads one file and no
 * ES module loader.
 */
import { readSync, writeSync } from 'node:fs';
import { runHookShim, type ShimIo } from './hook-shim.js';

/** Writes that went to a stream (the descriptor was non-blocking and full) and are not done yet. */
const pending: Promise<void>[] = [];

async function streamedRest(chunks: Buffer[]): Promise<Buffer> {
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** All of stdin; read on the descriptor, or by the stream from where a non-blocking one ran dry. */
export function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for (;;) {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    let n: number;
    try {
      n = readSync(0, chunk, 0, chunk.length, null);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EOF') break;
      if (code !== 'EAGAIN') throw error;
      return streamedRest(chunks);
    }
    if (n === 0) break;
    chunks.push(chunk.subarray(0, n));
  }
  return Promise.resolve(Buffer.concat(chunks));
}

/** A writer to fd 1 or 2: synchronous, and once a write had to wait, through the stream in order. */
function writerTo(fd: 1 | 2): (text: string) => void {
  const stream = () => (fd === 1 ? process.stdout : process.stderr);
  let streamed = false;
  const viaStream = (bytes: Buffer) => {
    streamed = true;
    pending.push(new Promise<void>((resolve) => stream().write(bytes, () => resolve())));
  };
  return (text) => {
    let bytes = Buffer.from(text, 'utf8');
    if (streamed) return viaStream(bytes);
    while (bytes.length > 0) {
      try {
        bytes = bytes.subarray(writeSync(fd, bytes));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        // The agent stopped reading: there is no one left to answer.
        if (code === 'EPIPE') return;
        if (code !== 'EAGAIN') throw error;
        return viaStream(bytes);
      }
    }
  };
}

/**
 * Runs the shim on this process's stdin, stdout and stderr, then exits with its code. `loaders`
 * comes from bin/tally.js, which compiles the bundle of this file where import() cannot run.
 */
export function runHookProcess(argv: string[], loaders: Pick<ShimIo, 'recorderClient'> = {}): void {
  const stderr = writerTo(2);
  runHookShim(argv, { stdin: readStdin, stdout: writerTo(1), stderr, env: process.env, ...loaders })
    .then(
      (code) => code,
      (error: unknown) => {
        stderr(`tally hook: ${(error as Error).stack ?? String(error)}\n`);
        return 1;
      },
    )
    .then(async (code) => {
      await Promise.all(pending);
      process.exit(code);
    });
}
