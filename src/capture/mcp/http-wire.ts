/**
 * The streamable-HTTP pieces `tally mcp --http` reads and writes: headers forwarded (hop-by-hop ones
 * aside), a bounded request body, the `data:` events of an event stream, the protocol revision a
 * request speaks, and what batches mean in it.
 */

import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { readBody as readLimited } from '../../core/http-body.js';

const MAX_BODY = 64 * 1024 * 1024;
const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'content-length',
]);

/**
 * The revision a peer speaks when nothing says otherwise: the streamable-HTTP transport's own spec
 * tells servers to assume 2025-03-26 for a request without `MCP-Protocol-Version` and no version
 * negotiated.
 */
export const DEFAULT_PROTOCOL_VERSION = '2025-03-26';
/** The last revision whose JSON-RPC allowed batches (2025-06-18 removed them). */
export const LAST_BATCH_VERSION = '2025-03-26';

/** Revisions are dates (`YYYY-MM-DD`), so they compare as strings. */
export function allowsBatches(version: string): boolean {
  return version <= LAST_BATCH_VERSION;
}

export function headersOut(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())) out[name] = value;
  return out;
}

/**
 * Why a POSTed body would reach the server as other text than the gateway reads, or undefined. The
 * gateway reads a body's bytes as UTF-8; a server behind a body parser that honours the request's
 * `charset` or `Content-Encoding` decodes them first (the SDK's own Express app, `express.json()`,
 * decodes `charset=utf-7`, where `+ACI-` is a quote, and inflates gzip, deflate and br). So a body
 * declaring another charset, or any encoding but `identity`, is refused, never forwarded.
 */
export function notAsRead(headers: IncomingHttpHeaders): string | undefined {
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity')
    return `unsupported content-encoding "${encoding}": the gateway reads a request body as sent, so it forwards none the server would decode first`;
  const type = headers['content-type'] ?? '';
  for (const parameter of type.split(';').slice(1)) {
    const eq = parameter.indexOf('=');
    const name = parameter
      .slice(0, eq < 0 ? undefined : eq)
      .trim()
      .toLowerCase();
    if (name !== 'charset') continue;
    const value =
      eq < 0
        ? ''
        : parameter
            .slice(eq + 1)
            .trim()
            .replace(/^"(.*)"$/, '$1')
            .toLowerCase();
    if (value !== 'utf-8' && value !== 'utf8')
      return `unsupported charset "${value}": the gateway reads a request body as UTF-8, so it forwards none the server would decode otherwise`;
  }
  return undefined;
}

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return readLimited(req, MAX_BODY, (message) => new Error(message));
}

/** Feeds `data:` events of a text/event-stream, chunk by chunk, to `onData`. */
export class EventStreamReader {
  private rest = '';
  private data: string[] = [];
  constructor(private readonly onData: (data: string) => void) {}
  push(chunk: Buffer): void {
    const text = this.rest + chunk.toString('utf8');
    const lines = text.split('\n');
    this.rest = lines.pop() ?? '';
    for (const raw of lines) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line === '') {
        if (this.data.length > 0) this.onData(this.data.join('\n'));
        this.data = [];
      } else if (line.startsWith('data:')) this.data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
  }
}

/** Answers the gateway gives itself, as event-stream events (one JSON-RPC message each). */
export function sseEvents(answers: unknown[]): Buffer {
  return Buffer.from(answers.map((a) => `event: message\ndata: ${JSON.stringify(a)}\n\n`).join(''));
}

/** A JSON answer to a batch with the gateway's own answers put in: one array, theirs first. */
export function mergedJson(local: unknown[], upstream: Buffer): Buffer | undefined {
  let value: unknown;
  try {
    value = JSON.parse(upstream.toString('utf8'));
  } catch {
    return undefined;
  }
  return Buffer.from(JSON.stringify([...local, ...(Array.isArray(value) ? value : [value])]));
}
