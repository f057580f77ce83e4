/**
 * Regenerates the payload fixtures under test/agents/fixtures/ from the real agents:
 *   npm run build && node dist/test/agents/capture.js [agent | agent/scenario …]
 * Each scenario runs an agent with recording hooks on every event it has, then writes every hook
 * payload (and the agent's own transcripts, where it keeps them) with machine paths rewritten to
 * /home/user/... and secrets replaced, so the files are stable to read and safe to commit.
 */

import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { SCENARIOS } from './capture-scenarios.js';
import type { HookCall, HttpHookCall, PluginCall } from './hooks.js';
import { type AgentName, repoRoot } from './install.js';
import type { AgentRun } from './runner.js';

export interface Captured {
  run: AgentRun;
  repoDir: string;
  /** Other temp dirs whose paths appear in payloads (hook dirs), rewritten to /home/user/work/<name>. */
  dirs?: Record<string, string>;
  command?: HookCall[];
  http?: HttpHookCall[];
  /** OpenCode plugin calls; at most `perName` of each hook/event name are kept (default all). */
  plugin?: PluginCall[];
  /** What Tally's own plugin posted to the recorder (a recording server standing in for it). */
  posts?: HttpHookCall[];
  perName?: number;
  /** Files from run.collected to keep, by their path relative to HOME. */
  keep?: (path: string) => boolean;
  /** Extra facts about the run, written to summary.json. */
  notes?: Record<string, unknown>;
}

export interface Scenario {
  agent: AgentName;
  name: string;
  capture(): Promise<Captured>;
}

/** The munged directory name agents derive from a path (Claude Code: every non-alphanumeric → '-'). */
function munged(path: string): string {
  return path.replace(/[^A-Za-z0-9]/g, '-');
}

/** The npm registry's host name, from npm's own config (fixtures name no registry host). */
function registryHost(): string | undefined {
  try {
    return new URL(execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim()).host;
  } catch {
    return undefined;
  }
}

/** A rewriter that turns this machine's temp paths into the fixture's /home/user/... paths. */
export function anonymizer(c: Captured): (text: string) => string {
  const pairs: [string, string][] = [
    [c.repoDir, '/home/user/project'],
    [munged(c.repoDir), munged('/home/user/project')],
    [c.run.home, '/home/user'],
    [join(c.run.root, 'tmp'), '/home/user/work/tmp'],
    [join(c.run.root, 'run'), '/home/user/work/run'],
    [c.run.root, '/home/user/work'],
    ...Object.entries(c.dirs ?? {}).map(([name, dir]): [string, string] => [dir, `/home/user/work/${name}`]),
    [process.execPath, '/usr/bin/node'],
    [join(repoRoot(), '.cache', 'agents'), '/home/user/.cache/tally-agents'],
    [repoRoot(), '/home/user/tally'],
  ];
  const registry = registryHost();
  if (registry) pairs.push([registry, 'npm-registry.invalid']);
  pairs.sort((a, b) => b[0].length - a[0].length);
  return (text) => {
    let out = text;
    for (const [from, to] of pairs) out = out.split(from).join(to);
    // A per-run secret Claude Code hands its hooks; never commit one, even a dead one.
    return out.replace(/("CLAUDE_CODE_MESSAGING_TOKEN":\s*")[0-9a-f]+"/g, '$1<redacted>"');
  };
}

function fileName(prefix: string, label: string, tool: unknown, counts: Map<string, number>): string {
  const base = `${prefix}-${label}${typeof tool === 'string' ? `-${tool.replace(/[^A-Za-z0-9_.-]/g, '_')}` : ''}`;
  const n = (counts.get(base) ?? 0) + 1;
  counts.set(base, n);
  return `${base}-${n}.json`;
}

export function writeCapture(dir: string, c: Captured): string[] {
  const rewrite = anonymizer(c);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const put = (rel: string, text: string): void => {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), rewrite(text));
    written.push(rel);
  };
  const counts = new Map<string, number>();
  const order: string[] = [];
  for (const call of c.command ?? []) {
    const name = fileName('cmd', call.label, call.payload.tool_name, counts);
    order.push(name);
    put(name, `${JSON.stringify({ hook_type: 'command', env: call.env, body: call.payload }, null, 2)}\n`);
  }
  for (const call of c.http ?? []) {
    const name = fileName('http', call.label, call.payload.tool_name, counts);
    order.push(name);
    const { host: _host, ...headers } = call.headers;
    put(
      name,
      `${JSON.stringify({ hook_type: 'http', path: call.path, headers, body: call.payload }, null, 2)}\n`,
    );
  }
  for (const call of c.plugin ?? []) {
    const input = (call.input ?? {}) as Record<string, unknown>;
    const label = call.hook === 'event' ? `event-${String(input.type)}` : call.hook;
    const base = `plugin-${label}${typeof input.tool === 'string' ? `-${input.tool}` : ''}`;
    if ((counts.get(base) ?? 0) >= (c.perName ?? Number.POSITIVE_INFINITY)) continue;
    const name = fileName('plugin', label, input.tool, counts);
    order.push(name);
    const session = call.session === undefined ? {} : { session: call.session };
    put(
      name,
      `${JSON.stringify({ hook: call.hook, input: call.input, output: call.output, ...session }, null, 2)}\n`,
    );
  }
  for (const post of c.posts ?? []) {
    const input = (post.payload.input ?? {}) as Record<string, unknown>;
    const name = fileName('post', String(post.payload.hook_event_name), input.tool, counts);
    order.push(name);
    put(name, `${JSON.stringify({ path: post.path, body: post.payload }, null, 2)}\n`);
  }
  for (const [path, content] of Object.entries(c.run.collected)) {
    if (c.keep && !c.keep(path)) continue;
    put(join('files', rewrite(path)), content);
  }
  const summary = {
    agent: c.run.agent,
    version: c.run.version,
    exitCode: c.run.exitCode,
    hookOrder: order,
    modelRequests: c.run.requests.map(
      (r) => `${r.method} ${r.path} (${r.thread ?? '-'} step ${r.step ?? '-'})`,
    ),
    egress: c.run.egress,
    output: c.run.json ?? c.run.events ?? c.run.stdout,
    ...c.notes,
  };
  put('summary.json', `${JSON.stringify(summary, null, 2)}\n`);
  return written;
}

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  const out = join(repoRoot(), 'test', 'agents', 'fixtures');
  for (const scenario of SCENARIOS) {
    const named = [scenario.agent, `${scenario.agent}/${scenario.name}`];
    if (only.length > 0 && !named.some((n) => only.includes(n))) continue;
    process.stderr.write(`capture: ${scenario.agent}/${scenario.name} … `);
    const captured = await scenario.capture();
    const files = writeCapture(join(out, scenario.agent, scenario.name), captured);
    process.stderr.write(`${files.length} files (exit ${captured.run.exitCode})\n`);
  }
}

if (process.argv[1] && basename(process.argv[1]) === 'capture.js') await main();
