/**
 * Which of the hooks Codex lists are the ones Tally wrote: in the file Tally wrote (its key's file,
 * both read through their links: Codex names a `$CODEX_HOME` that is a link by the folder it leads
 * to), at an event Tally wrote a hook for, and with the very handler Tally wrote there — command,
 * matcher, timeout, `async` and the rest as Codex read them. A hook the file gained between Tally's
 * write and Codex's listing (another process's edit), or one of Tally's changed there, is not
 * Tally's: trusting it would trust what Tally never wrote.
 */
import { realpathSync } from 'node:fs';
import { isJsonObject, type JsonObject } from '../../core/json.js';
import { type CodexHookEntry, trustCodexHooks } from './trust.js';

/** Codex caps a SessionEnd hook's timeout at 3 s (measured: 10 written, 3 listed). */
const TIMEOUT_CAP: Record<string, number> = { sessionEnd: 3 };

/** The file part of a hook's key, `<file>:<event>:<group>:<handler>`. */
function keyFile(key: string): string {
  return key.split(':').slice(0, -3).join(':');
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** How Codex would list a handler Tally wrote at `event` (PreToolUse → `preToolUse`). */
function listed(event: string, matcher: unknown, hook: JsonObject): string {
  const name = event.charAt(0).toLowerCase() + event.slice(1);
  const timeout = typeof hook.timeout === 'number' ? hook.timeout : 600;
  return JSON.stringify([
    name,
    'command',
    hook.command,
    false,
    typeof matcher === 'string' ? matcher : null,
    Math.min(timeout, TIMEOUT_CAP[name] ?? timeout),
    null,
    null,
  ]);
}

function asListed(hook: CodexHookEntry): string {
  return JSON.stringify([
    hook.eventName,
    hook.handlerType,
    hook.command,
    hook.async,
    hook.matcher ?? null,
    hook.timeoutSec,
    hook.statusMessage ?? null,
    hook.additionalContextLimit ?? null,
  ]);
}

/** The handlers of a hooks block, each as Codex would list it. */
function listedHandlers(written: Record<string, JsonObject[]>): string[] {
  return Object.entries(written).flatMap(([event, groups]) =>
    groups.flatMap((group) =>
      (Array.isArray(group.hooks) ? group.hooks : [])
        .filter(isJsonObject)
        .map((hook) => listed(event, group.matcher, hook)),
    ),
  );
}

/** True for a listed hook that is one of `written`'s handlers in the file at `path`. */
function writtenByTally(
  path: string,
  written: Record<string, JsonObject[]>,
): (hook: CodexHookEntry) => boolean {
  const file = canonical(path);
  const handlers = new Set(listedHandlers(written));
  return (hook) => canonical(keyFile(hook.key)) === file && handlers.has(asListed(hook));
}

/**
 * Has Codex trust (and switch on) the hooks Tally wrote into `path`, and nothing else. `trusted`
 * only when Codex lists every handler written, each trusted and on: a file Codex does not read
 * (hooks off in its config) or one that lost a handler meanwhile is `untrusted`.
 */
export async function trustWrittenHooks(
  path: string,
  written: Record<string, JsonObject[]>,
  codex: { bin: string; env: NodeJS.ProcessEnv; cwd: string },
): Promise<JsonObject> {
  const ours = writtenByTally(path, written);
  const listed = (await trustCodexHooks(codex.bin, codex.env, codex.cwd, ours)).filter(ours);
  const seen = new Set(listed.map(asListed));
  const handlers = listedHandlers(written);
  const running = listed.filter((h) => h.trustStatus === 'trusted' && h.enabled !== false);
  const whole = handlers.every((h) => seen.has(h)) && running.length === listed.length;
  return {
    trust: whole ? 'trusted' : 'untrusted',
    hooks_trusted: running.length,
    hooks_listed: listed.length,
    hooks_written: handlers.length,
  };
}
