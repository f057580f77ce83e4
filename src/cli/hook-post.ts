/**
 * One HTTP/1.1 POST to the recorder on 127.0.0.1 over a bare connection (./loopback.ts): what the
 * command shim sends on every hook. `node:http` costs the shim a millisecond more to load than the
 * request takes to build by hand, and the recorder is our own server on loopback, so the request is
 * written here (`connection: close`, one write) and the answer read back (Content-Length, chunked
 * or close-delimited bodies).
 */
import { foreignListener } from '../recorder/listener.js';
import { connectLoopback } from './loopback.js';

/** The socket failed (refused, reset, timed out): nothing, or not all, reached the recorder. */
export class RecorderUnreachable extends Error {}

export interface HookReply {
  status: number;
  text: string;
}

// A header value node:http would accept: no CR, LF or other control characters.
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

function requestHead(port: number, path: string, headers: Record<string, string>, length: number): string {
  let head = `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    if (!HEADER_VALUE.test(value)) throw new Error(`the ${name} header has a character HTTP forbids`);
    head += `${name}: ${value}\r\n`;
  }
  return `${head}content-length: ${length}\r\nconnection: close\r\n\r\n`;
}

/** A chunked body decoded, or undefined while its last chunk has not arrived. */
function dechunk(bytes: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = bytes.indexOf('\r\n', at);
    if (eol < 0) return undefined;
    const size = Number.parseInt(bytes.subarray(at, eol).toString('latin1').split(';')[0]!, 16);
    if (!Number.isInteger(size) || size < 0) throw new Error('the recorder sent a malformed chunk');
    if (size === 0) return Buffer.concat(parts);
    if (bytes.length < eol + 2 + size + 2) return undefined;
    parts.push(bytes.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
}

/**
 * The answer in `bytes` once it is whole, else undefined; `ended` says the recorder has closed its
 * side, which ends a body that has neither a length nor chunks.
 */
export function parseReply(bytes: Buffer, ended: boolean): HookReply | undefined {
  const headEnd = bytes.indexOf('\r\n\r\n');
  if (headEnd < 0) {
    if (ended) throw new Error('the recorder closed the connection before its answer');
    return undefined;
  }
  const [statusLine = '', ...lines] = bytes.subarray(0, headEnd).toString('latin1').split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  if (!status) throw new Error(`the recorder's answer is not HTTP/1.1: ${statusLine.slice(0, 80)}`);
  const fields = new Map<string, string>();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  const body = bytes.subarray(headEnd + 4);
  let whole: Buffer | undefined;
  if (/\bchunked\b/i.test(fields.get('transfer-encoding') ?? '')) whole = dechunk(body);
  else if (fields.has('content-length')) {
    const length = Number(fields.get('content-length'));
    if (!Number.isSafeInteger(length) || length < 0)
      throw new Error('the recorder sent a bad Content-Length');
    whole = body.length >= length ? body.subarray(0, length) : undefined;
  } else whole = ended ? body : undefined;
  if (whole === undefined && ended) throw new Error('the recorder closed the connection mid-answer');
  return whole === undefined ? undefined : { status: Number(status[1]), text: whole.toString('utf8') };
}

/**
 * POSTs `body` (bytes, sent as they are) to the recorder and resolves with its answer as soon as it
 * is whole, without waiting for the connection to close (it keeps no process up). Rejects with
 * RecorderUnreachable when the connection fails or `timeoutMs` passes with no whole answer, and
 * before anything is sent when another user's process listens on the port (the headers carry the
 * secret).
 */
export function postHook(
  port: number,
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  timeoutMs: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<HookReply> {
  const head = requestHead(port, path, headers, body.length);
  const foreign = foreignListener(port);
  if (foreign !== undefined) return Promise.reject(new RecorderUnreachable(foreign));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let settled = false;
    const unreachable = (why: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      connection.destroy();
      reject(new RecorderUnreachable(`the recorder on 127.0.0.1:${port} did not answer: ${why}`));
    };
    const settle = (ended: boolean) => {
      if (settled) return;
      let reply: HookReply | undefined;
      try {
        reply = parseReply(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), ended);
      } catch (error) {
        settled = true;
        clearTimeout(timer);
        connection.destroy();
        reject(error);
        return;
      }
      if (reply === undefined) return;
      settled = true;
      clearTimeout(timer);
      connection.release();
      resolve(reply);
    };
    const connection = connectLoopback(
      port,
      {
        data(chunk) {
          chunks.push(chunk);
          settle(false);
        },
        end: () => settle(true),
        error: unreachable,
      },
      env,
    );
    const timer = setTimeout(() => unreachable('timed out'), timeoutMs);
    // One write, and no half-close: node:http drops the answer to a request whose client half-closed first.
    connection.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
  });
}
