/**
 * The agent's own transcript as a witness at close. The recorder remembers every transcript a
 * harness named (`sessions/<id>/transcripts.json`, so a restarted recorder still knows them); the
 * close reads each and records, with source `transcript`, every tool use the transcript shows that
 * no record of the session has (by its call id, the harness's `tool_use_id`) — what hooks lost
 * while the recorder was down, or never sent.
 */
import { join } from 'node:path';
import type { Boundary } from '../boundary/boundary.js';
import { eventId } from '../boundary/prepare.js';
import { readTranscript, TRANSCRIPT_MAX_BYTES } from '../capture/claude-code/transcript.js';
import { canonicalize, parseJson } from '../core/canonical.js';
import { isJsonObject } from '../core/json.js';
import { readRegularFileSync } from '../core/regular-file.js';
import {
  isCloseRecord,
  TRANSCRIPT_SOURCE,
  TRANSCRIPT_SUMMARY_TYPE,
} from '../evidence/record/close-passes.js';
import type { AgentAttribution, EventRecord } from '../evidence/record/record.js';
import { redactValue } from '../evidence/redact.js';
import { sessionDir, writeAtomic } from './store.js';
import { TRANSCRIPT_URI, transcriptUseEvent } from './transcript-events.js';

const FILE = 'transcripts.json';
/** Unread files and unrecorded uses a summary names at most; its counts are always whole. */
const LISTED = 20;
/**
 * Uses a close records from transcripts at most, all transcripts together (a record is a signed,
 * durable write: a transcript of a million tiny uses would keep the close for hours). The rest are
 * `unrecorded`, counted whole.
 */
export const TRANSCRIPT_MAX_RECORDED = 5_000;
/** The harness whose transcript format is read (Claude Code's JSON lines). */
const READ_FORMAT = 'claude-code';
/** The list of a session's transcripts: a path per harness session. */
const FILE_LIMIT = 16 * 1024 * 1024;

interface TranscriptEntry {
  harness: string;
  harness_session: string;
  path: string;
  /** The harness's event source URI: a call is (source, call id), so the transcript's join the hooks'. */
  event_source?: string;
}

interface Known {
  transcripts: TranscriptEntry[];
}

const remembered = new Map<string, Set<string>>();

function read(state: string, id: string): Known {
  const path = join(sessionDir(state, id), FILE);
  try {
    const value = parseJson(readRegularFileSync(path, FILE_LIMIT)) as Known;
    return Array.isArray(value.transcripts) ? value : { transcripts: [] };
  } catch {
    return { transcripts: [] };
  }
}

/** Keeps a transcript path a harness named for this session (once per path). */
export function rememberTranscript(state: string, id: string, entry: TranscriptEntry): void {
  const key = `${state}\0${id}`;
  let paths = remembered.get(key);
  if (paths === undefined) {
    paths = new Set(read(state, id).transcripts.map((t) => t.path));
    remembered.set(key, paths);
  }
  if (paths.has(entry.path)) return;
  const known = read(state, id);
  known.transcripts.push(entry);
  writeAtomic(join(sessionDir(state, id), FILE), `${canonicalize(known)}\n`, 0o600);
  paths.add(entry.path);
}

/**
 * Call ids already recorded (and those with their end recorded), those a channel recorded, the
 * session's cwd, and whether this pass already ran. A pass that has not run may still have written
 * records, if a close died before its summary: each stays true of the transcript (a use is
 * recorded once, by its call id), but it is the transcript's word, not a channel's.
 */
async function readLog(records: AsyncIterable<EventRecord> | Iterable<EventRecord>) {
  const calls = new Set<string>();
  const byChannel = new Set<string>();
  const ended = new Set<string>();
  const denied = new Set<string>();
  let done = false;
  let cwd: string | undefined;
  let startedAt: number | undefined;
  // Each harness session's main agent as its hooks first named it.
  const agents = new Map<string, AgentAttribution>();
  // Each subagent as the hooks first named it: a use the transcript alone shows gets the same name and parent.
  const subagents = new Map<string, AgentAttribution>();
  for await (const record of records) {
    // Only the pass's own summary says it ran: a channel's event of that type is not the pass.
    if (isCloseRecord(record, TRANSCRIPT_SUMMARY_TYPE)) done = true;
    const call = record.event.call;
    if (isJsonObject(call) && typeof call.id === 'string') {
      calls.add(call.id);
      if (record.source !== TRANSCRIPT_SOURCE) byChannel.add(call.id);
      if (record.event.type === 'tool.after') ended.add(call.id);
      if (record.decision?.decision === 'deny') denied.add(call.id);
    }
    const session = record.event.session;
    if (cwd === undefined && isJsonObject(session) && typeof session.cwd === 'string') cwd = session.cwd;
    if (
      startedAt === undefined &&
      record.event.type === 'session.start' &&
      typeof record.event.time === 'string'
    )
      startedAt = Date.parse(record.event.time);
    const main = record.source === 'hook' && record.agent?.parent === undefined ? record.agent : undefined;
    if (main?.instance !== undefined && !agents.has(main.instance)) agents.set(main.instance, main);
    const instance = record.agent?.instance;
    if (record.source === 'hook' && record.agent?.parent !== undefined && instance !== undefined)
      if (!subagents.has(instance)) subagents.set(instance, record.agent);
  }
  return { calls, byChannel, ended, denied, done, cwd, startedAt, agents, subagents };
}

/** Whether a transcript's time (ISO 8601) is before `startedAt`; false when either is unknown. */
function isBefore(time: string | undefined, startedAt: number | undefined): boolean {
  if (time === undefined || startedAt === undefined) return false;
  const at = Date.parse(time);
  return Number.isFinite(at) && at < startedAt;
}

export async function reconcileTranscripts(options: {
  state: string;
  session: string;
  records: AsyncIterable<EventRecord> | Iterable<EventRecord>;
  boundary: Boundary;
}): Promise<{ recorded: number } | null> {
  const known = read(options.state, options.session).transcripts;
  if (known.length === 0) return null;
  const log = await readLog(options.records);
  if (log.done) return null;
  const summary: Record<string, unknown>[] = [];
  let recorded = 0;
  // One budget for the whole pass: however many transcripts the hooks named.
  let budget = TRANSCRIPT_MAX_BYTES;
  for (const entry of known) {
    if (entry.harness !== READ_FORMAT) {
      // Another harness's transcript (a Codex rollout, a Qwen Code or Gemini CLI chat) is in a format
      // this pass does not read: said, not summarised as read with no tool use in it.
      const reason = `the ${entry.harness} transcript format is not read (only Claude Code's is)`;
      summary.push({
        path: entry.path,
        files: 0,
        tool_uses: 0,
        seen_only_in_transcript: 0,
        skipped_lines: 0,
        unread: [{ file: entry.path, reason }],
        unread_count: 1,
      });
      continue;
    }
    const reading = readTranscript(entry.path, budget);
    budget -= reading.bytes;
    let onlyHere = 0;
    let beforeSession = 0;
    const unrecorded: { call: string; reason: string }[] = [];
    for (const use of reading.uses) {
      // A call the hooks reported whole is known; one whose end they lost gets its end from here.
      // A call the boundary denied did not run: the log already says all there is.
      if (log.ended.has(use.id) || log.denied.has(use.id)) continue;
      if (log.calls.has(use.id) && use.result === undefined) continue;
      // A transcript a resumed harness session goes on writing holds its earlier sessions' calls
      // too: one the transcript dates before this session started, and no record of it names, is theirs.
      if (!log.calls.has(use.id) && isBefore(use.time, log.startedAt)) {
        beforeSession++;
        continue;
      }
      if (recorded >= TRANSCRIPT_MAX_RECORDED) {
        unrecorded.push({
          call: use.id.slice(0, 200),
          reason: `past the ${TRANSCRIPT_MAX_RECORDED} uses a close records`,
        });
        continue;
      }
      // A use a dead attempt of this pass began is still seen only in the transcript.
      const only = !log.byChannel.has(use.id);
      const agent: AgentAttribution | undefined =
        use.agentId !== undefined
          ? (log.subagents.get(use.agentId) ?? {
              name: 'subagent',
              instance: use.agentId,
              parent: entry.harness_session,
              harness: entry.harness,
            })
          : (log.agents.get(entry.harness_session) ?? {
              // No hook of this harness session named its agent: the session's, as its other harness sessions' hooks did.
              ...(log.agents.values().next().value ?? { name: entry.harness }),
              instance: entry.harness_session,
              harness: entry.harness,
            });
      const event = transcriptUseEvent(use, {
        session: options.session,
        harnessSession: entry.harness_session,
        ...(entry.event_source ? { eventSource: entry.event_source } : {}),
        ...(log.cwd ? { cwd: log.cwd } : {}),
        only,
      });
      if (typeof event === 'string') {
        unrecorded.push({ call: use.id.slice(0, 200), reason: event });
        continue;
      }
      await options.boundary.note({
        source: TRANSCRIPT_SOURCE,
        event,
        ...(agent ? { agent: redactValue(agent) as AgentAttribution } : {}),
      });
      log.calls.add(use.id);
      log.ended.add(use.id);
      recorded++;
      if (only) onlyHere++;
    }
    summary.push({
      path: entry.path,
      files: reading.files.length,
      tool_uses: reading.uses.length,
      seen_only_in_transcript: onlyHere,
      skipped_lines: reading.skippedLines,
      ...(beforeSession > 0 ? { before_session: beforeSession } : {}),
      // A transcript that could not be read (a FIFO, a device, too large) is said, not waited on.
      ...(reading.unread.length > 0
        ? { unread: reading.unread.slice(0, LISTED), unread_count: reading.unread.length }
        : {}),
      ...(unrecorded.length > 0
        ? { unrecorded: unrecorded.slice(0, LISTED), unrecorded_count: unrecorded.length }
        : {}),
    });
  }
  await options.boundary.note({
    source: TRANSCRIPT_SOURCE,
    event: {
      id: eventId(),
      type: TRANSCRIPT_SUMMARY_TYPE,
      time: new Date().toISOString(),
      source: TRANSCRIPT_URI,
      session: { id: options.session },
      // The paths and reasons are the agent's input too: redacted like it.
      extensions: { 'dev.tally.transcript': { transcripts: redactValue(summary) } },
    },
  });
  return { recorded };
}
