/**
 * The model provider a Codex thread runs on. Codex's hooks name the model but not the provider; its
 * own record of the thread does: the first line of the rollout file a hook's `transcript_path` names
 * (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread>.jsonl`, one per thread, a subagent's
 * its own) is `{type: "session_meta", payload: {…, model_provider}}`, written when the thread is
 * created, before its SessionStart or SubagentStart hook (test/agents/README.md). The provider is
 * the name of the `[model_providers.<name>]` entry in Codex's config.toml: what the harness reports,
 * no more (docs/security.md: who acted, and on which model, only reports).
 *
 * Only a file named like a rollout is read, and only up to its first newline (at most HEAD_LIMIT
 * bytes; the line carries the thread's base instructions, tens of kilobytes). A provider found is
 * kept per file; a file not there yet is tried again on the next event.
 */
import { closeSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { isJsonObject } from '../../core/json.js';
import { openRegularSync, READ_NOFOLLOW } from '../../core/regular-file.js';

const HEAD_LIMIT = 1024 * 1024;
const CHUNK = 64 * 1024;
const KEPT = 512;
const ROLLOUT_NAME = /^rollout-[A-Za-z0-9_.:-]+\.jsonl$/;
const PROVIDER = /^[\x21-\x7e][\x20-\x7e]{0,199}$/;

const found = new Map<string, string>();

/** The first line of `path`, when it ends within HEAD_LIMIT bytes (only a regular file is read). */
function firstLine(path: string): string | undefined {
  let fd: number;
  try {
    fd = openRegularSync(path, READ_NOFOLLOW).fd;
  } catch {
    return undefined;
  }
  try {
    const chunks: Buffer[] = [];
    for (let at = 0; at < HEAD_LIMIT; ) {
      const chunk = Buffer.allocUnsafe(CHUNK);
      const n = readSync(fd, chunk, 0, CHUNK, at);
      if (n === 0) return undefined;
      const end = chunk.subarray(0, n).indexOf(0x0a);
      chunks.push(chunk.subarray(0, end < 0 ? n : end));
      if (end >= 0) return Buffer.concat(chunks).toString('utf8');
      at += n;
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The `model_provider` of the rollout at `path`, or undefined when it is not (yet) readable. */
export function rolloutProvider(path: string): string | undefined {
  const known = found.get(path);
  if (known !== undefined) return known;
  if (!ROLLOUT_NAME.test(basename(path))) return undefined;
  const line = firstLine(path);
  if (line === undefined) return undefined;
  let meta: unknown;
  try {
    meta = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isJsonObject(meta) || meta.type !== 'session_meta' || !isJsonObject(meta.payload)) return undefined;
  const provider = meta.payload.model_provider;
  if (typeof provider !== 'string' || !PROVIDER.test(provider)) return undefined;
  if (found.size >= KEPT) found.delete(found.keys().next().value as string);
  found.set(path, provider);
  return provider;
}
