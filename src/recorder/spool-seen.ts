/**
 * Where a spooled line may be recorded already. A recorder killed after it recorded an event and
 * before it answered leaves the shim to spool it, and by the time the next recorder reads it the
 * session it is in may be sealed (a close) or ended (the event was its `SessionEnd`); a recorder
 * killed while it ingested (or one that left a file aside whose last line had no end) recorded some
 * lines of a file that is read again. So a line is looked up, by its event id, in every session that
 * could hold it: those of the project folders from its cwd up (a harness session's events follow
 * its session into an enclosing project), open when the line was spooled or opened since. Each
 * folder's sessions and each session's ids are read once an ingest, whatever the number of lines.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../ahp/transports/options.js';
import { readLogLines } from '../evidence/log/reader.js';
import { logPath, readSessionInfo } from '../session/store.js';
import type { Held } from './registry.js';

/**
 * How far a session's start or seal may lie from a spooled line's `received_at` (when the shim wrote
 * it) and still be one it was recorded in: a session opened by the line itself starts after it was
 * sent, a session id holds its start to the second, and the shim waits up to a minute for an answer
 * before it spools. An event id is random, so a session looked at in vain costs only its read: the
 * slack is generous.
 */
const SPOOL_SLACK_MS = 10 * 60_000;

const SESSION_STAMP = /^ses_(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z_[0-9a-f]+$/;

/** A session of a state folder as the ingest knows it: when it started, and when it was sealed. */
interface Known {
  id: string;
  started: number;
  /** When it was sealed; Infinity while it is open. */
  sealed: number;
}

/** The event ids in a session's log. */
async function readIds(state: string, id: string, into: Set<string>): Promise<void> {
  for await (const { line, torn } of readLogLines(logPath(state, id))) {
    if (torn) continue;
    try {
      const envelope = JSON.parse(line.toString('utf8')) as { payload: string };
      const record = JSON.parse(Buffer.from(envelope.payload, 'base64').toString('utf8')) as {
        event: { id: string };
      };
      into.add(record.event.id);
    } catch {
      // A bad line is the verifier's to report; here it only cannot be a duplicate.
    }
  }
}

export class SpoolSeen {
  /** Each state folder's sessions, read once. */
  private readonly sessions = new Map<string, Known[]>();
  /** Each session's event ids, by state folder and session: a held session's are its `seen`. */
  private readonly ids = new Map<string, Set<string>>();

  constructor(private readonly logger: Logger) {}

  private sessionsOf(state: string): Known[] {
    let known = this.sessions.get(state);
    if (known !== undefined) return known;
    known = [];
    this.sessions.set(state, known);
    let names: string[];
    try {
      names = readdirSync(join(state, 'sessions'));
    } catch {
      return known;
    }
    for (const id of names) {
      if (!SESSION_STAMP.test(id)) continue;
      try {
        const info = readSessionInfo(state, id);
        const sealed = info.state === 'open' ? Number.POSITIVE_INFINITY : Date.parse(info.closed_at ?? '');
        known.push({ id, started: Date.parse(id.replace(SESSION_STAMP, '$1-$2-$3T$4:$5:$6Z')), sealed });
      } catch {
        // A session whose state cannot be read holds no line back.
      }
    }
    return known;
  }

  private async idsOf(state: string, id: string, held: Held | undefined): Promise<Set<string>> {
    const key = `${state}\0${id}`;
    let ids = this.ids.get(key);
    if (ids !== undefined) return ids;
    ids = held?.seen ?? new Set();
    this.ids.set(key, ids);
    // A log that cannot be read (a FIFO or an overlong line the agent put there) holds no line
    // back: only the ids read before the fault are counted.
    await readIds(state, id, ids).catch((error: Error) =>
      this.logger('warn', `spool: the log of session ${id} could not be read: ${error.message}`),
    );
    return ids;
  }

  /**
   * The held session a line goes to, its ids those of its log: a session this ingest opened is
   * known from now on, and its ids are the ones its held events add.
   */
  async hold(held: Held): Promise<Set<string>> {
    const state = held.where.state;
    const known = this.sessionsOf(state);
    if (!known.some((k) => k.id === held.id))
      known.push({ id: held.id, started: Date.now(), sealed: Number.POSITIVE_INFINITY });
    const key = `${state}\0${held.id}`;
    const read = this.ids.get(key);
    if (read === held.seen) return held.seen;
    if (read === undefined) await this.idsOf(state, held.id, held);
    else for (const id of read) held.seen.add(id);
    this.ids.set(key, held.seen);
    return held.seen;
  }

  /**
   * The session among `states` (state folders) that holds event `id`, spooled at `at` (ms; NaN
   * when the line does not say), from a file taken by an earlier ingest when `leftOver`: then
   * sessions opened since are looked in too, whenever they started.
   */
  async find(
    states: readonly string[],
    id: string,
    at: number,
    leftOver: boolean,
    heldOf: (session: string) => Held | undefined,
  ): Promise<{ state: string; session: string } | undefined> {
    if (Number.isNaN(at)) return undefined;
    const latest = leftOver ? Number.POSITIVE_INFINITY : at + SPOOL_SLACK_MS;
    for (const state of states)
      for (const k of this.sessionsOf(state)) {
        if (k.started > latest || !(k.sealed >= at - SPOOL_SLACK_MS)) continue;
        if ((await this.idsOf(state, k.id, heldOf(k.id))).has(id)) return { state, session: k.id };
      }
    return undefined;
  }
}
