/**
 * What Codex's hooks leave out of a shell call. The pinned version reports every `exec_command`
 * as `Bash {command}`: not whether it runs on a terminal (`tty`), which is what lets the agent type
 * into the process later with `write_stdin` — a tool that fires no hook (test/agents/README.md).
 * Codex's rollout of the thread (the hook's `transcript_path`) already holds the model's own call
 * when the PreToolUse hook runs: a `response_item` `function_call` with the hook's `tool_use_id`
 * as `call_id`, its `name` and its `arguments` (JSON text).
 *
 * The rollout is read from its end, at most WINDOW bytes: the call's line, and the other calls of
 * the same model response (the lines back to the previous tool output or user message), since a
 * response may repeat a call id. A call is on a terminal when any of its lines with the hook's
 * command says `tty: true`. Not found (no file, a line not written yet, further back than WINDOW,
 * another command under that id): undefined, which the adapter records as a terminal. What a before
 * event found is kept for the call's after event (up to KEPT calls), so both report one input.
 */
import { closeSync, fstatSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { openRegularSync, READ_NOFOLLOW } from '../../core/regular-file.js';
import { jsonLine } from '../json-line.js';

const WINDOW = 2 * 1024 * 1024;
const CHUNK = 64 * 1024;
const KEPT = 4096;
const ROLLOUT_NAME = /^rollout-[A-Za-z0-9_.:-]+\.jsonl$/;
const OTHER_SHELLS = new Set(['shell', 'local_shell']);

/** The call as the model made it: Codex's tool name and, for `exec_command`, whether it has a terminal. */
export interface ExecCall {
  name: string;
  tty?: boolean;
}

const kept = new Map<string, { command: string; call: ExecCall }>();

/** A response item that comes before a model response's calls: the end of the backward scan. */
function beforeResponse(item: JsonObject): boolean {
  if (item.type === 'turn_context' || item.type === 'session_meta') return true;
  const payload = isJsonObject(item.payload) ? item.payload : {};
  if (item.type !== 'response_item') return false;
  if (typeof payload.type === 'string' && payload.type.endsWith('_output')) return true;
  return payload.type === 'message' && payload.role !== 'assistant';
}

/**
 * The lines of `path`'s last WINDOW bytes, last first (a first line cut by the window is dropped);
 * the whole lines of a chunk `wanted` says nothing of are passed over unsplit.
 */
function* linesFromEnd(path: string, wanted: (chunk: Buffer) => boolean): Generator<Buffer> {
  let fd: number;
  try {
    // A regular file only, never waited on (the agent names the path: a FIFO would hold the recorder).
    fd = openRegularSync(path, READ_NOFOLLOW).fd;
  } catch {
    return;
  }
  try {
    const size = fstatSync(fd).size;
    const stop = Math.max(0, size - WINDOW);
    let end = size;
    let carry = Buffer.alloc(0);
    while (end > stop) {
      const start = Math.max(stop, end - CHUNK);
      const chunk = Buffer.allocUnsafe(end - start);
      readSync(fd, chunk, 0, chunk.length, start);
      let text = Buffer.concat([chunk, carry]);
      let cut = text.lastIndexOf(0x0a);
      // The text after the last newline is a line still being written (or the file's end).
      if (end === size && cut >= 0) {
        text = text.subarray(0, cut);
        cut = text.lastIndexOf(0x0a);
      }
      if (!wanted(text)) {
        cut = text.indexOf(0x0a);
        text = text.subarray(0, cut < 0 ? text.length : cut);
        cut = -1;
      }
      while (cut >= 0) {
        yield text.subarray(cut + 1);
        text = text.subarray(0, cut);
        cut = text.lastIndexOf(0x0a);
      }
      carry = Buffer.from(text);
      end = start;
    }
    if (stop === 0 && carry.length > 0) yield carry;
  } catch {
    return;
  } finally {
    closeSync(fd);
  }
}

/** The model's call `callId` in the rollout at `path`, for the hook's `command`; undefined when not found. */
export function rolloutExecCall(path: string, callId: string, command: string): ExecCall | undefined {
  if (!ROLLOUT_NAME.test(basename(path))) return undefined;
  const needle = Buffer.from(`"call_id":${JSON.stringify(callId)}`);
  let found: ExecCall | undefined;
  // Once the call is found, every line back to the response's start is read.
  for (const line of linesFromEnd(path, (chunk) => found !== undefined || chunk.includes(needle))) {
    const mentions = line.includes(needle);
    if (!mentions && found === undefined) continue;
    const item = jsonLine(line.toString('utf8'));
    if (item === undefined) continue;
    if (found !== undefined && beforeResponse(item)) break;
    const call = isJsonObject(item.payload) ? item.payload : {};
    if (!mentions || item.type !== 'response_item' || call.type !== 'function_call') continue;
    if (call.call_id !== callId || typeof call.name !== 'string' || typeof call.arguments !== 'string')
      continue;
    const args = jsonLine(call.arguments);
    if (args === undefined) continue;
    if (call.name !== 'exec_command') {
      // Codex's shell tools without a later input; any other name is not this hook's call.
      if (OTHER_SHELLS.has(call.name)) found ??= { name: call.name };
      continue;
    }
    if (args.cmd !== command) continue;
    const tty = args.tty === true;
    found = { name: 'exec_command', tty: tty || found?.tty === true };
  }
  return found;
}

/**
 * The call behind a Bash hook of the rollout at `path`. A before event reads the rollout and keeps
 * what it found for the call's after event, which takes it only for the same command; a call id is
 * the model's to choose, so a before never takes what an earlier call left.
 */
export function execCallOf(
  path: string,
  callId: string,
  command: string,
  before: boolean,
): ExecCall | undefined {
  const id = `${path}\u0000${callId}`;
  const known = kept.get(id);
  kept.delete(id);
  if (!before && known !== undefined && known.command === command) return known.call;
  const found = rolloutExecCall(path, callId, command);
  if (found !== undefined && before) {
    if (kept.size >= KEPT) kept.delete(kept.keys().next().value as string);
    kept.set(id, { command, call: found });
  }
  return found;
}
