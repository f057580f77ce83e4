/**
 * The MCP gateway's relay: newline-delimited JSON-RPC (the MCP stdio transport) between a client
 * and a server, every line forwarded as the bytes that arrived, newline included, in one write.
 * Only `tools/call` requests are held: each is judged at the boundary (`tool.before`) before the
 * server sees it, and a denied call is answered here with an `isError` tool result and never
 * forwarded. Answers to calls are recorded (`tool.after`) after they are forwarded, so recording
 * never delays a result.
 *
 * Client lines are kept in order. A line that could be a request (`needsReading`) is read with the
 * strict parser: one that is not JSON, or is ambiguous JSON (duplicate keys), is answered with a
 * protocol error and not forwarded, because a laxer server parser could read a call the gateway
 * never judged. A line read and valid goes on in single-line form (`forwardedLine`: no CR, NEL,
 * U+2028 or U+2029 inside it), so a server whose line reader splits at those reads the one message
 * judged. Any other line (the client's answers to the server's requests) passes unread.
 *
 * Every client request is followed until the server answers it (or the client cancels it): a
 * request whose id another one still waiting holds is refused (`idInUse`), since the answer to
 * either would be taken for the call's. Server lines are forwarded first and read only while a
 * request is awaited.
 */
import type { Readable, Writable } from 'node:stream';
import { parseJson } from '../../core/canonical.js';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { LineSplitter } from '../../core/lines.js';
import {
  afterEvent,
  beforeEvent,
  type McpCall,
  type McpCallEnd,
  type McpServerIdentity,
  toolsEvent,
} from './events.js';
import {
  ambiguousKeys,
  ambiguousMessage,
  deniedResult,
  forwardedLine,
  idInUse,
  idInUseText,
  idKey,
  isCall,
  isUnanswerableCall,
  type LearnedTool,
  learnTools,
  line,
  needsReading,
  protocolError,
  readCall,
  UNANSWERABLE_CALL,
  unjudgedMessages,
} from './messages.js';

export { deniedResult, idKey, needsReading, protocolError, readCall } from './messages.js';

/** What the boundary answered about a call, as the relay acts on it. */
export interface GatewayVerdict {
  allow: boolean;
  /** Why not, shown to the model in the denial. */
  reason?: string;
  /** Arguments a backend replaced the client's with (the call is forwarded with these). */
  input?: JsonObject;
  /** A result a backend supplied: the call does not reach the server; this is its answer. */
  result?: unknown;
}

/** Where the relay's events go: the boundary in this process, or the recorder. */
export interface GatewaySink {
  /** Judges and records an event that can still be stopped; resolves once it is durable. */
  decide(event: JsonObject): Promise<GatewayVerdict>;
  /** Records an event that already happened. */
  observe(event: JsonObject): Promise<void>;
}

export interface RelayOptions {
  server: McpServerIdentity;
  /** The id this gateway run gives the boundary as the harness's session. */
  harnessSession: string;
  sink: GatewaySink;
  clientIn: Readable;
  clientOut: Writable;
  serverIn: Writable;
  serverOut: Readable;
  /** The longest line either side may send (default 64 MiB). */
  maxLineBytes?: number;
  /** Answers recorded in one batch at most (default 32), and the longest they wait (default 100 ms). */
  afterBatch?: number;
  afterDelayMs?: number;
  onWarning?: (message: string) => void;
}

const DEFAULT_MAX_LINE = 64 * 1024 * 1024;
/** Client requests other than calls awaiting their answers at most; past it a request is refused. */
const MAX_AWAITED = 10_000;
/** Ids of cancelled requests kept from reuse at most (the oldest is let go first). */
const MAX_RETIRED = 10_000;

interface Pending extends McpCall {
  started: bigint;
}

/** A client line waiting its turn: its bytes without and with the newline. */
interface Held {
  line: Buffer;
  raw: Buffer;
}

/** More than one line ends in the chunk: its writes are gathered into one (cork, then uncork). */
const manyLines = (chunk: Buffer) => chunk.indexOf(0x0a) !== chunk.lastIndexOf(0x0a);

export class McpRelay {
  private readonly pending = new Map<string, Pending>();
  private readonly listing = new Set<string>();
  /** Ids of the client's other requests the server has not answered yet. */
  private readonly requests = new Set<string>();
  /**
   * Ids of requests the client cancelled: a server may still answer one (the notice can cross its
   * answer), so its id is not given to another request (MCP never lets a client reuse an id).
   */
  private readonly retired = new Set<string>();
  /** Each tool as `tools/list` told: its kind and the arguments it declares. */
  private readonly tools = new Map<string, LearnedTool>();
  private readonly queue: Held[] = [];
  private readonly afters: JsonObject[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private afterTimer: NodeJS.Timeout | null = null;
  private busy = false;
  private clientEnded = false;
  private calls = 0;
  private readonly batch: number;
  private readonly delayMs: number;
  /** Resolves when the client has finished sending and every held line is forwarded or answered. */
  readonly clientDone: Promise<void>;
  private resolveClientDone!: () => void;

  constructor(private readonly o: RelayOptions) {
    this.batch = o.afterBatch ?? 32;
    this.delayMs = o.afterDelayMs ?? 100;
    this.clientDone = new Promise((resolve) => {
      this.resolveClientDone = resolve;
    });
  }

  /** Starts reading both sides. */
  start(): void {
    const limit = this.o.maxLineBytes ?? DEFAULT_MAX_LINE;
    const fromClient = new LineSplitter(limit);
    const fromServer = new LineSplitter(limit);
    const { clientIn, clientOut, serverIn, serverOut } = this.o;
    clientIn.on('data', (chunk: Buffer) => {
      const many = manyLines(chunk);
      if (many) serverIn.cork();
      try {
        fromClient.push(chunk, (line, _at, raw) => this.enqueue({ line, raw }));
      } catch (error) {
        this.warn(`client: ${(error as Error).message}; the connection is closed`);
        // Destroyed, it never ends: the lines already taken go on, then the server's input closes.
        clientIn.destroy();
        this.clientEnded = true;
        this.pump();
      } finally {
        if (many) serverIn.uncork();
      }
    });
    clientIn.on('end', () => {
      // A last line without its newline goes on as it came: bytes the client sent, nothing added.
      const rest = fromClient.end();
      if (rest) this.enqueue({ line: rest.line, raw: rest.line });
      this.clientEnded = true;
      this.pump();
    });
    serverOut.on('data', (chunk: Buffer) => {
      const arrived = process.hrtime.bigint();
      // Every line is forwarded before any is read: reading an answer never delays the next one.
      const toRead: Buffer[] = [];
      const many = manyLines(chunk);
      if (many) clientOut.cork();
      try {
        fromServer.push(chunk, (line, _at, raw) => {
          this.toClient(raw, true);
          if (this.awaiting()) toRead.push(line);
        });
      } catch (error) {
        const why = `server: ${(error as Error).message}; the connection is closed`;
        this.warn(why);
        serverOut.destroy();
        // The calls it will now never answer get an error, not silence.
        for (const call of this.pending.values())
          this.toClient(protocolError(call.requestId, -32603, `Tally's MCP gateway: ${why}`));
        this.serverGone(why);
      } finally {
        if (many) clientOut.uncork();
      }
      for (const line of toRead) this.fromServer(line, arrived);
    });
    serverOut.on('end', () => {
      const rest = fromServer.end();
      if (!rest) return;
      this.toClient(rest.line, true);
      this.fromServer(rest.line, process.hrtime.bigint());
    });
  }

  /** A request is waiting for its answer: server lines are read. */
  private awaiting(): boolean {
    return this.pending.size > 0 || this.listing.size > 0 || this.requests.size > 0;
  }

  /** Whether a request still waiting for its answer, or cancelled, holds this id. */
  private inUse(key: string): boolean {
    return this.pending.has(key) || this.listing.has(key) || this.requests.has(key) || this.retired.has(key);
  }

  /** A cancelled request's id: no longer awaited, not reusable (the oldest of many let go). */
  private retire(key: string): void {
    this.requests.delete(key);
    this.listing.delete(key);
    if (this.retired.size >= MAX_RETIRED) this.retired.delete(this.retired.values().next().value as string);
    this.retired.add(key);
  }

  /** The server is gone: calls it never answered are recorded as cancelled. */
  serverGone(why: string): void {
    for (const [key, call] of this.pending) {
      this.pending.delete(key);
      this.finish(call, { type: 'cancelled', why });
    }
  }

  /** Records every answer still held and waits until all are recorded. */
  async drain(): Promise<void> {
    this.flushAfters();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  private warn(message: string): void {
    this.o.onWarning?.(message);
  }

  /** Writes, and stops reading `source` while `to` is full (a slow reader slows the writer, as a pipe would). */
  private write(to: Writable, bytes: Buffer, source: Readable): void {
    if (to.destroyed || to.writableEnded) return;
    if (!to.write(bytes) && !source.isPaused()) {
      source.pause();
      to.once('drain', () => source.resume());
    }
  }

  /** A line for the server, newline included. */
  private toServer(bytes: Buffer): void {
    this.write(this.o.serverIn, bytes, this.o.clientIn);
  }

  /** Bytes for the client: the server's (`fromServer`), or the gateway's own answers to client lines. */
  private toClient(bytes: Buffer, fromServer = false): void {
    this.write(this.o.clientOut, bytes, fromServer ? this.o.serverOut : this.o.clientIn);
  }

  private enqueue(held: Held): void {
    this.queue.push(held);
    this.pump();
  }

  /** Forwards held client lines in order; a line being judged holds the ones after it. */
  private pump(): void {
    while (!this.busy && this.queue.length > 0) {
      const next = this.queue.shift()!;
      const held = this.fromClient(next);
      if (held) {
        this.busy = true;
        held
          .catch((error: Error) => this.warn(`a call could not be handled: ${error.message}`))
          .finally(() => {
            this.busy = false;
            this.pump();
          });
      }
    }
    if (!this.busy && this.queue.length === 0 && this.clientEnded) {
      this.o.serverIn.end();
      this.resolveClientDone();
    }
  }

  /** One client line: forwarded now, or a promise while a call is judged. */
  private fromClient({ line: bytes, raw }: Held): Promise<void> | undefined {
    if (!needsReading(bytes)) {
      this.toServer(raw);
      return undefined;
    }
    let message: unknown;
    try {
      message = parseJson(bytes);
    } catch (error) {
      const unjudged = unjudgedMessages(bytes, (error as { code?: string }).code);
      if (unjudged === undefined)
        this.toClient(protocolError(null, -32700, `parse error: ${(error as Error).message}`));
      else this.forwardUnjudged(unjudged, forwardedLine(bytes, raw));
      return undefined;
    }
    const ambiguous = ambiguousKeys(message);
    if (ambiguous !== undefined) {
      this.toClient(protocolError(null, -32600, ambiguousMessage(ambiguous)));
      return undefined;
    }
    // From here on the line is valid JSON, forwarded as one line to every kind of line reader.
    const forwarded = forwardedLine(bytes, raw);
    if (Array.isArray(message)) return this.batchFromClient(forwarded, message);
    if (!isJsonObject(message)) {
      this.toClient(protocolError(null, -32600, 'invalid request: a JSON-RPC message is an object'));
      return undefined;
    }
    if (isCall(message)) return this.call(message, forwarded);
    if (isUnanswerableCall(message)) {
      this.toClient(protocolError(null, -32600, UNANSWERABLE_CALL));
      return undefined;
    }
    const refusal = this.noteClientMessage(message);
    if (refusal === undefined) this.toServer(forwarded);
    else this.toClient(refusal);
    return undefined;
  }

  /**
   * A line held only values the strict parser will not read exactly: forwarded as it came, its
   * requests followed, unless one of them reuses an id in flight. Its bytes cannot be written again
   * without changing those values, so then none of it goes on, and each request in it is answered.
   */
  private forwardUnjudged(messages: JsonObject[], bytes: Buffer): void {
    const keys = messages.filter((m) => typeof m.method === 'string').map((m) => idKey(m.id));
    const clash = keys.some((k, i) => k !== undefined && (this.inUse(k) || keys.indexOf(k) !== i));
    if (!clash) {
      for (const m of messages) this.noteClientMessage(m);
      this.toServer(bytes);
      return;
    }
    for (const m of messages)
      if (typeof m.method === 'string' && idKey(m.id) !== undefined) this.toClient(idInUse(m.id));
  }

  /**
   * Follows a client message that is not a call: a request until its answer, a cancellation. A
   * request whose id is in use is not followed: the refusal to answer in its place is returned.
   */
  private noteClientMessage(message: JsonObject): Buffer | undefined {
    const key = idKey(message.id);
    if (typeof message.method === 'string' && key !== undefined) {
      if (this.inUse(key)) return idInUse(message.id);
      if (message.method === 'tools/list') this.listing.add(key);
      else if (this.requests.size >= MAX_AWAITED)
        return protocolError(
          message.id,
          -32603,
          `Tally's MCP gateway: ${MAX_AWAITED} requests already wait for the server's answer; the gateway does not forward more`,
        );
      else this.requests.add(key);
    } else if (message.method === 'notifications/cancelled' && isJsonObject(message.params)) {
      const cancelled = idKey(message.params.requestId);
      if (cancelled === undefined || !this.inUse(cancelled)) return undefined;
      this.retire(cancelled);
      const call = this.pending.get(cancelled);
      if (call) {
        this.pending.delete(cancelled);
        this.finish(call, { type: 'cancelled', why: 'the client cancelled the request' });
      }
    }
    return undefined;
  }

  /**
   * A batch (JSON-RPC arrays, from protocol revisions that allowed them): every call in it judged;
   * the original bytes forwarded when nothing was held back, else the rest re-serialised.
   */
  private async batchFromClient(bytes: Buffer, messages: unknown[]): Promise<void> {
    const forward: unknown[] = [];
    let changed = false;
    for (const message of messages) {
      if (isCall(message)) {
        const outcome = await this.judge(message);
        if (outcome === 'answered') {
          changed = true;
          continue;
        }
        if (outcome !== message) changed = true;
        forward.push(outcome);
      } else if (isUnanswerableCall(message)) {
        this.toClient(protocolError(null, -32600, UNANSWERABLE_CALL));
        changed = true;
      } else {
        const refusal = isJsonObject(message) ? this.noteClientMessage(message) : undefined;
        if (refusal === undefined) forward.push(message);
        else {
          this.toClient(refusal);
          changed = true;
        }
      }
    }
    if (!changed) this.toServer(bytes);
    else if (forward.length > 0) this.toServer(line(forward));
  }

  private async call(message: JsonObject, bytes: Buffer): Promise<void> {
    const outcome = await this.judge(message);
    if (outcome === 'answered') return;
    this.toServer(outcome === message ? bytes : line(outcome));
  }

  /**
   * Judges one `tools/call`: 'answered' when the gateway answered it (malformed, denied, or a
   * supplied result), else the request to forward (the same object, or one with new arguments).
   */
  private async judge(message: JsonObject): Promise<JsonObject | 'answered'> {
    const id = message.id;
    const key = idKey(id);
    const params = message.params as JsonObject;
    const fail = (code: number, text: string): 'answered' => {
      this.toClient(protocolError(id, code, text));
      return 'answered';
    };
    if (key !== undefined && this.inUse(key)) return fail(-32600, idInUseText(id));
    const read = readCall(message, this.tools);
    if ('error' in read) return fail(...read.error);
    this.calls += 1;
    const call: Pending = {
      callId: `${this.o.harnessSession}-${this.calls}`,
      requestId: id as string | number,
      toolName: read.toolName,
      input: read.input,
      ...(this.kindOf(read.toolName) ? { kind: this.kindOf(read.toolName)! } : {}),
      started: 0n,
    };
    let verdict: GatewayVerdict;
    try {
      verdict = await this.o.sink.decide(beforeEvent(this.o.server, this.o.harnessSession, call, new Date()));
    } catch (error) {
      verdict = {
        allow: false,
        reason: `the call could not be judged and recorded: ${(error as Error).message}`,
      };
      this.warn(verdict.reason!);
    }
    if (!verdict.allow) {
      this.toClient(deniedResult(id, verdict.reason ?? 'denied by policy'));
      return 'answered';
    }
    if (verdict.result !== undefined) {
      this.toClient(line({ jsonrpc: '2.0', id, result: verdict.result }));
      return 'answered';
    }
    call.started = process.hrtime.bigint();
    if (verdict.input !== undefined) call.input = verdict.input;
    this.pending.set(key!, call);
    return verdict.input === undefined
      ? message
      : { ...message, params: { ...params, arguments: verdict.input } };
  }

  /** The kind learned from `tools/list`, else undefined (the judge infers it from the input). */
  private kindOf(tool: string): string | undefined {
    return this.tools.get(tool)?.kind;
  }

  /** One server line, already forwarded: read for what it answers. */
  private fromServer(bytes: Buffer, arrived: bigint): void {
    if (!this.awaiting()) return;
    let message: unknown;
    try {
      message = JSON.parse(bytes.toString('utf8'));
    } catch {
      return;
    }
    const messages = Array.isArray(message) ? message : [message];
    for (const m of messages) if (isJsonObject(m)) this.answer(m, bytes.length, arrived);
  }

  private answer(message: JsonObject, bytes: number, arrived: bigint): void {
    if (message.method !== undefined) return;
    const key = idKey(message.id);
    if (key === undefined) return;
    this.requests.delete(key);
    this.retired.delete(key);
    const call = this.pending.get(key);
    if (call) {
      this.pending.delete(key);
      const end: McpCallEnd =
        'error' in message
          ? {
              type: 'error',
              code: isJsonObject(message.error) ? message.error.code : undefined,
              message:
                isJsonObject(message.error) && typeof message.error.message === 'string'
                  ? message.error.message
                  : '',
              bytes,
            }
          : { type: 'result', result: message.result, bytes };
      this.finish(call, end, arrived);
      return;
    }
    if (this.listing.delete(key) && isJsonObject(message.result) && Array.isArray(message.result.tools))
      this.learn(message.result.tools);
  }

  private learn(tools: unknown[]): void {
    learnTools(this.o.server.name, tools, this.tools);
    this.track(this.o.sink.observe(toolsEvent(this.o.server, this.o.harnessSession, tools, new Date())));
  }

  private finish(call: Pending, end: McpCallEnd, at = process.hrtime.bigint()): void {
    const ms = call.started === 0n ? 0 : Number(at - call.started) / 1e6;
    this.afters.push(afterEvent(this.o.server, this.o.harnessSession, call, end, ms, new Date()));
    // Answers are recorded in batches, off the path of the next call (one commit for many).
    if (this.afters.length >= this.batch) this.flushAfters();
    else if (this.afterTimer === null) {
      this.afterTimer = setTimeout(() => this.flushAfters(), this.delayMs);
      this.afterTimer.unref();
    }
  }

  private flushAfters(): void {
    if (this.afterTimer !== null) clearTimeout(this.afterTimer);
    this.afterTimer = null;
    for (const event of this.afters.splice(0)) this.track(this.o.sink.observe(event));
  }

  private track(promise: Promise<void>): void {
    const tracked = promise
      .catch((error: Error) => this.warn(`a record could not be written: ${error.message}`))
      .finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }
}
