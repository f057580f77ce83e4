/**
 * The recorder's endpoints on 127.0.0.1. Every request carries the per-user secret as a bearer
 * token (else 401, nothing recorded). A hook is answered only after its record is durable.
 *
 *   POST /hooks/<harness>     an agent's http hooks or its command shim (claude-code, gemini-cli,
 *                             qwen-code, …): native payload in, native answer out
 *   POST /ingest              a canonical event from a shim, the MCP gateway or `tally wrap`
 *   POST /sessions            start a session for a project ({cwd, agent?, registration?, witness?, wiring?})
 *   POST /sessions/close      seal a session ({session, cwd?}) → {package, records}
 *   GET  /status              {pid, started_at, sessions}
 *   POST /stop                let every session go (each stays open on disk) and exit
 */

import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '../ahp/transports/options.js';
import type { BoundaryDecision, EventContext } from '../boundary/boundary.js';
import { BoundaryError, eventId } from '../boundary/prepare.js';
import { adapterOf, locateSession, type NativeAdapter } from '../capture/adapters.js';
import { type Captured, CaptureError } from '../capture/types.js';
import { CanonicalError, parseJson } from '../core/canonical.js';
import { GitError } from '../core/git.js';
import { sha256Hex } from '../core/hash.js';
import { readBody as readLimited } from '../core/http-body.js';
import { isJsonObject, type JsonObject } from '../core/json.js';
import { RegularFileError } from '../core/regular-file.js';
import { firstBadUtf8Byte } from '../core/utf8.js';
import { SessionError } from '../session/store.js';
import { rememberTranscript } from '../session/transcripts.js';
import { parseWiring, type SessionWiring } from '../session/wiring.js';
import { hooksToken, RecorderError, runToken } from './config.js';
import type { Held, HeldReply, SessionHint, SessionRegistry } from './registry.js';
import { DEFAULT_WITNESS_EVERY, type WitnessOptions } from './session-witness.js';

const MAX_BODY = 16 * 1024 * 1024;

/** What a request refused by a stopping recorder is told (a shim spools it for the next one). */
const NOT_RECORDED = 'nothing was recorded; the next recorder takes it';

export interface RecorderServerOptions {
  secret: string;
  registry: SessionRegistry;
  logger: Logger;
  /** Called on every authorised request (the idle timer). */
  onActivity: () => void;
  onStop: () => void;
  started: string;
  /** Requests are handled once this settles (the spool ingested at start). */
  ready?: Promise<void>;
}

class HttpProblem extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return readLimited(req, MAX_BODY, (message) => new HttpProblem(413, message));
}

function sameToken(given: Buffer, expected: string): boolean {
  const bytes = Buffer.from(expected);
  return given.length === bytes.length && timingSafeEqual(given, bytes);
}

/**
 * Who a request's bearer token lets in: `all` for the secret; `hooks` for the installed hooks'
 * token (`hooksToken`: the native hooks of any session) or a run token
 * (`runToken`) sent with the `X-Tally-Session` it was derived for — that session's native hooks
 * only; undefined for anything else.
 */
function authorised(req: IncomingMessage, secret: string, hooks: string): 'all' | 'hooks' | undefined {
  const header = req.headers.authorization;
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return undefined;
  const given = Buffer.from(header.slice(7).trim());
  if (sameToken(given, secret)) return 'all';
  if (sameToken(given, hooks)) return 'hooks';
  const session = req.headers['x-tally-session'];
  if (typeof session === 'string' && SESSION_ID.test(session) && sameToken(given, runToken(secret, session)))
    return 'hooks';
  return undefined;
}

/** A request's path and query, read without building a URL (every hook comes through here). */
interface Target {
  path: string;
  query: URLSearchParams;
}

function targetOf(raw: string | undefined): Target {
  const text = raw ?? '/';
  const mark = text.indexOf('?');
  return mark < 0
    ? { path: text, query: new URLSearchParams() }
    : { path: text.slice(0, mark), query: new URLSearchParams(text.slice(mark + 1)) };
}

/**
 * A body the strict reader refused, read as leniently as JavaScript reads it only to find the
 * session and the native event it names; undefined when even that fails.
 */
function looselyRead(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

const SESSION_ID = /^ses_[A-Za-z0-9_]+$/;

function hintOf(req: IncomingMessage, url: Target): SessionHint {
  const session = req.headers['x-tally-session'];
  const agent = url.query.get('agent');
  return {
    ...(typeof session === 'string' && SESSION_ID.test(session) ? { session } : {}),
    ...(agent && /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(agent) ? { agent } : {}),
  };
}

async function parsedBody(req: IncomingMessage): Promise<{ bytes: Buffer; value: unknown }> {
  const bytes = await readBody(req);
  const bad = firstBadUtf8Byte(bytes);
  if (bad !== undefined) throw new HttpProblem(400, `the body is not UTF-8 at byte ${bad}`);
  try {
    return { bytes, value: parseJson(bytes) };
  } catch (error) {
    throw new HttpProblem(400, `the body is not JSON: ${(error as Error).message}`);
  }
}

/** How many recent answers a session keeps for retries (a retry follows its request at once). */
const KEPT_REPLIES = 256;

/** Keeps an answer for a retry, under the event id and the digest of the bytes it came in. */
function rememberReply(held: Held, key: string, reply: Promise<HeldReply>): void {
  held.replies.set(key, reply);
  reply.catch(() => held.replies.delete(key));
  if (held.replies.size > KEPT_REPLIES) held.replies.delete(held.replies.keys().next().value as string);
}

export function createRecorderServer(options: RecorderServerOptions): Server {
  const { registry } = options;
  const installedToken = hooksToken(options.secret);
  // Awaited only until it settles: the hot path then takes no extra turn of the microtask queue.
  let waiting = options.ready !== undefined;
  options.ready?.then(
    () => {
      waiting = false;
    },
    () => {
      waiting = false;
    },
  );

  /** Records one captured event in its session and returns the boundary's decision. */
  async function capture(
    captured: Captured,
    body: Buffer,
    hint: SessionHint,
    harness: string,
    source: string,
  ): Promise<HeldReply & { held: Held }> {
    const held = await registry.forEvent(captured, hint);
    if (captured.transcriptPath !== undefined)
      rememberTranscript(held.where.state, held.id, {
        harness,
        harness_session: captured.harnessSession,
        path: captured.transcriptPath,
        // The calls it shows are the harness's calls: same event source, so the receipt joins them.
        ...(typeof captured.event.source === 'string' ? { event_source: captured.event.source } : {}),
      });
    const context = { source, agent: registry.attribution(held, captured.agent, harness) };
    const id = typeof captured.event.id === 'string' ? captured.event.id : undefined;
    if (id === undefined) return { held, ...(await record(held, captured, context)) };
    // A shim's retry of a request whose answer it lost (the same id and the same bytes): the same
    // answer, recorded once.
    const key = `${id}\0${sha256Hex(body)}`;
    const earlier = held.replies.get(key);
    if (earlier !== undefined) return { held, ...(await earlier) };
    // The id again with other bytes (or after its answer is no longer kept): never left unjudged
    // nor passed over, it is judged and recorded as an event of its own.
    const fresh = held.seen.has(id) ? eventId() : id;
    // Taken before the record is made, so a request with this id arriving meanwhile is not
    // recorded under it too.
    held.seen.add(fresh);
    const work = record(
      held,
      fresh === id ? captured : { ...captured, event: { ...captured.event, id: fresh } },
      context,
    );
    rememberReply(held, key, work);
    return { held, ...(await work) };
  }

  async function record(held: Held, captured: Captured, context: EventContext): Promise<HeldReply> {
    if (captured.mode === 'decide') {
      const decision = await held.open.boundary.decide(captured.event, context);
      return { decision, recorded: decision.recorded };
    }
    return { decision: null, recorded: (await held.open.boundary.observe(captured.event, context)).recorded };
  }

  /** A payload that cannot be translated is still recorded (as rejected) when its session is known. */
  async function rejectPayload(
    adapter: NativeAdapter,
    value: unknown,
    bytes: Buffer,
    reason: string,
    at: { pointer?: string; offset?: number },
    hint: SessionHint,
  ): Promise<void> {
    const where = (adapter.locate ?? locateSession)(value);
    if (where === undefined) return;
    await registry.admit(async () => {
      const held = await registry.forEvent(where, hint);
      await held.open.boundary.reject({ received: bytes, reason, source: 'hook', ...at }, { source: 'hook' });
    }, NOT_RECORDED);
  }

  /**
   * A payload Tally cannot judge: recorded as rejected, and answered as the adapter answers a deny
   * for that native event — a tool call or prompt is stopped (a 400 alone would let a fail-open hook
   * through); an event a deny cannot stop is a 400.
   */
  async function refuse(
    adapter: NativeAdapter,
    value: unknown,
    bytes: Buffer,
    reason: string,
    at: { pointer?: string; offset?: number },
    hint: SessionHint,
  ): Promise<JsonObject> {
    await rejectPayload(adapter, value, bytes, reason, at, hint).catch(() => undefined);
    const nativeEvent = isJsonObject(value) ? value.hook_event_name : undefined;
    const denied: BoundaryDecision = {
      decision: 'deny',
      permission: 'deny',
      reason: `Tally could not judge this event: ${reason}`,
      by: 'dev.tally.recorder',
      unknownFields: [],
      effects: { messages: [], injections: [] },
      answers: [],
      recorded: { seq: -1, digest: '' },
      rejected: true,
    };
    const answer = typeof nativeEvent === 'string' ? adapter.answer(nativeEvent, denied) : {};
    if (Object.keys(answer).length === 0) throw new HttpProblem(400, reason);
    return answer;
  }

  async function nativeHook(adapter: NativeAdapter, req: IncomingMessage, url: Target): Promise<JsonObject> {
    const hint = hintOf(req, url);
    const bytes = await readBody(req);
    const bad = firstBadUtf8Byte(bytes);
    if (bad !== undefined) {
      // The record keeps the digest of the bytes as received and the offset of the first bad one.
      return refuse(
        adapter,
        looselyRead(bytes),
        bytes,
        `the body is not UTF-8 at byte ${bad}`,
        { offset: bad },
        hint,
      );
    }
    let value: unknown;
    try {
      value = parseJson(bytes);
    } catch (error) {
      // JSON the strict reader refuses (an integer beyond 2^53 - 1, a lone surrogate, a duplicate
      // key: each can come from the model's own tool arguments) is a call Tally cannot judge, so
      // it is refused as one — recorded and denied — not answered 400, which a fail-open hook lets
      // through and a fail-closed one spools unrecorded. Only a body that is no JSON at all stays a 400.
      const pointer = error instanceof CanonicalError ? error.detail?.pointer : undefined;
      return refuse(
        adapter,
        looselyRead(bytes),
        bytes,
        `the body is not JSON Tally can read: ${(error as Error).message}`,
        typeof pointer === 'string' ? { pointer } : {},
        hint,
      );
    }
    let captured: Captured;
    try {
      const id = req.headers['x-tally-event-id'];
      captured = adapter.translate(
        value,
        typeof id === 'string' && /^[A-Za-z0-9_-]{1,80}$/.test(id) ? id : undefined,
      );
    } catch (error) {
      if (!(error instanceof CaptureError)) throw error;
      const pointer = error.detail?.pointer;
      return refuse(
        adapter,
        value,
        bytes,
        error.message,
        pointer !== undefined ? { pointer: String(pointer) } : {},
        hint,
      );
    }
    // A session the recorder opened for this harness session ends with it. The answer waits for
    // the seal (reconciliation included): the agent exits only after its hook is answered, so
    // nothing it leaves behind as it exits can cut the close short. The end and its seal are one
    // piece of work: a stop that begins between them finishes the seal.
    const decision = await registry.admit(async () => {
      const { held, decision } = await capture(captured, bytes, hint, adapter.harness, 'hook');
      await registry.sealIfEnded(held, captured.nativeEvent, adapter.endEvent);
      return decision;
    }, NOT_RECORDED);
    return adapter.answer(captured.nativeEvent, decision);
  }

  async function ingest(req: IncomingMessage, url: Target): Promise<JsonObject> {
    const { bytes, value } = await parsedBody(req);
    if (!isJsonObject(value) || !isJsonObject(value.event) || typeof value.source !== 'string')
      throw new HttpProblem(400, 'expected {source, mode, event, cwd, harness_session?, agent?}');
    const captured: Captured = {
      mode: value.mode === 'decide' ? 'decide' : 'observe',
      event: value.event,
      harnessSession:
        typeof value.harness_session === 'string'
          ? value.harness_session
          : `${value.source}-${String(value.cwd)}`,
      ...(typeof value.cwd === 'string' ? { cwd: value.cwd } : {}),
      agent:
        isJsonObject(value.agent) && typeof value.agent.instance === 'string'
          ? (value.agent as never)
          : { instance: String(value.source) },
      nativeEvent: 'ingest',
    };
    const hint = {
      ...hintOf(req, url),
      ...(typeof value.session === 'string' ? { session: value.session } : {}),
    };
    const source = value.source;
    const { held, decision, recorded } = await registry.admit(
      () => capture(captured, bytes, hint, String(value.harness ?? source), source),
      NOT_RECORDED,
    );
    return { session: held.id, decision, recorded };
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (waiting) await options.ready;
    const url = targetOf(req.url);
    const allowed = authorised(req, options.secret, installedToken);
    if (allowed === undefined)
      return send(res, 401, {
        error: { code: 'unauthorized', message: 'a recorder secret is required (Authorization: Bearer …)' },
      });
    options.onActivity();
    const key = `${req.method} ${url.path}`;
    const hooked = /^POST \/hooks\/([a-z0-9-]+)$/.exec(key);
    if (allowed === 'hooks' && !hooked)
      return send(res, 403, {
        error: {
          code: 'forbidden',
          message: `a hooks' token is for the hooks only, not ${key}: use the recorder secret`,
        },
      });
    if (key === 'GET /status')
      return send(res, 200, { pid: process.pid, started_at: options.started, sessions: registry.list() });
    const adapter = hooked ? adapterOf(hooked[1]!) : undefined;
    if (adapter) return send(res, 200, await nativeHook(adapter, req, url));
    if (key === 'POST /ingest') return send(res, 200, await ingest(req, url));
    if (key === 'POST /sessions') {
      const { value } = await parsedBody(req);
      if (!isJsonObject(value) || typeof value.cwd !== 'string')
        throw new HttpProblem(400, 'expected {cwd, agent?, registration?, witness?, wiring?}');
      const witness = value.witness === undefined ? undefined : witnessOf(value.witness);
      const wiring = value.wiring === undefined ? undefined : wiringOf(value.wiring);
      const cwd = value.cwd;
      const held = await registry.admit(
        () =>
          registry.start({
            cwd,
            ...(typeof value.agent === 'string' ? { agent: value.agent } : {}),
            ...(typeof value.registration === 'string' ? { registration: value.registration } : {}),
            ...(witness ? { witness } : {}),
            ...(wiring ? { wiring } : {}),
          }),
        'no session was started',
      );
      return send(res, 200, { session: held.id, root: held.open.info.root, state: held.where.state });
    }
    if (key === 'POST /sessions/close') {
      const { value } = await parsedBody(req);
      if (!isJsonObject(value) || typeof value.session !== 'string')
        throw new HttpProblem(400, 'expected {session, cwd?}');
      const closed = await registry.close(
        value.session,
        typeof value.cwd === 'string' ? value.cwd : undefined,
      );
      return send(res, 200, {
        session: value.session,
        package: closed.packagePath,
        records: closed.records,
        ...(closed.witness ? { witness: closed.witness } : {}),
      });
    }
    if (key === 'POST /stop') {
      send(res, 200, { stopping: true });
      options.onStop();
      return;
    }
    send(res, 404, { error: { code: 'not-found', message: `no endpoint ${key}` } });
  }

  return createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      // A project's git that did not answer in time, a file that is not a file: that request's
      // own failure, said to it and logged; the recorder goes on serving every other.
      const projectFault = error instanceof GitError || error instanceof RegularFileError;
      // A session that has ended or is sealed is a state the request met, not the recorder's fault.
      const sessionOver =
        error instanceof SessionError && (error.code === 'ended' || error.code === 'already-closed');
      const status =
        error instanceof HttpProblem
          ? error.status
          : error instanceof RecorderError || error instanceof BoundaryError || projectFault || sessionOver
            ? 409
            : 500;
      const code =
        error instanceof HttpProblem ? 'bad-request' : ((error as { code?: string }).code ?? 'error');
      if (status >= 500)
        options.logger('error', `${req.method} ${req.url}: ${(error as Error).stack ?? error}`);
      else if (projectFault) options.logger('warn', `${req.method} ${req.url}: ${(error as Error).message}`);
      if (!res.headersSent) send(res, status, { error: { code, message: (error as Error).message } });
    });
  });
}

/** `witness: {hub, every?}`: an http(s) URL and a whole number of records from 1 to 1,000,000. */
function wiringOf(value: unknown): SessionWiring {
  try {
    return parseWiring(value);
  } catch (error) {
    throw new HttpProblem(400, (error as Error).message);
  }
}

function witnessOf(value: unknown): WitnessOptions {
  if (!isJsonObject(value) || typeof value.hub !== 'string')
    throw new HttpProblem(400, 'witness: expected {hub: URL, every?: records}');
  let url: URL;
  try {
    url = new URL(value.hub);
  } catch {
    throw new HttpProblem(400, `witness.hub: '${value.hub.slice(0, 200)}' is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new HttpProblem(400, `witness.hub: ${url.protocol} is not http: or https:`);
  const every = value.every ?? DEFAULT_WITNESS_EVERY;
  if (typeof every !== 'number' || !Number.isInteger(every) || every < 1 || every > 1_000_000)
    throw new HttpProblem(400, 'witness.every: expected a whole number of records from 1 to 1000000');
  return { hub: value.hub, every };
}
