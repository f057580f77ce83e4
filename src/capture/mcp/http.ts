/**
 * `tally mcp --http URL`: a local streamable-HTTP endpoint in front of a remote MCP server. Every
 * request is forwarded to URL with its body's bytes and its headers (hop-by-hop ones aside), and
 * every answer — a JSON body or an event stream — comes back as the bytes the server sent, read on
 * the way for the answers to calls. A POSTed `tools/call` is judged first, as over stdio: a denied
 * call is answered here and never reaches the server.
 */
import {
  createServer,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import { toolKindHint } from '../../boundary/tool-kind.js';
import { parseJson } from '../../core/canonical.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import {
  afterEvent,
  beforeEvent,
  type McpCall,
  type McpServerIdentity,
  qualifiedName,
  toolsEvent,
} from './events.js';
import { idKey, readCall } from './messages.js';
import type { GatewaySink } from './relay.js';

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

export interface HttpGatewayOptions {
  upstream: URL;
  server: McpServerIdentity;
  harnessSession: string;
  sink: GatewaySink;
  onWarning?: (message: string) => void;
}

export interface HttpGateway {
  server: Server;
  /** Waits until every answer seen so far is recorded. */
  drain(): Promise<void>;
}

function headersOut(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())) out[name] = value;
  return out;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Error(`the body is larger than ${MAX_BODY} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Feeds `data:` events of a text/event-stream, chunk by chunk, to `onData`. */
class EventStreamReader {
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

export function createHttpGateway(o: HttpGatewayOptions): HttpGateway {
  const pending = new Map<string, McpCall & { started: bigint }>();
  const listing = new Set<string>();
  const kinds = new Map<string, string | undefined>();
  const inFlight = new Set<Promise<void>>();
  let calls = 0;
  const track = (promise: Promise<void>) => {
    const tracked = promise
      .catch((error: Error) => o.onWarning?.(`a record could not be written: ${error.message}`))
      .finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };

  const answered = (session: string, message: unknown) => {
    if (!isJsonObject(message) || message.method !== undefined) return;
    const key = `${session}\0${idKey(message.id) ?? ''}`;
    const call = pending.get(key);
    if (call) {
      pending.delete(key);
      const ms = Number(process.hrtime.bigint() - call.started) / 1e6;
      const bytes = JSON.stringify(message).length;
      const end =
        'error' in message
          ? {
              type: 'error' as const,
              code: isJsonObject(message.error) ? message.error.code : undefined,
              message:
                isJsonObject(message.error) && typeof message.error.message === 'string'
                  ? message.error.message
                  : '',
              bytes,
            }
          : { type: 'result' as const, result: message.result, bytes };
      track(o.sink.observe(afterEvent(o.server, o.harnessSession, call, end, ms, new Date())));
    } else if (listing.delete(key) && isJsonObject(message.result) && Array.isArray(message.result.tools)) {
      for (const tool of message.result.tools)
        if (isJsonObject(tool) && typeof tool.name === 'string')
          kinds.set(tool.name, toolKindHint(qualifiedName(o.server.name, tool.name), tool.inputSchema));
      track(o.sink.observe(toolsEvent(o.server, o.harnessSession, message.result.tools, new Date())));
    }
  };

  const reply = (res: import('node:http').ServerResponse, status: number, value: unknown) => {
    const body = Buffer.from(JSON.stringify(value));
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(body.length) });
    res.end(body);
  };

  /** Judges a POSTed message: the bytes to forward, or the answer given here. */
  async function judge(
    body: Buffer,
    session: string,
  ): Promise<{ forward: Buffer } | { status: number; answer: unknown }> {
    let message: unknown;
    try {
      message = parseJson(body);
    } catch (error) {
      return {
        status: 400,
        answer: {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32700, message: `parse error: ${(error as Error).message}` },
        },
      };
    }
    const isCall = (m: unknown) => isJsonObject(m) && m.method === 'tools/call' && 'id' in m;
    if (Array.isArray(message)) {
      if (message.some(isCall))
        return {
          status: 400,
          answer: {
            jsonrpc: '2.0',
            id: null,
            error: {
              code: -32600,
              message: 'invalid request: a batch with tools/call is not relayed; send calls one at a time',
            },
          },
        };
      return { forward: body };
    }
    if (!isJsonObject(message)) return { forward: body };
    if (message.method === 'tools/list' && idKey(message.id) !== undefined)
      listing.add(`${session}\0${idKey(message.id)}`);
    if (!isCall(message)) return { forward: body };
    const id = message.id;
    const read = readCall(message);
    if ('error' in read)
      return {
        status: 200,
        answer: {
          jsonrpc: '2.0',
          id: idKey(id) === undefined ? null : id,
          error: { code: read.error[0], message: read.error[1] },
        },
      };
    calls += 1;
    const kind = kinds.get(read.toolName);
    const call: McpCall & { started: bigint } = {
      callId: `${o.harnessSession}-${calls}`,
      requestId: id as string | number,
      toolName: read.toolName,
      input: read.input,
      ...(kind ? { kind } : {}),
      started: 0n,
    };
    let verdict: Awaited<ReturnType<GatewaySink['decide']>>;
    try {
      verdict = await o.sink.decide(beforeEvent(o.server, o.harnessSession, call, new Date()));
    } catch (error) {
      verdict = {
        allow: false,
        reason: `the call could not be judged and recorded: ${(error as Error).message}`,
      };
    }
    if (!verdict.allow)
      return {
        status: 200,
        answer: {
          jsonrpc: '2.0',
          id,
          result: { content: [{ type: 'text', text: verdict.reason ?? 'denied by policy' }], isError: true },
        },
      };
    if (verdict.result !== undefined)
      return { status: 200, answer: { jsonrpc: '2.0', id, result: verdict.result } };
    call.started = process.hrtime.bigint();
    if (verdict.input !== undefined) call.input = verdict.input;
    pending.set(`${session}\0${idKey(id)}`, call);
    if (verdict.input === undefined) return { forward: body };
    const params = message.params as JsonObject;
    return {
      forward: Buffer.from(JSON.stringify({ ...message, params: { ...params, arguments: verdict.input } })),
    };
  }

  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const session = typeof req.headers['mcp-session-id'] === 'string' ? req.headers['mcp-session-id'] : '';
      let forward = body;
      if (req.method === 'POST' && body.length > 0) {
        const judged = await judge(body, session);
        if (!('forward' in judged)) return reply(res, judged.status, judged.answer);
        forward = judged.forward;
      }
      const target = new URL(o.upstream);
      const local = new URL(req.url ?? '/', 'http://127.0.0.1');
      target.search = local.search;
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const upstream = send(target, {
        method: req.method,
        headers: {
          ...headersOut(req.headers),
          ...(forward.length > 0 || req.method === 'POST'
            ? { 'content-length': String(forward.length) }
            : {}),
        },
      });
      upstream.on('response', (answer) => {
        res.writeHead(answer.statusCode ?? 502, headersOut(answer.headers));
        const type = String(answer.headers['content-type'] ?? '');
        const returned =
          typeof answer.headers['mcp-session-id'] === 'string' ? answer.headers['mcp-session-id'] : session;
        const stream = type.includes('text/event-stream')
          ? new EventStreamReader((data) => {
              try {
                answered(returned, JSON.parse(data));
              } catch {}
            })
          : null;
        const json: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => {
          res.write(chunk);
          if (stream) stream.push(chunk);
          else if (type.includes('application/json')) json.push(chunk);
        });
        answer.on('end', () => {
          res.end();
          if (json.length > 0)
            try {
              const value = JSON.parse(Buffer.concat(json).toString('utf8')) as unknown;
              for (const m of Array.isArray(value) ? value : [value]) answered(returned, m);
            } catch {}
        });
        answer.on('error', () => res.destroy());
      });
      upstream.on('error', (error) => {
        o.onWarning?.(`the server at ${o.upstream.href} did not answer: ${error.message}`);
        if (!res.headersSent)
          reply(res, 502, {
            jsonrpc: '2.0',
            id: null,
            error: { code: -32603, message: `the MCP server did not answer: ${error.message}` },
          });
        else res.destroy();
      });
      res.on('close', () => {
        if (!res.writableFinished) upstream.destroy();
      });
      upstream.end(forward);
    })().catch((error: Error) => {
      o.onWarning?.(error.message);
      if (!res.headersSent)
        reply(res, 400, { jsonrpc: '2.0', id: null, error: { code: -32600, message: error.message } });
    });
  });
  return {
    server,
    async drain() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
