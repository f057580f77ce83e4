/**
 * Claude Code's own transcript (`transcript_path`, JSON lines) as a second witness: every tool use
 * it shows — `assistant` lines whose content holds `{type: "tool_use", id, name, input}` — with its
 * result when a later `user` line holds the `tool_result` for that id. Subagents' transcripts sit
 * beside it (`<session>/subagents/agent-<id>.jsonl`, lines with `agentId`). Lines that are not JSON
 * (a line being written as the agent stopped) are skipped and counted.
 */
import { closeSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isJsonObject } from '../../core/json.js';
import { openRegularSync, readUpTo } from '../../core/regular-file.js';

export interface TranscriptToolUse {
  /** The model's tool-use id: what the hooks report as `tool_use_id`. */
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** The subagent that used it (`agentId` of a sidechain line), when not the main agent. */
  agentId?: string;
  /** `blockedByHook`: Claude Code's own wording for a call a hook stopped (`PreToolUse:… hook error`). */
  result?: { isError: boolean; blockedByHook: boolean };
  /** The transcript file it was read from. */
  file: string;
  /** When the transcript says the model asked for it (the line's `timestamp`), if it says. */
  time?: string;
}

export interface TranscriptReading {
  uses: TranscriptToolUse[];
  /** Lines that were not JSON objects. */
  skippedLines: number;
  /** Transcript files read. */
  files: string[];
  /** Files named but not read, and why: not a regular file (a FIFO, a device), or too large. */
  unread: { file: string; reason: string }[];
  /** Bytes read, of every file. */
  bytes: number;
}

/**
 * At most this many bytes of transcripts are read at one close, every file of every transcript
 * together (a runaway transcript, or thousands of subagent files, is not loaded whole).
 */
export const TRANSCRIPT_MAX_BYTES = 256 * 1024 * 1024;

/** How the pinned Claude Code words a tool result when a PreToolUse hook stopped the call. */
const HOOK_BLOCK = /^PreToolUse:\S+ hook (error|blocking)/;

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isJsonObject)
    .map((part) => (typeof part.text === 'string' ? part.text : ''))
    .join('');
}

function blocks(line: Record<string, unknown>): Record<string, unknown>[] {
  const message = line.message;
  const content = isJsonObject(message) ? message.content : undefined;
  return Array.isArray(content) ? content.filter(isJsonObject) : [];
}

/**
 * The file's bytes up to `limit`, cut after its last whole line when the file holds more (that cut
 * said in `unread`); null when it cannot be read (said, but for a file that is not there).
 */
function readBounded(file: string, out: TranscriptReading, limit: number): Buffer | null {
  // The agent can put anything at the path (a FIFO, /dev/zero): only a regular file is read,
  // bounded, and never waited on.
  let opened: { fd: number; size: number };
  try {
    opened = openRegularSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      out.unread.push({ file, reason: (error as Error).message });
    return null;
  }
  try {
    const bytes = readUpTo(opened.fd, limit + 1);
    if (bytes.length <= limit) return bytes;
    const whole = bytes.lastIndexOf(10, limit - 1) + 1;
    out.unread.push({
      file,
      reason: `read up to byte ${whole} only: a close reads at most ${TRANSCRIPT_MAX_BYTES} bytes of transcripts`,
    });
    return bytes.subarray(0, whole);
  } catch (error) {
    out.unread.push({ file, reason: (error as Error).message });
    return null;
  } finally {
    closeSync(opened.fd);
  }
}

function readOne(file: string, out: TranscriptReading, budget: number): void {
  const bytes = readBounded(file, out, Math.max(0, budget - out.bytes));
  if (bytes === null) return;
  out.files.push(file);
  out.bytes += bytes.length;
  const byId = new Map<string, TranscriptToolUse>();
  // Line by line from the bytes: no second copy of the whole file as one string.
  for (let at = 0; at < bytes.length; ) {
    const newline = bytes.indexOf(10, at);
    const end = newline < 0 ? bytes.length : newline;
    const text = bytes.toString('utf8', at, end);
    at = end + 1;
    if (text.trim() === '') continue;
    let line: unknown;
    try {
      line = JSON.parse(text);
    } catch {
      out.skippedLines++;
      continue;
    }
    if (!isJsonObject(line)) {
      out.skippedLines++;
      continue;
    }
    const agentId = line.isSidechain === true && typeof line.agentId === 'string' ? line.agentId : undefined;
    const time = typeof line.timestamp === 'string' ? line.timestamp : undefined;
    for (const block of blocks(line)) {
      if (line.type === 'assistant' && block.type === 'tool_use' && typeof block.id === 'string') {
        if (byId.has(block.id) || typeof block.name !== 'string') continue;
        const use: TranscriptToolUse = {
          id: block.id,
          name: block.name,
          input: isJsonObject(block.input) ? block.input : {},
          file,
        };
        if (agentId !== undefined) use.agentId = agentId;
        if (time !== undefined) use.time = time;
        byId.set(block.id, use);
        out.uses.push(use);
      } else if (
        line.type === 'user' &&
        block.type === 'tool_result' &&
        typeof block.tool_use_id === 'string'
      ) {
        const use = byId.get(block.tool_use_id);
        if (use !== undefined) {
          const isError = block.is_error === true;
          use.result = { isError, blockedByHook: isError && HOOK_BLOCK.test(resultText(block.content)) };
        }
      }
    }
  }
}

/** The names in the subagents folder, or none; one there that cannot be listed (a file, a FIFO) is said. */
function subagentFiles(folder: string, out: TranscriptReading): string[] {
  try {
    if (!statSync(folder).isDirectory()) {
      out.unread.push({
        file: folder,
        reason: `${folder} is not a folder: the subagents' transcripts are not read`,
      });
      return [];
    }
  } catch {
    return [];
  }
  try {
    return readdirSync(folder).sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
      out.unread.push({ file: folder, reason: (error as Error).message });
    return [];
  }
}

/**
 * The tool uses of a main transcript and of its subagents' transcripts, in file then line order;
 * `budget` bytes at most of all of them (what is past it is `unread`, as too large).
 */
export function readTranscript(path: string, budget = TRANSCRIPT_MAX_BYTES): TranscriptReading {
  const out: TranscriptReading = { uses: [], skippedLines: 0, files: [], unread: [], bytes: 0 };
  readOne(path, out, budget);
  const subagents = join(path.replace(/\.jsonl$/, ''), 'subagents');
  for (const name of subagentFiles(subagents, out))
    if (/^agent-[A-Za-z0-9_-]+\.jsonl$/.test(name)) readOne(join(subagents, name), out, budget);
  return out;
}
