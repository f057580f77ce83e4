/**
 * Session lifecycle: start (baseline + session.start record), record one event (redact, judge
 * against the agent certificate, append signed), close (session.end record, seal into a package).
 * Every record goes through `LogWriter`, so every path shares its lock, chain and durability.
 */

import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isRfc3339DateTime, validateEvent } from '../ahp/messages/index.js';
import { capabilityManifest } from '../ahp/protocol/capabilities.js';
import { parseJson } from '../core/canonical.js';
import { TALLY_VERSION } from '../core/version.js';
import { type AgentCertificate, verifyCertificate } from '../evidence/certificate.js';
import { LogWriter } from '../evidence/log/writer.js';
import { certificatePolicy } from '../evidence/package/cross-verify.js';
import { PackageError } from '../evidence/package/grammar.js';
import { sealLog } from '../evidence/package/seal.js';
import { evaluateAction } from '../evidence/policy/patterns.js';
import type { AgentAttribution, CanonicalEvent, PolicyDecision } from '../evidence/record/record.js';
import { redactValue } from '../evidence/redact.js';
import { captureBaseline } from './baseline.js';
import type { ShipSigner } from './identity.js';
import {
  currentSession,
  logPath,
  newSessionId,
  packagePath,
  readSessionInfo,
  SESSION_TYPE,
  SessionError,
  type SessionInfo,
  sessionDir,
  setCurrent,
  writeSessionInfo,
} from './store.js';

export const TALLY_SOURCE_URI = 'urn:tally:cli';
export const POLICY_DECIDER = 'tally-policy';

export interface Clock {
  now(): Date;
}

const systemClock: Clock = { now: () => new Date() };

export function eventId(): string {
  return `evt_${randomBytes(8).toString('hex')}`;
}

export interface StartOptions {
  state: string;
  root: string;
  signer: ShipSigner;
  agent?: AgentAttribution;
  /** Path of an agent certificate file to run under. */
  certificatePath?: string;
  clock?: Clock;
}

export async function startSession(options: StartOptions): Promise<{ info: SessionInfo; seq: number }> {
  const clock = options.clock ?? systemClock;
  const now = clock.now();
  const id = newSessionId(now);
  const info: SessionInfo = {
    type: SESSION_TYPE,
    id,
    state: 'open',
    started_at: now.toISOString(),
    root: options.root,
  };
  if (options.agent) info.agent = options.agent;
  mkdirSync(sessionDir(options.state, id), { recursive: true, mode: 0o700 });
  if (options.certificatePath) {
    const target = join(sessionDir(options.state, id), 'certificate.json');
    copyFileSync(options.certificatePath, target);
    info.certificate = target;
  }
  writeSessionInfo(options.state, info);
  const baseline = captureBaseline(options.root);
  const event: CanonicalEvent = {
    id: eventId(),
    type: 'session.start',
    time: now.toISOString(),
    source: TALLY_SOURCE_URI,
    session: { id, cwd: options.root, workspaceRoots: [options.root] },
    trigger: 'startup',
    harness: { name: 'tally', version: TALLY_VERSION },
    permissionMode: 'default',
    manifest: capabilityManifest(),
    items: [],
    extensions: { 'dev.tally.workspace': { root: options.root, baseline } },
  };
  const log = await LogWriter.open(logPath(options.state, id), {
    session: id,
    signer: options.signer,
    now: () => clock.now(),
  });
  try {
    const { seq } = await log.append({
      source: 'cli',
      event,
      ...(options.agent ? { agent: options.agent } : {}),
    });
    setCurrent(options.state, id);
    return { info, seq };
  } finally {
    await log.close();
  }
}

function isClosedOnDisk(state: string, id: string): boolean {
  try {
    return readSessionInfo(state, id).state === 'closed';
  } catch {
    return false;
  }
}

/**
 * The certificate the session runs under, verified against the ship key on every use: the copy in
 * the session directory is a file like any other, and live policy must not follow an edited one.
 */
function sessionCertificate(info: SessionInfo, signer: ShipSigner): AgentCertificate | null {
  if (!info.certificate || !existsSync(info.certificate)) return null;
  try {
    return verifyCertificate(parseJson(readFileSync(info.certificate, 'utf8')), [signer.privateKey])
      .certificate;
  } catch (error) {
    throw new SessionError(
      'corrupt',
      `the session's certificate ${info.certificate} no longer verifies with the ship key (${(error as Error).message}); nothing was recorded`,
    );
  }
}

/** What Tally's own policy says about a tool call, from the session's certificate. */
export function policyDecision(
  certificate: AgentCertificate | null,
  event: CanonicalEvent,
  cwd?: string,
): PolicyDecision | undefined {
  if (!certificate || event.type !== 'tool.before') return undefined;
  const tool = event.tool as { name?: unknown; input?: unknown; kind?: unknown } | undefined;
  if (typeof tool?.name !== 'string') return undefined;
  const verdict = evaluateAction(certificatePolicy(certificate), {
    tool: tool.name,
    input: tool.input,
    ...(typeof tool.kind === 'string' ? { kind: tool.kind } : {}),
    ...(cwd ? { cwd } : {}),
  });
  const decision = { forbidden: 'deny', outside: 'deny', escalate: 'ask', allowed: 'allow' } as const;
  const reason = {
    forbidden: 'matches a forbidden pattern',
    outside: 'outside the certificate’s bounded actions',
    escalate: 'needs escalation',
    allowed: 'within bounded actions',
  } as const;
  return {
    decision: decision[verdict.verdict],
    by: POLICY_DECIDER,
    reason: verdict.reason ?? reason[verdict.verdict],
    ...(verdict.pattern ? { rule: verdict.pattern } : {}),
  };
}

export interface RecordOptions {
  state: string;
  session: SessionInfo;
  signer: ShipSigner;
  event: unknown;
  source: string;
  agent?: AgentAttribution;
  clock?: Clock;
}

/**
 * Fills what a caller may leave out (id, time, source, session), redacts secrets, validates the
 * result as an AHP event, and only then appends. Invalid input changes nothing.
 */
const KEPT_UNKNOWNS = new Set(['event.unknown-type', 'unknown-field']);

export interface PreparedEvent {
  event: CanonicalEvent;
  /** JSON pointers of the fields this AHP snapshot does not define (kept as received). */
  unknownFields: string[];
}

export function prepareEvent(raw: unknown, session: SessionInfo, now: Date): PreparedEvent {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new SessionError('bad-event', '/: the event must be a JSON object (an AHP canonical event)', {
      issues: [{ pointer: '', rule: 'type', message: 'the event must be a JSON object' }],
    });
  }
  const input = raw as Record<string, unknown>;
  const filled: Record<string, unknown> = {
    id: eventId(),
    time: now.toISOString(),
    source: TALLY_SOURCE_URI,
    ...input,
  };
  if (filled.session === undefined) filled.session = { id: session.id };
  const event = redactValue(filled) as CanonicalEvent;
  // Event types this AHP snapshot does not define, and fields it does not know, are kept (event
  // types are shown in the receipt's `unknown` section, fields in the record), never refused;
  // everything else about the event must still be valid.
  const found = validateEvent(event);
  const issues = found.filter((i) => !KEPT_UNKNOWNS.has(i.rule));
  if (!isRfc3339DateTime(String(event.time)) && !issues.some((i) => i.pointer === '/time')) {
    issues.push({ pointer: '/time', rule: 'format', message: 'time must be an RFC 3339 date-time' });
  }
  if (issues.length > 0) {
    const list = issues.map((i) => `  ${i.pointer || '/'}: ${i.message} [${i.rule}]`).join('\n');
    throw new SessionError(
      'bad-event',
      `the event is not a valid AHP event; nothing was recorded:\n${list}`,
      { issues },
    );
  }
  return { event, unknownFields: found.filter((i) => i.rule === 'unknown-field').map((i) => i.pointer) };
}

export async function recordEvent(
  options: RecordOptions,
): Promise<{ seq: number; decision?: PolicyDecision; event: CanonicalEvent; unknownFields: string[] }> {
  const clock = options.clock ?? systemClock;
  if (options.session.state === 'closed') {
    throw new SessionError('already-closed', `session ${options.session.id} is closed; start a new one`);
  }
  const { event, unknownFields } = prepareEvent(options.event, options.session, clock.now());
  const decision = policyDecision(
    sessionCertificate(options.session, options.signer),
    event,
    options.session.root,
  );
  const agent = options.agent ?? options.session.agent;
  const log = await LogWriter.open(logPath(options.state, options.session.id), {
    session: options.session.id,
    signer: options.signer,
    now: () => clock.now(),
  });
  try {
    // Checked again under the log's lock: a close that ran since the caller read the session wins.
    if (log.lastRecord?.event.type === 'session.end' || isClosedOnDisk(options.state, options.session.id)) {
      throw new SessionError('already-closed', `session ${options.session.id} is closed; start a new one`);
    }
    const { seq } = await log.append({
      source: options.source,
      event,
      ...(agent ? { agent } : {}),
      ...(decision ? { decision } : {}),
    });
    return { seq, event, unknownFields, ...(decision ? { decision } : {}) };
  } finally {
    await log.close();
  }
}

export interface CloseResult {
  info: SessionInfo;
  packagePath: string;
  records: number;
  recovered: { offset: number; bytes: number; quarantinePath: string } | null;
}

/** Appends session.end (unless a crashed close already did), then seals the log into a package. */
export async function closeSession(options: {
  state: string;
  session: SessionInfo;
  signer: ShipSigner;
  clock?: Clock;
}): Promise<CloseResult> {
  const clock = options.clock ?? systemClock;
  const { state, session, signer } = options;
  if (session.state === 'closed') {
    throw new SessionError(
      'already-closed',
      `session ${session.id} is already closed; its package is ${session.package ?? packagePath(state, session.id)}`,
    );
  }
  const path = logPath(state, session.id);
  // The log's lock is held until session.json says closed, so two closes (or a close and an event)
  // cannot interleave: the second sees the first's result and changes nothing.
  const log = await LogWriter.open(path, { session: session.id, signer, now: () => clock.now() });
  const out = packagePath(state, session.id);
  let records: number;
  let closed: SessionInfo;
  try {
    const current = readSessionInfo(state, session.id);
    if (current.state === 'closed') {
      throw new SessionError(
        'already-closed',
        `session ${session.id} is already closed; its package is ${current.package ?? out}`,
      );
    }
    if (log.lastRecord?.event.type !== 'session.end') {
      const now = clock.now();
      await log.append({
        source: 'cli',
        event: {
          id: eventId(),
          type: 'session.end',
          time: now.toISOString(),
          source: TALLY_SOURCE_URI,
          session: { id: session.id },
          outcome: 'completed',
          reason: 'closed',
        },
        ...(session.agent ? { agent: session.agent } : {}),
      });
    }
    records = log.size;
    mkdirSync(join(state, 'packages'), { recursive: true });
    try {
      await sealLog({
        logPath: path,
        outPath: out,
        session: session.id,
        records,
        signer,
        format: log.recordVersion === 1 ? 'v1' : 'v2',
      });
    } catch (error) {
      if (error instanceof PackageError && error.code === 'log') {
        throw new SessionError('corrupt', error.message, error.detail);
      }
      throw error;
    }
    closed = { ...current, state: 'closed', closed_at: clock.now().toISOString(), package: out };
    writeSessionInfo(state, closed);
  } finally {
    await log.close();
  }
  if (currentSession(state) === session.id) setCurrent(state, null);
  return { info: closed, packagePath: out, records, recovered: log.recovered };
}
