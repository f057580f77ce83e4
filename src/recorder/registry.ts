/**
 * The sessions one recorder holds open: one boundary (one writer, the log's lock) per Tally
 * session, found for each captured event by the session its run named, else the harness session
 * already seen, else the session open for its project (the repository of its cwd), else a session
 * opened for it on the spot. Two agents in two repositories get two sessions; nothing mixes them.
 */
import { dirname } from 'node:path';
import type { Logger } from '../ahp/transports/options.js';
import type { BoundaryDecision, Recorded } from '../boundary/boundary.js';
import type { ChainHead } from '../evidence/record/chain.js';
import type { AgentAttribution } from '../evidence/record/record.js';
import type { Witness } from '../hub-client/witness.js';
import { resolveAgent } from '../session/agents.js';
import { formerAgentOf, keepFormerAgent } from '../session/former-agents.js';
import { defaultTrustedKeys, loadShipSigner, type ShipSigner } from '../session/identity.js';
import {
  type CloseResult,
  closeSession,
  type OpenSession,
  openSession,
  startSession,
} from '../session/lifecycle.js';
import { findProjectDir, type Places, places, sessionRootForAsync } from '../session/paths.js';
import { currentSession, readSessionInfo, SessionError, type SessionInfo } from '../session/store.js';
import { rememberTranscript } from '../session/transcripts.js';
import type { SessionWiring } from '../session/wiring.js';
import { RecorderError } from './config.js';
import {
  flushWitness,
  sessionWitness,
  type WitnessOptions,
  type WitnessSummary,
  witnessHook,
} from './session-witness.js';

/** What an event was answered and where it was recorded (decision null: an observed event). */
export interface HeldReply {
  decision: BoundaryDecision | null;
  recorded: Recorded;
}

export interface Held {
  id: string;
  where: Places;
  open: OpenSession;
  /**
   * Opened by the recorder for a harness session (and sealed when one ends): what its signed
   * session.start says, so a recorder started again holds it the same way.
   */
  implicit: boolean;
  harnessSessions: Set<string>;
  /** Event ids recorded through this recorder (spooled events are not recorded twice). */
  seen: Set<string>;
  /**
   * The answers to this session's latest events, by event id and the digest of the bytes each came
   * in, so a shim's retry of the same request gets the same answer.
   */
  replies: Map<string, Promise<HeldReply>>;
  lastActive: number;
  /** The live witness sending this session's chain heads to a hub, when one was asked for. */
  witness?: Witness;
  /** Under way while the log is opened again after a failed write. */
  reopening?: Promise<void> | undefined;
}

export interface SessionSummary {
  session: string;
  root: string;
  state: string;
  agent: string | null;
  implicit: boolean;
  harness_sessions: string[];
  records: number;
}

/** What a request says about the session it belongs to, beyond the event itself. */
export interface SessionHint {
  /** The Tally session the run named (`TALLY_SESSION`). */
  session?: string;
  /** The agent a session opened on the spot runs for (its certificate). */
  agent?: string;
}

export type Sealed = CloseResult & { witness?: WitnessSummary };

/** Harness sessions whose former agent one recorder keeps. */
const FORMER_KEPT = 10_000;

/** A harness session in one project (its state folder): a former agent is that project's. */
function formerKey(state: string, harnessSession: string): string {
  return `${state}\0${harnessSession}`;
}

/**
 * `held`, when it runs under the agent whose certificate judged the harness session before
 * (`former`), or when none did. Otherwise the event is refused: another session open in the project
 * (one the agent opened itself, with no certificate or another's) would judge its calls by another
 * certificate. Refused, an interceptable call fails closed where its hook says so.
 */
function judgedAlike(held: Held, harnessSession: string, former: string | undefined): Held {
  const agent = held.open.info.agent?.name;
  if (former === undefined || former === agent) return held;
  throw new RecorderError(
    'refused',
    `harness session ${harnessSession} was judged under ${former}'s certificate, and the session open here (${held.id}) runs under ${agent === undefined ? 'none' : `${agent}'s`}: close it ('tally session close') and start one with --agent ${former}`,
  );
}

/** A session whose log ends with session.end but was never sealed: its refusal (`ended`). */
interface Ended {
  ended: SessionError;
}

export class SessionRegistry {
  private readonly held = new Map<string, Held>();
  private readonly byHarness = new Map<string, string>();
  /**
   * The agent whose certificate judged a harness session's events, kept once its Tally session is
   * sealed: the harness session's later events open their next session under it (`FORMER_KEPT`).
   */
  private readonly formerAgent = new Map<string, string>();
  private readonly pending = new Map<string, Promise<unknown>>();
  private readonly signers = new Map<string, Promise<ShipSigner>>();
  /** Work admitted before a stop (events being recorded, closes): the stop finishes it first. */
  private readonly underWay = new Set<Promise<unknown>>();
  private stopping = false;

  constructor(
    private readonly env: NodeJS.ProcessEnv,
    private readonly passphrase: string | undefined,
    private readonly logger: Logger,
  ) {}

  get size(): number {
    return this.held.size;
  }

  private signer(where: Places): Promise<ShipSigner> {
    const key = `${where.project ?? ''}\0${where.home}`;
    let found = this.signers.get(key);
    if (!found) {
      found = loadShipSigner(where, async () => this.passphrase);
      found.catch(() => this.signers.delete(key));
      this.signers.set(key, found);
    }
    return found;
  }

  /** Serialises the opening of one session: concurrent first events wait for one opener. */
  private once<T>(key: string, open: () => Promise<T>): Promise<T> {
    const running = this.pending.get(key) as Promise<T> | undefined;
    if (running) return running;
    const started = open().finally(() => this.pending.delete(key));
    this.pending.set(key, started);
    return started;
  }

  private witnessFor(where: Places, id: string, asked?: WitnessOptions): Promise<Witness | undefined> {
    return sessionWitness({
      state: where.state,
      id,
      signer: () => this.signer(where),
      logger: this.logger,
      asked,
    });
  }

  private async hold(where: Places, info: SessionInfo, witnessTo?: WitnessOptions): Promise<Held> {
    const existing = this.held.get(info.id);
    if (existing) return existing;
    const witness = await this.witnessFor(where, info.id, witnessTo);
    const open = await this.openLog(where, info, witness);
    const held: Held = {
      id: info.id,
      where,
      open,
      implicit: open.openedFor !== undefined,
      harnessSessions: new Set(),
      seen: new Set(),
      replies: new Map(),
      lastActive: Date.now(),
      ...(witness ? { witness } : {}),
    };
    this.held.set(info.id, held);
    return held;
  }

  /**
   * Holds a session from its state on disk; concurrent openers wait for one. A log that ends with
   * session.end but was never sealed (its recorder gone between a harness session's end and the
   * seal, a close cut short) is not held: its `ended` refusal is returned, for the caller to finish
   * its close (`finishClose`) or to refuse the event.
   */
  private resume(where: Places, info: SessionInfo): Promise<Held | Ended> {
    return this.once(`open\0${info.id}`, async () => {
      try {
        return await this.hold(where, info);
      } catch (error) {
        if (!(error instanceof SessionError) || error.code !== 'ended') throw error;
        return { ended: error };
      }
    });
  }

  /**
   * The state folders a session holding an event of `cwd` may be in: the project's `cwd` is in, each
   * project enclosing it (a harness session's events follow its session there), and TALLY_HOME's.
   */
  statesOf(cwd: string): string[] {
    const states: string[] = [];
    for (let found = findProjectDir(cwd, this.env); found !== null; ) {
      states.push(found);
      const above = dirname(dirname(found));
      found = above === dirname(found) ? null : findProjectDir(above, this.env);
    }
    states.push(places(cwd, this.env).home);
    return states;
  }

  /**
   * Finishes the seal of a session whose log ended without it, unless it is a run's (its run
   * closes it): what recording its end would have done, for an end already recorded by a recorder
   * that stopped before it sealed. A session whose log goes on is held, as an event in it would.
   */
  async finishEnded(cwd: string, state: string, id: string): Promise<void> {
    if (this.held.has(id)) return;
    const home = places(cwd, this.env).home;
    const where: Places = { home, project: state === home ? null : state, state };
    const info = readSessionInfo(where.state, id);
    if (info.state !== 'open') return;
    const resumed = await this.resume(where, info);
    if (!('ended' in resumed) || resumed.ended.detail?.run === true) return;
    await this.finishClose(where, id).catch((error: unknown) => {
      if (!(error instanceof SessionError) || error.code !== 'already-closed') throw error;
    });
  }

  /** Seals a log that ended without its seal; concurrent callers wait for the one seal. */
  private finishClose(where: Places, id: string): Promise<Sealed> {
    return this.once(`seal\0${id}`, async () => {
      this.logger('warn', `session ${id} ended without its seal; sealing it now`);
      return this.sealLog(where, where.state, id, await this.witnessFor(where, id), null);
    });
  }

  private async openLog(
    where: Places,
    info: SessionInfo,
    witness: Witness | undefined,
  ): Promise<OpenSession> {
    return openSession({
      state: where.state,
      session: info,
      signer: await this.signer(where),
      harness: { env: this.env, logger: this.logger },
      ...(witness ? { onRecorded: witnessHook(witness) } : {}),
    });
  }

  /**
   * A held session whose log refuses appends because a write failed (a full disk) is opened again
   * before it is used: the open sets the torn write aside and resumes from the last durable record,
   * so the session records again once the write can succeed, without a new recorder.
   */
  private async usable(held: Held): Promise<Held> {
    if (!held.open.boundary.failed) return held;
    held.reopening ??= (async () => {
      await held.open.close().catch(() => undefined);
      this.logger('warn', `a write to the log of ${held.id} failed; opening it again`);
      held.open = await this.openLog(held.where, readSessionInfo(held.where.state, held.id), held.witness);
    })().finally(() => {
      held.reopening = undefined;
    });
    await held.reopening;
    return held;
  }

  /** Starts a session for the project of `cwd` and holds it (`tally run`, `tally session start`). */
  async start(options: {
    cwd: string;
    agent?: string;
    registration?: string;
    /** The harness session an event's start opens the session for (an implicit session). */
    openedFor?: string;
    witness?: WitnessOptions;
    wiring?: SessionWiring;
  }): Promise<Held> {
    const implicit = options.openedFor !== undefined;
    const where = places(options.cwd, this.env);
    // Asked of git without blocking and within a deadline: the repository is the agent's to write.
    const root = await sessionRootForAsync(where, options.cwd);
    const key = `start\0${where.state}`;
    // A start of its own (`tally run`, `tally session start`) is never handed the session another
    // start is opening for the same project: it waits for that one, then finds it open and is
    // refused. Only an event's start (implicit) joins a start under way.
    if (!implicit)
      for (let running = this.pending.get(key); running; running = this.pending.get(key))
        await running.catch(() => undefined);
    return this.once(key, async () => {
      const open = currentSession(where.state);
      if (open && readSessionInfo(where.state, open).state === 'open') {
        if (implicit) return this.hold(where, readSessionInfo(where.state, open));
        throw new RecorderError(
          'refused',
          `session ${open} is still open in this project; close it first ('tally session close')`,
        );
      }
      const signer = await this.signer(where);
      const resolved = options.agent
        ? resolveAgent(
            where,
            options.cwd,
            options.agent,
            defaultTrustedKeys(where).map((k) => k.publicKey),
            new Date(),
          )
        : undefined;
      if (resolved?.warning) this.logger('warn', resolved.warning);
      let first: [Recorded, Date] | undefined;
      const started = await startSession({
        state: where.state,
        refuseWhileOpen: true,
        root,
        signer,
        onRecorded: (recorded, time) => {
          first = [recorded, time];
        },
        ...(resolved ? { agent: resolved.agent } : {}),
        ...(resolved?.certificatePath ? { certificatePath: resolved.certificatePath } : {}),
        ...(options.registration ? { registrationPath: options.registration } : {}),
        ...(options.wiring ? { wiring: options.wiring } : {}),
        ...(implicit ? { openedFor: options.openedFor } : {}),
      }).catch((error: unknown) => {
        // Another process (`tally session start`) opened a session here meanwhile: an event joins
        // it, a start of its own is refused.
        if (!(error instanceof SessionError) || error.code !== 'still-open') throw error;
        if (implicit) return readSessionInfo(where.state, String(error.detail?.session));
        throw new RecorderError('refused', error.message);
      });
      if (!('info' in started)) return this.hold(where, started);
      const { info } = started;
      const wired = options.wiring;
      // A transcript the run chose is read at close even when no hook ever names it.
      if (wired?.transcript !== undefined && wired.harness_session !== undefined)
        rememberTranscript(where.state, info.id, {
          harness: wired.harness,
          harness_session: wired.harness_session,
          path: wired.transcript,
          event_source: wired.event_source,
        });
      const held = await this.hold(where, info, options.witness);
      if (first) held.witness?.record(first[0].seq, first[0].digest, first[1]);
      return held;
    });
  }

  /** The held session a captured event belongs to, opened or started when none is held yet. */
  async forEvent(captured: { harnessSession: string; cwd?: string }, hint: SessionHint): Promise<Held> {
    return this.usable(await this.find(captured, hint));
  }

  private async find(captured: { harnessSession: string; cwd?: string }, hint: SessionHint): Promise<Held> {
    const cwd = captured.cwd;
    if (hint.session !== undefined) {
      const held = this.held.get(hint.session);
      if (held) return this.join(held, captured.harnessSession);
      if (cwd === undefined)
        throw new RecorderError('refused', `session ${hint.session} is not held and the event names no cwd`);
      const where = places(cwd, this.env);
      const info = readSessionInfo(where.state, hint.session);
      // A session the run named is the run's to close, even one whose log has ended.
      const resumed = await this.resume(where, info);
      if ('ended' in resumed) throw resumed.ended;
      return this.join(resumed, captured.harnessSession);
    }
    const known = this.byHarness.get(captured.harnessSession);
    const knownHeld = known === undefined ? undefined : this.held.get(known);
    if (knownHeld) return this.join(knownHeld, captured.harnessSession);
    if (cwd === undefined)
      throw new RecorderError('refused', 'the event names no cwd: no project to record it in');
    const where = places(cwd, this.env);
    const former =
      this.formerAgent.get(formerKey(where.state, captured.harnessSession)) ??
      this.formerOnDisk(where.state, captured.harnessSession);
    const open = currentSession(where.state);
    if (open) {
      const info = readSessionInfo(where.state, open);
      const resumed = info.state === 'open' ? await this.resume(where, info) : undefined;
      if (resumed !== undefined && 'open' in resumed)
        return this.join(judgedAlike(resumed, captured.harnessSession, former), captured.harnessSession);
      // A run's session that has ended is left for the run's close; any other is sealed now (by
      // this event or one beside it) and the event goes to a new session.
      if (resumed?.ended.detail?.run === true) throw resumed.ended;
      if (resumed !== undefined)
        await this.finishClose(where, info.id).catch((error: unknown) => {
          if (!(error instanceof SessionError) || error.code !== 'already-closed') throw error;
        });
    }
    // A harness session a certificate judged in this project keeps it: its session sealed while the
    // harness runs on (by a close the agent asked for, or the person's) does not let its next calls
    // go unjudged, in a session opened for them or one another start opened meanwhile.
    const agent = former ?? hint.agent;
    const held = await this.start({
      cwd,
      ...(agent ? { agent } : {}),
      openedFor: captured.harnessSession,
    });
    return this.join(judgedAlike(held, captured.harnessSession, former), captured.harnessSession);
  }

  /** What a recorder before this one kept of the harness session's certificate (a damaged file: none, said). */
  private formerOnDisk(state: string, harnessSession: string): string | undefined {
    try {
      return formerAgentOf(state, harnessSession);
    } catch (error) {
      this.logger(
        'warn',
        `${state}: which agent judged each harness session is unreadable (${(error as Error).message})`,
      );
      return undefined;
    }
  }

  private keepFormer(harnessSession: string, agent: string): void {
    this.formerAgent.delete(harnessSession);
    this.formerAgent.set(harnessSession, agent);
    // The oldest go first: a harness session not heard from in thousands is over.
    for (const oldest of this.formerAgent.keys()) {
      if (this.formerAgent.size <= FORMER_KEPT) break;
      this.formerAgent.delete(oldest);
    }
  }

  private join(held: Held, harnessSession: string): Held {
    held.harnessSessions.add(harnessSession);
    this.byHarness.set(harnessSession, held.id);
    held.lastActive = Date.now();
    return held;
  }

  /** The record attribution of an event's agent: the session's own agent, or its subagent. */
  attribution(
    held: Held,
    agent: { instance: string; type?: string; parent?: string },
    harness: string,
  ): AgentAttribution {
    const own = held.open.info.agent;
    if (agent.parent === undefined)
      return { ...(own ?? { name: harness }), instance: agent.instance, harness };
    return { name: agent.type ?? 'subagent', instance: agent.instance, parent: agent.parent, harness };
  }

  get(id: string): Held | undefined {
    return this.held.get(id);
  }

  /**
   * Seals a held session (session.end, package) and lets it go. With `cwd` (its project), a session
   * this recorder does not hold is opened first: a recorder started again after the one that held
   * it died holds a session only once an event names it.
   */
  close(id: string, cwd?: string): Promise<Sealed> {
    return this.admit(
      () => this.seal(id, cwd),
      `session ${id} stays open, unsealed; close it again once it has stopped ('tally session close')`,
    );
  }

  /**
   * Runs `work` (an event recorded, a session started or sealed) unless a stop has begun: then it
   * is refused, so nothing is opened, recorded or sealed once the recorder is stopping, whatever
   * connection the request came on. Work admitted before the stop is finished by it (`finishWork`).
   */
  admit<T>(work: () => Promise<T>, refused: string): Promise<T> {
    if (this.stopping)
      return Promise.reject(new RecorderError('stopping', `the recorder is stopping: ${refused}`));
    const running = work();
    this.underWay.add(running);
    const done = () => this.underWay.delete(running);
    running.then(done, done);
    return running;
  }

  /**
   * Seals a held session as part of work already admitted (a harness session's end closing the
   * session opened for it): not refused by a stop that began after the work was admitted.
   */
  async seal(id: string, cwd?: string): Promise<Sealed> {
    let held = this.held.get(id);
    if (!held && cwd !== undefined) {
      const where = places(cwd, this.env);
      const resumed = await this.resume(where, readSessionInfo(where.state, id));
      if ('ended' in resumed) return this.finishClose(where, id);
      held = resumed;
    }
    if (!held) throw new RecorderError('refused', `session ${id} is not held by this recorder`);
    this.held.delete(id);
    const agent = held.open.info.agent?.name;
    for (const h of held.harnessSessions) {
      if (this.byHarness.get(h) === id) this.byHarness.delete(h);
      if (agent !== undefined) this.keepFormer(formerKey(held.where.state, h), agent);
    }
    if (agent !== undefined)
      try {
        keepFormerAgent(held.where.state, [...held.harnessSessions], agent);
      } catch (error) {
        this.logger(
          'warn',
          `session ${id}: which agent judged its harness sessions was not kept on disk (${(error as Error).message}); this recorder still knows`,
        );
      }
    await held.reopening?.catch(() => undefined);
    // The head of the last record the recorder made durable: a log cut while it was held is
    // refused at the seal (a record whose write failed is not counted: it was never answered).
    const expectedHead = held.open.boundary.head;
    // A project moved while its session was held took the session's folder with it: the session
    // is sealed where it is now (its reconciliation then says the recorded root is gone).
    const state = held.open.stateNow();
    if (state !== held.where.state)
      this.logger(
        'warn',
        `session ${id} moved from ${held.where.state} to ${state} while it was held; sealing it there`,
      );
    await held.open.close();
    return this.sealLog(held.where, state, id, held.witness, expectedHead);
  }

  /**
   * A session the recorder opened for a harness session is sealed once a harness session recording
   * into it ends (its end event recorded). A seal that fails is logged: the log ends with
   * session.end, and the next event or close in its project finishes the seal.
   */
  async sealIfEnded(held: Held, nativeEvent: string, endEvent: string | undefined): Promise<void> {
    if (!held.implicit || endEvent === undefined || nativeEvent !== endEvent) return;
    await this.seal(held.id).catch((e: Error) => this.logger('error', `closing ${held.id}: ${e.message}`));
  }

  /** Seals a session's log (the recorder no longer holding it); the last head goes to its witness. */
  private async sealLog(
    where: Places,
    state: string,
    id: string,
    witness: Witness | undefined,
    expectedHead: ChainHead | null,
  ): Promise<Sealed> {
    const signer = await this.signer(where);
    const closed = await closeSession({
      state,
      session: readSessionInfo(state, id),
      signer,
      expectedHead,
      ...(witness ? { onRecorded: witnessHook(witness) } : {}),
    });
    if (!witness) return closed;
    return { ...closed, witness: await flushWitness(witness, id, closed.records, this.logger) };
  }

  /**
   * Shutdown, first step: the work under way is finished (so a close is answered, not cut off while
   * it goes on sealing, and no session is held after `releaseAll`), and any asked after this is refused.
   */
  async finishWork(): Promise<void> {
    this.stopping = true;
    while (this.underWay.size > 0) await Promise.allSettled([...this.underWay]);
  }

  /** Lets every session go without sealing it (shutdown): each stays open on disk and resumes. */
  async releaseAll(): Promise<void> {
    const all = [...this.held.values()];
    this.held.clear();
    this.byHarness.clear();
    await Promise.allSettled(all.map((h) => h.open.close()));
  }

  list(): SessionSummary[] {
    return [...this.held.values()].map((h) => ({
      session: h.id,
      root: h.open.info.root,
      state: h.where.state,
      agent: h.open.info.agent?.name ?? null,
      implicit: h.implicit,
      harness_sessions: [...h.harnessSessions].sort(),
      records: h.open.boundary.size,
    }));
  }
}
