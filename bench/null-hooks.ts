/**
 * The floor of hook-based capture: an agent's session with the very hooks `tally run` wires for it
 * (runHooks, src/cli/run-wiring.ts: the same native events, matchers, timeouts, transports and
 * failure settings), with nothing behind them. Each http hook posts to a server on 127.0.0.1 that
 * answers `{}` at once; each command hook's command only reads its input (NULL_COMMAND). OpenCode
 * runs Tally's own plugin as `tally run` writes it, not a stand-in with the same hooks, so it cannot
 * drift from it: its posts go to that server (the TALLY_HOME it reads names the server as the
 * recorder) and its one process, the shim at a session's start, is the null command. Its work
 * around a post, two small file reads and a lookup of OpenCode's session, is well under a
 * millisecond an event. What such a session costs over the agent alone is the agent's own
 * handling of the hooks, which no capture through them avoids.
 *
 * Every hook that fires is counted (the server's requests and the command's runs, by the payload's
 * `hook_event_name`), so a floor whose hooks did not run cannot pass for a cheap one.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { trustCodexHooks } from '../src/capture/codex/trust.js';
import { runHooks } from '../src/cli/run-wiring.js';
import { tallyParts } from '../src/cli/tally-bin.js';
import type { JsonObject } from '../src/core/json.js';
import { SECRET_ENV, SESSION_ENV } from '../src/recorder/config.js';
import type { AgentName } from '../test/agents/install.js';
import type { RunOptions } from '../test/agents/runner.js';
import { makeTempDir, removeTempDir } from '../test/agents/temp.js';

/** Hook events that fired in one run. */
export interface FiredHooks {
  /** Posts to the null server (http hooks, OpenCode's plugin). */
  requests: number;
  /** Runs of the null command. */
  commands: number;
  /** Both, by the payload's `hook_event_name`. */
  events: Record<string, number>;
}

export interface NullHooks {
  /** What puts the hook set in the agent's run. */
  options: Pick<RunOptions, 'settings' | 'files' | 'env' | 'beforeSpawn'>;
  fired(): FiredHooks;
  close(): Promise<void>;
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The command hooks' command: the cheapest fair one. The agent itself spawns a shell for each
 * command hook (that cost is its mechanism's, whatever the command), and writes the payload into
 * the hook's stdin: one `cat` draining it is the least any hook that takes its input can do. It
 * appends the payload to a log rather than to /dev/null so that each run is counted; that costs
 * nothing more (the write lands in the page cache: 3.5 against 3.3 ms for `sh -c` with a 3 KB
 * payload, the same within the noise).
 */
function nullCommand(log: string): string {
  return `cat >> ${quote(log)}`;
}

/** The name of each hook payload in `text` (one or several, concatenated). */
function eventNames(text: string): string[] {
  return [...text.matchAll(/(?<!\\)"hook_event_name"\s*:\s*"([^"\\]*)"/g)].map((m) => m[1]!);
}

/** `block` with every http hook's URL `url` and every command hook's command `command`, all else kept. */
function nulled(
  block: Record<string, JsonObject[]>,
  url: string,
  command: string,
): Record<string, JsonObject[]> {
  const hook = (h: JsonObject): JsonObject => {
    if (h.type === 'http') return { ...h, url };
    if (h.type === 'command') return { ...h, command };
    throw new Error(`a hook of type ${String(h.type)} has no null form`);
  };
  return Object.fromEntries(
    Object.entries(block).map(([event, groups]) => [
      event,
      groups.map((g) => ({ ...g, hooks: (g.hooks as JsonObject[]).map(hook) })),
    ]),
  );
}

/** Tally's OpenCode plugin with its shim, the process it starts at a session's start, `sh <script>`. */
function nullPlugin(plugin: string, script: string): string {
  const [node, bin] = tallyParts();
  const shim = `"node":${JSON.stringify(node)},"tally":${JSON.stringify(bin)}`;
  if (!plugin.includes(shim)) throw new Error("Tally's OpenCode plugin no longer names its shim as expected");
  return plugin.replace(shim, () => `"node":"/bin/sh","tally":${JSON.stringify(script)}`);
}

/**
 * Codex runs a user's hook only once trusted: the hooks are trusted as `tally run` trusts its own,
 * through Codex's app-server (trustCodexHooks), and must all be trusted before the agent starts.
 */
function trusting(cwd: string, count: number): NonNullable<RunOptions['beforeSpawn']> {
  return async (bin, env) => {
    const file = join(env.CODEX_HOME!, 'hooks.json');
    const ours = (h: { key: string }) => h.key.startsWith(`${file}:`);
    const listed = (await trustCodexHooks(bin, env, cwd, ours)).filter(ours);
    const trusted = listed.filter((h) => h.trustStatus === 'trusted').length;
    if (listed.length !== count || trusted !== count)
      throw new Error(`Codex lists ${listed.length} of the ${count} null hooks, ${trusted} trusted`);
    return listed;
  };
}

/**
 * The null hook set of `agent` for one run in `cwd`, its server listening: pass `options` to
 * runAgent, read `fired()` after, then close.
 */
export async function openNullHooks(agent: AgentName, cwd: string): Promise<NullHooks> {
  const posted: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' });
      res.end('{}');
      posted.push(eventNames(body)[0] ?? '(unnamed)');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const port = (server.address() as AddressInfo).port;
  const dir = makeTempDir('null-hooks');
  const log = join(dir, 'commands.log');
  writeFileSync(log, '');
  // The bench's project has no hook registration of its own: tally run wires the default set.
  const hooks = runHooks(agent, null, { port, tally: 'tally' });
  // tally run puts the secret and the session in the agent's environment (http hooks send them).
  const env = { [SECRET_ENV]: '0'.repeat(64), [SESSION_ENV]: 'ses_null' };
  let options: NullHooks['options'];
  if ('plugin' in hooks) {
    const home = join(dir, 'tally');
    mkdirSync(join(home, 'run'), { recursive: true });
    writeFileSync(join(home, 'recorder.json'), JSON.stringify({ port }));
    writeFileSync(join(home, 'run', 'recorder.secret'), env[SECRET_ENV]!);
    writeFileSync(join(dir, 'null-hook.sh'), `${nullCommand(log)}\n`);
    options = {
      files: { '.config/opencode/plugin/tally-run.js': nullPlugin(hooks.plugin, join(dir, 'null-hook.sh')) },
      env: { ...env, TALLY_HOME: home },
    };
  } else {
    const block = nulled(hooks.block, `http://127.0.0.1:${port}/hook`, nullCommand(log));
    const count = Object.values(block).reduce((n, groups) => n + groups.flatMap((g) => g.hooks).length, 0);
    options =
      agent === 'codex'
        ? {
            files: { '.codex/hooks.json': JSON.stringify({ hooks: block }) },
            env,
            beforeSpawn: trusting(cwd, count),
          }
        : { settings: { hooks: block }, env };
  }
  return {
    options,
    fired() {
      const commands = eventNames(readFileSync(log, 'utf8'));
      const events: Record<string, number> = {};
      for (const name of [...posted, ...commands]) events[name] = (events[name] ?? 0) + 1;
      return { requests: posted.length, commands: commands.length, events };
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((ok) => server.close(() => ok()));
      removeTempDir(dir);
    },
  };
}
