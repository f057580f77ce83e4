/**
 * The HTTP part every scripted model API shares: a server on 127.0.0.1 at a free port that records
 * each request (method, path, headers, body) and hands it to the API's handler.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Script, type Step, stepAt, stepIndex, threadOf } from './script.js';

export interface ModelRequest {
  method: string;
  /** Path with query, as the agent sent it. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The JSON body parsed, or the raw text when it is not JSON. */
  body: unknown;
  /** When it arrived (ms since the epoch): to see where an agent spends its time. */
  receivedAt: number;
  /** Set by the handler: the conversation thread and step this request was answered with. */
  thread?: string;
  step?: number;
}

export interface ModelServer {
  /** The base URL, e.g. http://127.0.0.1:40123 (no trailing slash, no path). */
  url: string;
  requests: ModelRequest[];
  /** Requests the handler could not answer (unknown path or shape), answered 404/400. */
  unexpected: ModelRequest[];
  close(): Promise<void>;
}

export type Handler = (req: ModelRequest, res: ServerResponse) => Promise<void> | void;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startModelServer(handler: Handler): Promise<ModelServer> {
  const requests: ModelRequest[] = [];
  const unexpected: ModelRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const raw = await readBody(req);
      let body: unknown = raw;
      try {
        body = raw === '' ? undefined : (JSON.parse(raw) as unknown);
      } catch {
        // Not JSON: keep the text.
      }
      const record: ModelRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        receivedAt: Date.now(),
      };
      requests.push(record);
      try {
        await handler(record, res);
      } catch (error) {
        unexpected.push(record);
        if (!res.headersSent) res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(error) } }));
      }
    })();
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    unexpected,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes a whole SSE stream and ends the response. */
export function writeSse(
  res: ServerResponse,
  events: { event?: string; data: unknown }[],
  done?: string,
): void {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  for (const { event, data } of events) {
    if (event !== undefined) res.write(`event: ${event}\n`);
    res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
  }
  if (done !== undefined) res.write(`data: ${done}\n\n`);
  res.end();
}

export function writeJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

/**
 * Picks the step for a conversation (thread by its first user text, step by its tool results) and
 * runs the script's beforeStep once per (thread, step), before the answer is sent.
 */
export interface Picked {
  thread: string;
  k: number;
  step: Step;
  /** A prefix for ids of this step's tool calls, unique per thread and step. */
  idPrefix: string;
}

export function stepPicker(script: Script): (firstUserText: string, results: number) => Promise<Picked> {
  const fired = new Set<string>();
  return async (firstUserText, results) => {
    const { name, steps } = threadOf(script, firstUserText);
    const k = stepIndex(steps, results);
    const key = `${name}\u0000${k}`;
    if (script.beforeStep && !fired.has(key)) {
      fired.add(key);
      await script.beforeStep(k, name);
    }
    return {
      thread: name,
      k,
      step: stepAt(script, steps, k),
      idPrefix: `${name === 'main' ? 'm' : shortHash(name)}_${k}`,
    };
  };
}

/** A JSON object's property as a record, or undefined. Wire data is parsed, then trusted. */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A short stable tag for a thread name, for tool call ids (which agents restrict to [A-Za-z0-9_-]). */
function shortHash(text: string): string {
  let h = 5381;
  for (let i = 0; i < text.length; i++) h = ((h * 33) ^ text.charCodeAt(i)) >>> 0;
  return `t${h.toString(36)}`;
}
