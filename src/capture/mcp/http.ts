/**
 * `tally mcp --http URL`: a local streamable-HTTP endpoint in front of a remote MCP server. Every
 * request is forwarded to URL with its body's bytes and its headers (hop-by-hop ones aside), and
 * every answer — a JSON body or an event stream — comes back as the bytes the server sent, read on
 * the way for the answers to calls. A POSTed `tools/call` is judged first, as over stdio: a denied
 * call is answered here and never reaches the server. In a batch (protocol revisions up to
 * 2025-03-26 allow them) every call is judged the same way; the denied ones are answered here, in
 * their place among the server's answers, and the rest of the batch goes on.
 *
 * An answer is read only on the exchange that carried its request: the response to that POST. So a
 * request sent in another POST with the same id (JSON-RPC's rule of unique ids in flight broken, or
 * two clients of a server without sessions) never has its answer taken for a call's, and a call
 * whose exchange ends without its answer is recorded as not answered (`cancelled`, saying so)
 * rather than left open. An answer a server sends elsewhere (on a GET stream it resumes) is
 * relayed, not read.
 */
import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parseJson } from '../../core/canonical.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { afterEvent, beforeEvent, type McpCall, type McpServerIdentity, toolsEvent } from './events.js';
import {
  allowsBatches,
  DEFAULT_PROTOCOL_VERSION,
  EventStreamReader,
  headersOut,
  mergedJson,
  notAsRead,
  readBody,
  sseEvents,
} from './http-wire.js';
import {
  ambiguousKeys,
  ambiguousMessage,
  idInUseText,
  idKey,
  isCall,
  isUnanswerableCall,
  type LearnedTool,
  learnTools,
  readCall,
  singleLine,
  UNANSWERABLE_CALL,
  unjudgedMessages,
} from './messages.js';
import type { GatewaySink } from './relay.js';

export interface HttpGatewayOptions {
  upstream: URL;
  server: McpServerIdentity;
  harnessSession: string;
  sink: GatewaySink;
  onWarning?: (message: string) => void;
}

export interface HttpGateway {
  server: Server;
  /** Records the calls still open as not answered, then waits until every answer seen so far is recorded. */
  drain(): Promise<void>;
}

/** What the gateway does with a POSTed body: forward it (with answers of its own to add), or answer it. */
type Judged = { forward: Buffer; local: unknown[] } | { status: number; answer: unknown };

/** One HTTP exchange's requests whose answers are read, by id key: only its response answers them. */
interface Exchange {
  calls: Map<string, McpCall & { started: bigint }>;
  listing: Set<string>;
  initializing: Set<string>;
}

const newExchange = (): Exchange => ({ calls: new Map(), listing: new Set(), initializing: new Set() });

/** Whether the exchange already carries a request answered by this id (its answers would be one). */
const carries = (ex: Exchange, key: string) =>
  ex.calls.has(key) || ex.listing.has(key) || ex.initializing.has(key);

export function createHttpGateway(o: HttpGatewayOptions): HttpGateway {
  /** Each tool as `tools/list` told: its kind and the arguments it declares. */
  const learned = new Map<string, LearnedTool>();
  /** The revision each MCP session negotiated (its `initialize` answer), by `Mcp-Session-Id`. */
  const versions = new Map<string, string>();
  const inFlight = new Set<Promise<void>>();
  let calls = 0;
  const track = (promise: Promise<void>) => {
    const tracked = promise
      .catch((error: Error) => o.onWarning?.(`a record could not be written: ${error.message}`))
      .finally(() => inFlight.delete(tracked));
    inFlight.add(tracked);
  };

  /** Reads what the server answered on one exchange (`session`: the one its answer names). */
  const answered = (session: string, message: unknown, ex: Exchange) => {
    if (Array.isArray(message)) {
      for (const m of message) answered(session, m, ex);
      return;
    }
    if (!isJsonObject(message) || message.method !== undefined) return;
    const key = idKey(message.id);
    if (key === undefined) return;
    if (ex.initializing.delete(key)) {
      const version = isJsonObject(message.result) ? message.result.protocolVersion : undefined;
      if (typeof version === 'string') versions.set(session, version);
      return;
    }
    const call = ex.calls.get(key);
    if (call) {
      ex.calls.delete(key);
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
    } else if (
      ex.listing.delete(key) &&
      isJsonObject(message.result) &&
      Array.isArray(message.result.tools)
    ) {
      learnTools(o.server.name, message.result.tools, learned);
      track(o.sink.observe(toolsEvent(o.server, o.harnessSession, message.result.tools, new Date())));
    }
  };

  /** Exchanges whose response has not ended. */
  const open = new Set<Exchange>();

  /** The exchange is over: its calls left without an answer are recorded so. */
  const settle = (ex: Exchange, why = 'its HTTP exchange ended without the server’s answer') => {
    open.delete(ex);
    for (const call of ex.calls.values()) {
      const ms = Number(process.hrtime.bigint() - call.started) / 1e6;
      track(
        o.sink.observe(
          afterEvent(o.server, o.harnessSession, call, { type: 'cancelled', why }, ms, new Date()),
        ),
      );
    }
    ex.calls.clear();
  };

  const reply = (res: ServerResponse, status: number, value: unknown) => {
    const body = Buffer.from(JSON.stringify(value));
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(body.length) });
    res.end(body);
  };

  /** Notes a client message the answers are read for: `tools/list`, `initialize`. */
  const note = (message: unknown, ex: Exchange) => {
    const key = isJsonObject(message) ? idKey(message.id) : undefined;
    if (key === undefined || carries(ex, key)) return;
    const method = (message as JsonObject).method;
    if (method === 'tools/list') ex.listing.add(key);
    else if (method === 'initialize') ex.initializing.add(key);
  };

  /** Judges one `tools/call`: the request to forward, or the answer given here in its place. */
  async function judgeCall(
    message: JsonObject,
    ex: Exchange,
  ): Promise<{ forward: JsonObject } | { answer: JsonObject }> {
    const id = message.id;
    const fail = (code: number, text: string) => ({
      answer: { jsonrpc: '2.0', id: idKey(id) === undefined ? null : id, error: { code, message: text } },
    });
    const read = readCall(message, learned);
    if ('error' in read) return fail(...read.error);
    const key = idKey(id)!;
    // Two requests of one exchange with one id: their answers could not be told apart.
    if (carries(ex, key)) return fail(-32600, idInUseText(id));
    calls += 1;
    const kind = learned.get(read.toolName)?.kind;
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
        answer: {
          jsonrpc: '2.0',
          id,
          result: { content: [{ type: 'text', text: verdict.reason ?? 'denied by policy' }], isError: true },
        },
      };
    if (verdict.result !== undefined) return { answer: { jsonrpc: '2.0', id, result: verdict.result } };
    call.started = process.hrtime.bigint();
    if (verdict.input !== undefined) call.input = verdict.input;
    ex.calls.set(key, call);
    if (verdict.input === undefined) return { forward: message };
    const params = message.params as JsonObject;
    return { forward: { ...message, params: { ...params, arguments: verdict.input } } };
  }

  /**
   * A batch: refused whole when the session's revision has none (2025-06-18 and later) and it holds
   * a call; else each call judged in order, a denied one answered here, the rest forwarded.
   */
  async function judgeBatch(body: Buffer, batch: unknown[], version: string, ex: Exchange): Promise<Judged> {
    if (!batch.some((m) => isCall(m) || isUnanswerableCall(m))) {
      for (const m of batch) note(m, ex);
      return { forward: body, local: [] };
    }
    if (!allowsBatches(version))
      return {
        status: 400,
        answer: {
          jsonrpc: '2.0',
          id: null,
          error: {
            code: -32600,
            message: `invalid request: MCP ${version} has no JSON-RPC batches (removed in 2025-06-18); send each tools/call on its own`,
          },
        },
      };
    const forward: unknown[] = [];
    const local: unknown[] = [];
    let changed = false;
    for (const m of batch) {
      if (isUnanswerableCall(m)) {
        local.push({ jsonrpc: '2.0', id: null, error: { code: -32600, message: UNANSWERABLE_CALL } });
        changed = true;
        continue;
      }
      if (!isCall(m)) {
        note(m, ex);
        forward.push(m);
        continue;
      }
      const judged = await judgeCall(m, ex);
      if ('answer' in judged) {
        local.push(judged.answer);
        changed = true;
      } else {
        if (judged.forward !== m) changed = true;
        forward.push(judged.forward);
      }
    }
    if (forward.length === 0) return { status: 200, answer: local };
    return { forward: changed ? Buffer.from(JSON.stringify(forward)) : body, local };
  }

  /**
   * Judges a POSTed body: the bytes to forward (and answers of its own), or the answer given here.
   * `ex` gets the requests forwarded whose answers are read.
   */
  async function judge(body: Buffer, version: string, ex: Exchange): Promise<Judged> {
    let message: unknown;
    try {
      message = parseJson(body);
    } catch (error) {
      // Not a call, only a value the strict parser will not hold exactly: forwarded as sent.
      if (unjudgedMessages(body, (error as { code?: string }).code)) return { forward: body, local: [] };
      return {
        status: 400,
        answer: {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32700, message: `parse error: ${(error as Error).message}` },
        },
      };
    }
    const ambiguous = ambiguousKeys(message);
    if (ambiguous !== undefined)
      return {
        status: 400,
        answer: { jsonrpc: '2.0', id: null, error: { code: -32600, message: ambiguousMessage(ambiguous) } },
      };
    if (Array.isArray(message)) return judgeBatch(body, message, version, ex);
    if (isUnanswerableCall(message))
      return {
        status: 400,
        answer: { jsonrpc: '2.0', id: null, error: { code: -32600, message: UNANSWERABLE_CALL } },
      };
    if (!isCall(message)) {
      note(message, ex);
      return { forward: body, local: [] };
    }
    const judged = await judgeCall(message, ex);
    if ('answer' in judged) return { status: 200, answer: judged.answer };
    return {
      forward: judged.forward === message ? body : Buffer.from(JSON.stringify(judged.forward)),
      local: [],
    };
  }

  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const session = typeof req.headers['mcp-session-id'] === 'string' ? req.headers['mcp-session-id'] : '';
      const header = req.headers['mcp-protocol-version'];
      const version =
        (typeof header === 'string' && header !== '' ? header : undefined) ??
        versions.get(session) ??
        DEFAULT_PROTOCOL_VERSION;
      let forward = body;
      let local: unknown[] = [];
      const ex = newExchange();
      if (req.method === 'POST' && body.length > 0) {
        const unread = notAsRead(req.headers);
        if (unread !== undefined)
          return reply(res, 415, { jsonrpc: '2.0', id: null, error: { code: -32700, message: unread } });
        const judged = await judge(body, version, ex);
        if (!('forward' in judged)) return reply(res, judged.status, judged.answer);
        // Valid JSON, so written as one line: a server that hands bodies to a line reader (a bridge
        // to a stdio server) reads one message, the one judged.
        forward = singleLine(judged.forward);
        local = judged.local;
      }
      open.add(ex);
      const target = new URL(o.upstream);
      target.search = new URL(req.url ?? '/', 'http://127.0.0.1').search;
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
        const status = answer.statusCode ?? 502;
        const type = String(answer.headers['content-type'] ?? '');
        const returned =
          typeof answer.headers['mcp-session-id'] === 'string' ? answer.headers['mcp-session-id'] : session;
        const isStream = type.includes('text/event-stream');
        const isJson = type.includes('application/json');
        // Answers of our own go in the server's answer: first events of its stream, the first
        // members of its JSON array, or, when it only accepted (202), the whole answer.
        const merging = local.length > 0 && status < 300;
        const headers = headersOut(answer.headers);
        if (!merging || isStream) {
          res.writeHead(status, headers);
          if (merging) res.write(sseEvents(local));
        }
        const stream = isStream
          ? new EventStreamReader((data) => {
              try {
                answered(returned, JSON.parse(data), ex);
              } catch {}
            })
          : null;
        const json: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => {
          if (!merging || isStream) res.write(chunk);
          if (stream) stream.push(chunk);
          else if (isJson) json.push(chunk);
        });
        answer.on('end', () => {
          const whole = Buffer.concat(json);
          if (merging && !isStream) {
            const merged =
              (isJson ? mergedJson(local, whole) : undefined) ?? Buffer.from(JSON.stringify(local));
            const { 'content-type': _type, ...rest } = headers;
            res.writeHead(status === 202 || status === 204 ? 200 : status, {
              ...rest,
              'content-type': 'application/json',
              'content-length': String(merged.length),
            });
            res.end(merged);
          } else res.end();
          if (whole.length > 0)
            try {
              answered(returned, JSON.parse(whole.toString('utf8')), ex);
            } catch {}
        });
        answer.on('error', () => res.destroy());
        answer.once('close', () => settle(ex));
      });
      upstream.on('error', (error) => {
        o.onWarning?.(`the server at ${o.upstream.href} did not answer: ${error.message}`);
        settle(ex);
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
      for (const ex of open) settle(ex, 'the gateway stopped before the server’s answer');
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
