/**
 * Session lifecycle: start (baseline, bindings, the `session.start` record), record one captured
 * event through the boundary (src/boundary), close (`session.end`, seal into a package). Every
 * record goes through one boundary over the log's file store, so every path shares its lock,
 * chain and durability.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { HarnessOptions } from '../ahp/harness/harness.js';
import { capabilityManifest } from '../ahp/protocol/capabilities.js';
import { catalogueEntry } from '../ahp/protocol/catalogue.js';
import type { Registration } from '../ahp/registration/types.js';
import {
  type Boundary,
  type BoundaryDecision,
  type BoundaryOptions,
  type Clock,
  openBoundary,
  type Recorded,
} from '../boundary/boundary.js';
import { BoundaryError, eventId, TALLY_SOURCE_URI } from '../boundary/prepare.js';
import { captureBaseline } from '../capture/reconcile/baseline.js';
import { trustKeys } from '../core/dsse.js';
import type { CanonicalEvent } from '../core/event.js';
import { isJsonObject } from '../core/json.js';
import { toPublicKey } from '../core/keys.js';
import { writeRegularFileSync } from '../core/regular-file.js';
import { TALLY_VERSION } from '../core/version.js';
import type { AgentCertificate } from '../evidence/certificate.js';
import { FileRecordStore, StoreError, type TornTail } from '../evidence/log/file-store.js';
import { HeadFile, headFilePath } from '../evidence/log/head-file.js';
import { acquireLock } from '../evidence/log/lock.js';
import { checkLine } from '../evidence/log/reader.js';
import { controlPlanePlaces, sessionWorkspace } from '../evidence/normalize.js';
import { PackageError } from '../evidence/package/grammar.js';
import { type SealResult, sealLog } from '../evidence/package/seal.js';
import type { ChainHead } from '../evidence/record/chain.js';
import type { AgentAttribution, EventRecord, SessionBinding } from '../evidence/record/record.js';
import { keepPointer, trustedHere } from './between/pointer.js';
import { sinceLastSession } from './between/since.js';
import {
  boundCertificate,
  boundRegistration,
  certificateBinding,
  readRegistration,
  readRegistrationFile,
  readVerifiedCertificate,
  registrationDigest,
} from './binding.js';
import { type ShipSigner, signerHome } from './identity.js';
import { keepSnapshot, reconcileSession } from './reconcile.js';
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
import { reconcileTranscripts } from './transcripts.js';
import { type SessionWiring, WIRING_EXTENSION } from './wiring.js';

export type { Clock };
export { eventId, TALLY_SOURCE_URI };

const systemClock: Clock = { now: () => new Date() };

/** Where session.start says which harness session the recorder opened the session for. */
const OPENED_FOR_EXTENSION = 'dev.tally.opened-for';

/** The chain head of a session, kept under the Tally home of its ship key (never in the project). */
function headOf(signer: ShipSigner, session: string): HeadFile {
  return new HeadFile(headFilePath(signerHome(signer), session), session, signer);
}

/** The project's hook registration, when it has one: `<state>/hooks.json`. */
export function projectRegistrationPath(state: string): string {
  return join(state, 'hooks.json');
}

export interface StartOptions {
  state: string;
  root: string;
  signer: ShipSigner;
  agent?: AgentAttribution;
  /** Path of an agent certificate file to run under. */
  certificatePath?: string;
  /** Path of a hook registration; default the project's `hooks.json` when it exists. */
  registrationPath?: string;
  clock?: Clock;
  /** Told of session.start once it is durable (the live witness's first head). */
  onRecorded?: BoundaryOptions['onRecorded'];
  /** Files hashed at most for the baseline and the close's reconciliation (the rest counted). */
  reconcileLimit?: number;
  /** What `tally run` wired (./wiring.ts), bound into session.start. */
  wiring?: SessionWiring;
  /** How long the baseline's git commands may take together (ms). */
  reconcileTimeoutMs?: number;
  /** The user's home, recorded as a control-plane place (default: this process's home). */
  home?: string;
  /** Refuse (`still-open`) while the project's current session is open, checked under the start lock. */
  refuseWhileOpen?: boolean;
  /** The process that will seal the session itself (`tally wrap`'s own session). */
  owner?: SessionInfo['owner'];
  /** The harness session the recorder opens this session for on the spot, bound into session.start. */
  openedFor?: string;
}

/**
 * Starts a session, one start at a time in a project across processes (the recorder's and
 * `tally session start`'s): under the project's start lock, with `refuseWhileOpen` a session still
 * open there refuses the start (`still-open`), so two starts at once never leave two sessions open
 * with `current` naming only one of them.
 */
export async function startSession(options: StartOptions): Promise<{ info: SessionInfo; seq: number }> {
  mkdirSync(join(options.state, 'sessions'), { recursive: true, mode: 0o700 });
  const lock = await acquireLock(join(options.state, 'sessions', 'start'));
  try {
    const open = options.refuseWhileOpen ? currentSession(options.state) : null;
    if (open !== null && isOpen(options.state, open))
      throw new SessionError(
        'still-open',
        `session ${open} is still open in this project; close it first ('tally session close')`,
        { session: open },
      );
    return await startUnlocked(options);
  } finally {
    lock.release();
  }
}

function isOpen(state: string, id: string): boolean {
  try {
    return readSessionInfo(state, id).state === 'open';
  } catch {
    return false;
  }
}

async function startUnlocked(options: StartOptions): Promise<{ info: SessionInfo; seq: number }> {
  const clock = options.clock ?? systemClock;
  const now = clock.now();
  const id = newSessionId(now);
  const dir = sessionDir(options.state, id);
  const info: SessionInfo = {
    type: SESSION_TYPE,
    id,
    state: 'open',
    started_at: now.toISOString(),
    root: options.root,
  };
  if (options.agent) info.agent = options.agent;
  if (options.owner) info.owner = options.owner;
  const binding: SessionBinding = {};
  // Each file is read once, and its copy kept beside the session is the bytes that were checked.
  let certificateBytes: Buffer | undefined;
  if (options.certificatePath) {
    const { envelope, certificate, bytes } = readVerifiedCertificate(options.certificatePath, [
      options.signer.privateKey,
    ]);
    binding.certificate = certificateBinding(envelope, certificate);
    certificateBytes = bytes;
  }
  const registrationPath =
    options.registrationPath ??
    (existsSync(projectRegistrationPath(options.state)) ? projectRegistrationPath(options.state) : undefined);
  let registrationBytes: Buffer | undefined;
  if (registrationPath) {
    registrationBytes = readRegistrationFile(registrationPath);
    readRegistration(registrationBytes, registrationPath); // refused before anything is written
    binding.registration = { digest: registrationDigest(registrationBytes) };
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (certificateBytes) {
    info.certificate = join(dir, 'certificate.json');
    writeRegularFileSync(info.certificate, certificateBytes);
  }
  if (registrationBytes) {
    info.registration = join(dir, 'registration.json');
    writeRegularFileSync(info.registration, registrationBytes);
  }
  writeSessionInfo(options.state, info);
  const bounds = {
    ...(options.reconcileLimit ? { limit: options.reconcileLimit } : {}),
    ...(options.reconcileTimeoutMs ? { timeoutMs: options.reconcileTimeoutMs } : {}),
  };
  const captured = await captureBaseline(options.root, bounds.limit, bounds);
  const { baseline } = captured;
  // After the baseline: a write landing between the two is in this session's pass and in `since`.
  const since = await sinceLastSession({
    state: options.state,
    root: options.root,
    home: signerHome(options.signer),
    trusted: trustedHere(options.signer),
    now,
    start: captured,
    ...bounds,
  });
  keepSnapshot(options.state, id, 'start', captured);
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
    extensions: {
      'dev.tally.workspace': {
        root: options.root,
        // Where the agents' control plane lies outside the project: judged from here, live and offline.
        home: options.home ?? homedir(),
        tally_home: signerHome(options.signer),
        baseline,
        since,
      },
      ...(options.wiring ? { [WIRING_EXTENSION]: { ...options.wiring } } : {}),
      ...(options.openedFor !== undefined
        ? { [OPENED_FOR_EXTENSION]: { harness_session: options.openedFor } }
        : {}),
    },
  };
  const store = await FileRecordStore.open(logPath(options.state, id), { head: headOf(options.signer, id) });
  try {
    const boundary = openBoundary(
      boundaryOptions(info, store, options.signer, null, null, { env: {} }, clock, options.onRecorded),
    );
    const { seq } = await boundary.note({
      source: 'cli',
      event,
      ...(options.agent ? { agent: options.agent } : {}),
      ...(binding.certificate || binding.registration ? { binding } : {}),
    });
    await boundary.close();
    setCurrent(options.state, id);
    return { info, seq };
  } finally {
    await store.close();
  }
}

function boundaryOptions(
  info: SessionInfo,
  store: FileRecordStore,
  signer: ShipSigner,
  certificate: AgentCertificate | null,
  registration: Registration | null,
  harness: HarnessOptions,
  clock: Clock,
  onRecorded: BoundaryOptions['onRecorded'],
): BoundaryOptions {
  return {
    session: { id: info.id, root: info.root, ...(info.agent ? { agent: info.agent } : {}) },
    store,
    signer,
    certificate,
    registration,
    harness,
    clock,
    ...(onRecorded ? { onRecorded } : {}),
  };
}

/** Every record of the log, each verified with the ship key. */
async function* logRecords(store: FileRecordStore, signer: ShipSigner): AsyncGenerator<EventRecord> {
  const keys = trustKeys([toPublicKey(signer.privateKey)]);
  for await (const line of store.lines(0)) {
    const checked = checkLine(line, keys);
    if (!checked.ok)
      throw new SessionError('corrupt', `a record of the session log does not verify: ${checked.message}`);
    yield checked.record;
  }
}

/** The session's first record, `session.start`, verified with the ship key: it holds the bindings. */
async function startRecord(store: FileRecordStore, signer: ShipSigner): Promise<EventRecord | null> {
  for await (const line of store.lines(0)) {
    const checked = checkLine(line, trustKeys([toPublicKey(signer.privateKey)]));
    if (!checked.ok)
      throw new SessionError('corrupt', `the session log's first record does not verify: ${checked.message}`);
    return checked.record.event.type === 'session.start' ? checked.record : null;
  }
  return null;
}

function extensionOf(start: EventRecord | null, name: string): unknown {
  return (start?.event.extensions as Record<string, unknown> | undefined)?.[name];
}

function openedFor(start: EventRecord | null): string | undefined {
  const extension = extensionOf(start, OPENED_FOR_EXTENSION);
  return isJsonObject(extension) && typeof extension.harness_session === 'string'
    ? extension.harness_session
    : undefined;
}

function isClosedOnDisk(state: string, id: string): boolean {
  try {
    return readSessionInfo(state, id).state === 'closed';
  } catch {
    return false;
  }
}

export interface OpenSession {
  boundary: Boundary;
  info: SessionInfo;
  /**
   * The state folder the session's log is in now: the one it was opened in, or where it went when
   * its project was moved while the session was open (read from the open log, before `close`).
   */
  stateNow(): string;
  /** Ends the boundary and releases the log. */
  close(): Promise<void>;
  recovered: TornTail | null;
  /** The harness session the recorder opened this session for, as its signed session.start says. */
  openedFor: string | undefined;
}

/**
 * Opens a session for recording: its log (locked), its bound certificate and registration (each
 * checked against the digests `session.start` recorded), and the boundary over them. A project
 * registration that changed since the start is not followed: the change is recorded
 * (`tally.registration.changed`) and the session keeps its bound copy.
 */
export async function openSession(options: {
  state: string;
  session: SessionInfo;
  signer: ShipSigner;
  harness?: HarnessOptions;
  clock?: Clock;
  /** Told of every record once it is durable (the recorder's live witness). */
  onRecorded?: BoundaryOptions['onRecorded'];
}): Promise<OpenSession> {
  const clock = options.clock ?? systemClock;
  const info = options.session;
  if (info.state === 'closed')
    throw new SessionError('already-closed', `session ${info.id} is closed; start a new one`);
  const store = await FileRecordStore.open(logPath(options.state, info.id), {
    head: headOf(options.signer, info.id),
  });
  try {
    const start = await startRecord(store, options.signer);
    const binding = start?.binding;
    const certificate =
      info.certificate && existsSync(info.certificate)
        ? boundCertificate(info.certificate, options.signer, binding)
        : null;
    if (binding?.certificate && certificate === null)
      throw new SessionError(
        'corrupt',
        `session ${info.id} started under a certificate whose copy is gone; nothing was recorded`,
      );
    const registration = binding?.registration ? boundRegistration(info.registration ?? '', binding) : null;
    const judged = boundaryOptions(
      info,
      store,
      options.signer,
      certificate,
      registration,
      options.harness ?? { env: {} },
      clock,
      options.onRecorded,
    );
    // The control plane's places are the ones the signed start recorded, as the verifier reads them.
    const places = controlPlanePlaces(start ? sessionWorkspace([start]).frame : {});
    const boundary = openBoundary({ ...judged, session: { ...judged.session, places } });
    if (isClosedOnDisk(options.state, info.id)) {
      await boundary.close();
      throw new SessionError('already-closed', `session ${info.id} is closed; start a new one`);
    }
    if (boundary.lastRecord?.event.type === 'session.end') {
      await boundary.close();
      throw new SessionError(
        'ended',
        `session ${info.id} has ended (its log ends with session.end) but is not sealed; close it to seal it ('tally session close')`,
        // A run's session (its start says what the run wired) is the run's to seal.
        { run: isJsonObject(extensionOf(start, WIRING_EXTENSION)) },
      );
    }
    await noteRegistrationChange(options.state, info, binding, boundary);
    return {
      boundary,
      info,
      recovered: store.recovered,
      openedFor: openedFor(start),
      // <state>/sessions/<id>/events.log
      stateNow: () => dirname(dirname(dirname(store.whereNow()))),
      close: async () => {
        await boundary.close();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/** Records once per distinct change that the project's registration is not the session's. */
async function noteRegistrationChange(
  state: string,
  info: SessionInfo,
  binding: SessionBinding | undefined,
  boundary: Boundary,
): Promise<void> {
  const path = projectRegistrationPath(state);
  const found = existsSync(path) ? registrationDigest(readRegistrationFile(path)) : null;
  const expected = binding?.registration?.digest ?? null;
  if (found === expected || (info.registration_changes ?? []).includes(String(found))) return;
  await boundary.note({
    source: 'cli',
    event: {
      id: eventId(),
      type: 'tally.registration.changed',
      time: new Date().toISOString(),
      source: TALLY_SOURCE_URI,
      session: { id: info.id },
      extensions: { 'dev.tally.registration': { expected, found, path, followed: false } },
    },
  });
  info.registration_changes = [...(info.registration_changes ?? []), String(found)];
  writeSessionInfo(state, info);
}

export interface RecordOptions {
  state: string;
  session: SessionInfo;
  signer: ShipSigner;
  event: unknown;
  source: string;
  agent?: AgentAttribution;
  harness?: HarnessOptions;
  clock?: Clock;
}

export interface RecordResult {
  seq: number;
  /** JSON pointers of fields this AHP snapshot does not define (kept as received). */
  unknownFields: string[];
  event: { id?: unknown; type?: unknown };
  /** For an event that could still be stopped: the boundary's decision. */
  decision?: BoundaryDecision;
  recorded: Recorded;
}

/**
 * One captured event through the boundary: an interceptable event is decided (judged, recorded,
 * answered), any other observed (recorded). Input that is not a valid event is recorded as
 * rejected and then refused (BoundaryError 'bad-event').
 */
export async function recordEvent(options: RecordOptions): Promise<RecordResult> {
  const open = await openSession(options);
  try {
    const raw = options.event as { type?: unknown; id?: unknown };
    const context = { source: options.source, ...(options.agent ? { agent: options.agent } : {}) };
    const interceptable = typeof raw?.type === 'string' && catalogueEntry(raw.type)?.interceptable === true;
    if (interceptable) {
      const decision = await open.boundary.decide(options.event, context);
      if (decision.rejected) throw rejectedError(decision.recorded, decision.reason);
      return {
        seq: decision.recorded.seq,
        event: raw,
        decision,
        recorded: decision.recorded,
        unknownFields: decision.unknownFields,
      };
    }
    const { recorded, unknownFields } = await open.boundary.observe(options.event, context);
    return { seq: recorded.seq, event: raw, recorded, unknownFields };
  } finally {
    await open.close();
  }
}

function rejectedError(recorded: Recorded, reason = 'the event is not a valid AHP event'): BoundaryError {
  return new BoundaryError(
    'bad-event',
    `${reason}\n(recorded as tally.ingest.rejected, seq ${recorded.seq})`,
    {
      recorded,
    },
  );
}

export interface CloseResult {
  info: SessionInfo;
  packagePath: string;
  records: number;
  recovered: TornTail | null;
}

/** Appends session.end (unless a crashed close already did), then seals the log into a package. */
export async function closeSession(options: {
  state: string;
  session: SessionInfo;
  signer: ShipSigner;
  clock?: Clock;
  onProgress?: (records: number, total: number) => void;
  /** Told of every record the close appends (the live witness sees session.end). */
  onRecorded?: BoundaryOptions['onRecorded'];
  /** The head the recorder held in memory: a log that ends before it is refused. */
  expectedHead?: ChainHead | null;
  /** Paths looked at most by the reconciliation (the rest counted in its summary). */
  reconcileLimit?: number;
  /** How long the reconciliation's git commands may take together (ms). */
  reconcileTimeoutMs?: number;
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
  const head = headOf(signer, session.id);
  const store = await FileRecordStore.open(path, { head });
  const out = packagePath(state, session.id);
  let records: number;
  let closed: SessionInfo;
  try {
    const boundary = openBoundary(
      boundaryOptions(session, store, signer, null, null, { env: {} }, clock, options.onRecorded),
    );
    const expected = options.expectedHead;
    const found = boundary.head?.seq ?? -1;
    if (expected && found < expected.seq) {
      // The head file learns what the recorder knew, so a later open is refused as well.
      await head.write(expected);
      throw new StoreError(
        'truncated-log',
        `${path} ends at record ${found} but the recorder holding it appended up to record ${expected.seq}: records ${found + 1}–${expected.seq} were removed from the log; nothing was sealed`,
        { path, missing: { from: found + 1, to: expected.seq }, head_digest: expected.digest },
      );
    }
    const current = readSessionInfo(state, session.id);
    if (current.state === 'closed') {
      throw new SessionError(
        'already-closed',
        `session ${session.id} is already closed; its package is ${current.package ?? out}`,
      );
    }
    const ended = boundary.lastRecord?.event.type === 'session.end';
    // The transcript first: what it alone saw is then a witness the tree's pass corroborates.
    await reconcileTranscripts({ state, session: session.id, records: logRecords(store, signer), boundary });
    await reconcileSession({
      state,
      session: session.id,
      records: logRecords(store, signer),
      boundary,
      now: () => clock.now(),
      ...(options.reconcileLimit ? { limit: options.reconcileLimit } : {}),
      ...(options.reconcileTimeoutMs ? { timeoutMs: options.reconcileTimeoutMs } : {}),
    });
    if (!ended) {
      await boundary.note({
        source: 'cli',
        event: {
          id: eventId(),
          type: 'session.end',
          time: clock.now().toISOString(),
          source: TALLY_SOURCE_URI,
          session: { id: session.id },
          outcome: 'completed',
          reason: 'closed',
        },
        ...(session.agent ? { agent: session.agent } : {}),
      });
    }
    records = boundary.size;
    const format = boundary.recordVersion === 1 ? 'v1' : 'v2';
    await boundary.close();
    mkdirSync(join(state, 'packages'), { recursive: true });
    let sealed: SealResult;
    try {
      sealed = await sealLog({
        logPath: path,
        outPath: out,
        session: session.id,
        records,
        signer,
        format,
        ...(options.onProgress ? { onProgress: options.onProgress } : {}),
      });
    } catch (error) {
      if (error instanceof PackageError && error.code === 'log') {
        throw new SessionError('corrupt', error.message, error.detail);
      }
      throw error;
    }
    closed = { ...current, state: 'closed', closed_at: clock.now().toISOString(), package: out };
    writeSessionInfo(state, closed);
    keepPointer(signerHome(signer), closed, sealed.digest);
  } finally {
    await store.close();
  }
  if (currentSession(state) === session.id) setCurrent(state, null);
  return { info: closed, packagePath: out, records, recovered: store.recovered };
}
