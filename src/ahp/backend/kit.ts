/**
 * The backend kit: write an AHP backend as one handler and serve it over HTTP (a `node:http`
 * request listener) or stdio (newline-delimited JSON on any pair of streams).
 *
 * Answers, per the protocol's error table and HTTP binding:
 * - HTTP: 405 (with `Allow: POST`) for any method but POST, 415 for a body that is not
 *   `application/json`, 413 with `Connection: close` over the body limit (at once for a declared
 *   `Content-Length`, or as soon as a streamed body crosses it; the body is not read further),
 *   400 with a -32700 error for unparseable JSON, 204 with no body for a notification, 200
 *   `application/json` for every JSON-RPC response.
 * - JSON-RPC: -32700 parse error, -32600 invalid request (not one JSON-RPC 2.0 object; batches are
 *   not supported), -32601 unknown method, -32602 invalid params (the request fails the message
 *   validator, ./messages: `data.issues` lists the JSON pointers and rules at fault; this includes a
 *   request id that is not `params.event.id`), -32001 unsupported protocol version
 *   (`data.supported: ["draft"]`), -32002 event type not supported for intercept by this backend,
 *   -32003 backend temporarily unavailable (the handler threw `BackendUnavailable`), -32004 backend
 *   failed while evaluating (the handler threw, returned effects the request did not advertise, or
 *   returned effects that make an invalid response).
 * - The response id is the request id, which the protocol makes equal to the event id.
 * - Every message received is validated before the handler sees it, and every answer before it is
 *   sent. Notifications are never answered; an invalid one is dropped without calling `observe`.
 * - With the `lineage` option, a valid event is also judged against the events accepted before
 *   it (./lineage.ts): refused like an invalid one, with the lineage issues in `data.issues`.
 *
 * Unadvertised effects are refused, not dropped: the protocol makes them an operational failure
 * and never a silent no-op, and dropping a `deny` would silently turn a refusal into "no change".
 * The kit answers -32004 naming the effects, and the harness's failure policy settles the call.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable, Writable } from 'node:stream';
import { parseJson } from '../../core/canonical.js';
import { isJsonObject } from '../../core/json.js';
import { LineSplitter, LineTooLongError } from '../../core/lines.js';
import { type Issue, validateInterceptResponse, validateMessage } from '../messages/index.js';
import { catalogueEntry } from '../protocol/catalogue.js';
import type { JsonRpcRequest } from '../transports/transport.js';
import { LineageTracker } from './lineage.js';

export const PROTOCOL_VERSION = 'draft';

export type Effect = { type: string } & Record<string, unknown>;

/** The request-level capability advertisement (`params.capabilities`). */
export interface Capabilities {
  effects: string[];
  modify?: Record<string, { replace?: boolean; merge?: boolean }>;
  flow?: { operations?: string[] };
  inject?: { context?: { append?: boolean; deliverAt?: string[] } };
  [key: string]: unknown;
}

export interface InterceptContext {
  /** `params.event`: at least `id` and `type`; every other field as the harness sent it. */
  event: { id: string; type: string } & Record<string, unknown>;
  capabilities: Capabilities;
  params: Record<string, unknown>;
}

export interface BackendHandler {
  /** Event types this backend evaluates; others get -32002. Default: every interceptable event. */
  interceptEvents?: readonly string[];
  intercept?(context: InterceptContext): readonly Effect[] | Promise<readonly Effect[]>;
  observe?(event: Record<string, unknown>, params: Record<string, unknown>): void | Promise<void>;
  /** Answer to `hooks/capabilities`; without one that method is -32601. */
  manifest?: Record<string, unknown>;
  /** Largest HTTP body accepted. Default 4 MiB. */
  maxBodyBytes?: number;
}

/** Throw from `intercept` to answer -32003 (backend temporarily unable to evaluate). */
export class BackendUnavailable extends Error {
  override name = 'BackendUnavailable';
}

export interface BackendOptions {
  /**
   * Receiver-side task/workspace lineage (./lineage.ts): `true` for a tracker of the default
   * bounds, or a tracker to share or size. A refused request gets -32602 with the lineage issues;
   * a refused notification is dropped like an invalid one. Default: off.
   */
  lineage?: boolean | LineageTracker;
}

export interface BackendKit {
  /** A `node:http` request listener. */
  http: (req: IncomingMessage, res: ServerResponse) => void;
  /**
   * A `node:http` `checkContinue` listener (`server.on('checkContinue', kit.checkContinue)`).
   * Without one, Node's server sends `100 Continue` itself before `http` runs, inviting a body the
   * kit will refuse; with it, a request refused before reading (405, 415, a declared length over
   * the limit: 413) gets its final answer instead, and any other gets `100 Continue` and `http`.
   */
  checkContinue: (req: IncomingMessage, res: ServerResponse) => void;
  serveStdio(input: Readable, output: Writable): Promise<void>;
  handleMessage(message: unknown): Promise<unknown | undefined>;
}

type Id = string | number | null;

function rpcError(id: Id, code: number, message: string, data?: unknown) {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

/** At most this many validator issues go into an error's `data.issues`. */
const MAX_REPORTED_ISSUES = 8;

function issueData(issues: readonly Issue[]) {
  const shown = issues
    .slice(0, MAX_REPORTED_ISSUES)
    .map(({ pointer, rule, message }) => ({ pointer, rule, message }));
  return issues.length > shown.length
    ? { issues: shown, more: issues.length - shown.length }
    : { issues: shown };
}

function validId(value: unknown): value is string | number {
  return (
    (typeof value === 'string' && value.length > 0) ||
    (typeof value === 'number' && Number.isSafeInteger(value))
  );
}

function isThenable<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null | undefined)?.then === 'function';
}

const noAnswer = () => undefined;

/** The effects of `effects` that `capabilities` did not advertise, described for the error data. */
export function unadvertisedEffects(effects: readonly Effect[], capabilities: Capabilities): string[] {
  const out: string[] = [];
  for (const effect of effects) {
    const advertised = capabilities.effects.includes(effect.type);
    if (!advertised) out.push(effect.type);
    else if (effect.type === 'modify') {
      const target = String(effect.target);
      const op = effect.operation === 'merge' ? 'merge' : 'replace';
      if (capabilities.modify?.[target]?.[op] !== true) out.push(`modify(${target}, ${op})`);
    } else if (effect.type === 'flow') {
      if (!capabilities.flow?.operations?.includes(String(effect.operation)))
        out.push(`flow(${String(effect.operation)})`);
    } else if (effect.type === 'inject') {
      const context = capabilities.inject?.context;
      if (context?.append !== true || !context.deliverAt?.includes(String(effect.deliverAt)))
        out.push(`inject(${String(effect.deliverAt)})`);
    }
  }
  return out;
}

export function createBackend(handler: BackendHandler, options: BackendOptions = {}): BackendKit {
  const lineage = options.lineage === true ? new LineageTracker() : options.lineage || undefined;
  const supports = (type: string) => {
    const entry = catalogueEntry(type);
    if (!entry?.interceptable || handler.intercept === undefined) return false;
    return handler.interceptEvents === undefined || handler.interceptEvents.includes(type);
  };

  /**
   * The answer to a valid intercept request once the handler's effects are known, itself checked
   * against the request (./messages: shape, advertised capabilities, edit targets) before it goes.
   */
  function answerEffects(request: JsonRpcRequest, effects: unknown, caps: Capabilities): unknown {
    const id = request.id;
    if (!Array.isArray(effects) || !effects.every((e) => isJsonObject(e) && typeof e.type === 'string')) {
      return rpcError(id, -32004, 'backend failed while evaluating');
    }
    const refused = unadvertisedEffects(effects as Effect[], caps);
    if (refused.length > 0) {
      return rpcError(id, -32004, 'backend produced effects the request did not advertise', {
        unadvertised: refused,
      });
    }
    const reply = { jsonrpc: '2.0', id, result: { protocolVersion: PROTOCOL_VERSION, effects } };
    const issues = validateInterceptResponse(
      reply,
      request as Parameters<typeof validateInterceptResponse>[1],
    );
    if (issues.length > 0) {
      return rpcError(
        id,
        -32004,
        'backend produced effects that make an invalid response',
        issueData(issues),
      );
    }
    return reply;
  }

  function handlerFailed(id: string | number, error: unknown): unknown {
    if (error instanceof BackendUnavailable) return rpcError(id, -32003, 'backend temporarily unavailable');
    return rpcError(id, -32004, 'backend failed while evaluating');
  }

  /** Synchronous when the handler is: a promise only when `intercept` returned one. */
  function intercept(message: JsonRpcRequest, params: Record<string, unknown>): unknown {
    const id = message.id;
    const event = params.event;
    if (isJsonObject(event) && typeof event.type === 'string' && !supports(event.type)) {
      return rpcError(
        id,
        -32002,
        `event type ${JSON.stringify(event.type)} is not supported for hooks/intercept`,
        {
          type: event.type,
        },
      );
    }
    const issues = validateMessage(message, 'intercept-request');
    if (issues.length > 0) return rpcError(id, -32602, 'invalid params', issueData(issues));
    const refused = lineage?.accept(event as Record<string, unknown>);
    if (refused && refused.length > 0) return rpcError(id, -32602, 'invalid params', issueData(refused));
    const capabilities = params.capabilities as Capabilities;
    let produced: readonly Effect[] | Promise<readonly Effect[]>;
    try {
      produced = handler.intercept!({
        event: event as InterceptContext['event'],
        capabilities,
        params,
      });
    } catch (error) {
      return handlerFailed(id, error);
    }
    if (isThenable(produced)) {
      return Promise.resolve(produced).then(
        (effects) => answerEffects(message, effects, capabilities),
        (error: unknown) => handlerFailed(id, error),
      );
    }
    return answerEffects(message, produced, capabilities);
  }

  /**
   * The answer to one parsed message (undefined: none is due), or a promise of it when the
   * handler works asynchronously. Never throws for any input.
   */
  function answer(message: unknown): unknown {
    if (!isJsonObject(message)) {
      return rpcError(
        null,
        -32600,
        Array.isArray(message) ? 'batches are not supported' : 'not a JSON-RPC object',
      );
    }
    const isRequest = 'id' in message;
    if (isRequest && !validId(message.id))
      return rpcError(null, -32600, 'id must be a non-empty string or an integer');
    const id = isRequest ? (message.id as string | number) : null;
    if (message.jsonrpc !== '2.0' || typeof message.method !== 'string') {
      return isRequest ? rpcError(id, -32600, 'jsonrpc must be "2.0" and method a string') : undefined;
    }
    const params = message.params;
    if (!isRequest) {
      // An invalid notification is dropped: it has no answer, and the handler never sees it.
      if (
        message.method === 'hooks/observe' &&
        handler.observe &&
        isJsonObject(params) &&
        isJsonObject(params.event) &&
        validateMessage(message, 'observe-notification').length === 0 &&
        (lineage === undefined || lineage.accept(params.event).length === 0)
      ) {
        let observed: void | Promise<void>;
        try {
          observed = handler.observe(params.event, params);
        } catch {
          return undefined;
        }
        if (isThenable(observed)) return Promise.resolve(observed).then(noAnswer, noAnswer);
      }
      return undefined;
    }
    const known =
      message.method === 'hooks/intercept' || (message.method === 'hooks/capabilities' && handler.manifest);
    if (!known) return rpcError(id, -32601, `method ${JSON.stringify(message.method)} not found`);
    if (!isJsonObject(params))
      return rpcError(id, -32602, 'params must be an object', { pointer: '/params' });
    if (params.protocolVersion !== PROTOCOL_VERSION) {
      return rpcError(id, -32001, 'unsupported protocol version', { supported: [PROTOCOL_VERSION] });
    }
    if (message.method === 'hooks/capabilities') {
      const issues = validateMessage(message, 'capabilities-request');
      if (issues.length > 0) return rpcError(id, -32602, 'invalid params', issueData(issues));
      return {
        jsonrpc: '2.0',
        id,
        result: { protocolVersion: PROTOCOL_VERSION, manifest: handler.manifest },
      };
    }
    return intercept(message as unknown as JsonRpcRequest, params);
  }

  async function handleMessage(message: unknown): Promise<unknown | undefined> {
    return answer(message);
  }

  /**
   * One answer as JSON text. An answer that cannot be serialised (a handler's effect holding a
   * BigInt or a cycle) becomes -32004 instead of breaking the stream.
   */
  function serialise(reply: unknown): string {
    try {
      return JSON.stringify(reply);
    } catch {
      const id = isJsonObject(reply) && validId(reply.id) ? reply.id : null;
      return JSON.stringify(rpcError(id, -32004, 'backend failed while evaluating'));
    }
  }

  const limit = handler.maxBodyBytes ?? 4 * 1024 * 1024;

  /**
   * Answers one HTTP request. With `expectContinue` (a `checkContinue` listener) the `100 Continue`
   * goes out only once the request passed every check made before reading, so a refused body is
   * never invited. Over the limit the answer is 413 with `Connection: close` as soon as that is
   * known: at once for a declared `Content-Length`, or when a streamed body crosses it; nothing past
   * the limit is kept, later data is dropped, and Node's server closes the socket after the answer.
   */
  function serveHttp(req: IncomingMessage, res: ServerResponse, expectContinue: boolean): void {
    const send = (status: number, body?: unknown, headers: Record<string, string> = {}) => {
      if (body === undefined) {
        res.writeHead(status, headers).end();
        return;
      }
      const text = serialise(body);
      res.writeHead(status, {
        ...headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
    };
    const reply = (reply: unknown) => (reply === undefined ? send(204) : send(200, reply));
    if (req.method !== 'POST') {
      req.resume();
      send(405, undefined, { allow: 'POST' });
      return;
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') {
      req.resume();
      send(415);
      return;
    }
    // Node's parser admits only digits here; the body is never read, and the server discards
    // whatever of it arrives before the socket closes.
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > limit) {
      send(413, undefined, { connection: 'close' });
      return;
    }
    if (expectContinue) res.writeContinue();
    let chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (chunk: Buffer) => {
      if (over) return;
      size += chunk.length;
      if (size <= limit) {
        chunks.push(chunk);
        return;
      }
      over = true;
      chunks = [];
      send(413, undefined, { connection: 'close' });
    });
    req.on('end', () => {
      if (over) return;
      let parsed: unknown;
      try {
        parsed = parseJson(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      } catch {
        return send(400, rpcError(null, -32700, 'parse error'));
      }
      const answered = answer(parsed);
      if (isThenable(answered)) answered.then(reply);
      else reply(answered);
    });
  }

  const http = (req: IncomingMessage, res: ServerResponse) => serveHttp(req, res, false);
  const checkContinue = (req: IncomingMessage, res: ServerResponse) => serveHttp(req, res, true);

  /** True when `line` holds only JSON whitespace (such lines are skipped, not answered). */
  const blank = (line: Buffer) => line.every((b) => b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0a);

  /** The framed answer to one stdio line ('' when none is due), or a promise of it. */
  function answerLine(line: Buffer): string | Promise<string> {
    if (blank(line)) return '';
    let parsed: unknown;
    try {
      parsed = parseJson(line);
    } catch {
      return `${JSON.stringify(rpcError(null, -32700, 'parse error'))}\n`;
    }
    const answered = answer(parsed);
    const frame = (reply: unknown) => (reply === undefined ? '' : `${serialise(reply)}\n`);
    return isThenable(answered) ? answered.then(frame) : frame(answered);
  }

  /**
   * Reads lines from `input` and answers each in order on `output`, one at a time. Resolves once
   * `input` ends and every line read has been answered. A line that arrives while no earlier one
   * is pending is answered synchronously, from the read callback, when the handler is synchronous.
   */
  function serveStdio(input: Readable, output: Writable): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      /** Unanswered lines waiting on an asynchronous answer, and the chain that answers them in order. */
      let pending = 0;
      let queue: Promise<void> = Promise.resolve();
      const write = (text: string) => {
        if (text !== '') output.write(text);
      };
      const settleOne = () => {
        pending--;
      };
      const handle = (line: Buffer) => {
        if (pending > 0) {
          pending++;
          queue = queue.then(() => answerLine(line)).then(write);
          queue.then(settleOne, settleOne);
          return;
        }
        const framed = answerLine(line);
        if (typeof framed === 'string') return write(framed);
        pending++;
        queue = framed.then(write);
        queue.then(settleOne, settleOne);
      };
      const splitter = new LineSplitter(limit);
      let overflowed = false;
      input.on('data', (data: Buffer | string) => {
        if (overflowed) return;
        try {
          splitter.push(typeof data === 'string' ? Buffer.from(data) : data, handle);
        } catch (error) {
          if (!(error instanceof LineTooLongError)) throw error;
          // A peer that sends a line past the limit is answered once and no longer read: what
          // follows cannot be framed reliably.
          overflowed = true;
          write(`${JSON.stringify(rpcError(null, -32600, `request line exceeds ${limit} bytes`))}\n`);
          input.destroy();
          queue.then(resolve, reject);
        }
      });
      input.once('end', () => {
        const rest = splitter.end();
        if (rest) handle(rest.line);
        queue.then(resolve, reject);
      });
      input.once('error', reject);
    });
  }

  return { http, checkContinue, serveStdio, handleMessage };
}
