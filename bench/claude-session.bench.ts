/**
 * A whole scripted session of the real Claude Code (31 tool calls: writes, edits, shell commands,
 * reads) alone and under `tally run`: see agent-session.ts for what is measured and how.
 *
 * And Claude Code's own cost of the hooks Tally installs, apart from Tally's: the same session with
 * the very hook set `tally run` writes (every event Tally hooks, over http; SessionStart a command)
 * pointed at a server that answers `{}` at once and a command that reads its input and exits —
 * hooks that cost Claude Code what Tally's cost it, with nothing behind them. That run is the
 * floor any hook-based capture of Claude Code pays; Tally's own share is `tally run` over it.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { withCertificateJudge } from '../src/boundary/certificate-backend.js';
import { claudeCodeHooks, planHooks } from '../src/capture/claude-code/hooks.js';
import { makeRepo } from '../test/agents/repo.js';
import { runAgent } from '../test/agents/runner.js';
import { checkDisk, measureSession, probeSession, sessionResults, sessionScript } from './agent-session.js';
import { type BenchModule, type BenchResult, median, spread } from './harness.js';
import { CLAUDE_CODE } from './session-agents.js';

/** Tally's hook set for Claude Code, every http hook sent to `url`, the command hook a bare `cat`. */
function nullHooks(url: string): Record<string, unknown> {
  const hooks = claudeCodeHooks(planHooks(withCertificateJudge(null)), {
    port: 1,
    tally: 'tally',
    transport: 'http',
  });
  for (const groups of Object.values(hooks))
    for (const group of groups)
      for (const hook of group.hooks as Record<string, unknown>[]) {
        if (hook.type === 'http') hook.url = url;
        else hook.command = 'cat > /dev/null';
      }
  return hooks;
}

async function nullHooked(): Promise<BenchResult[]> {
  let hits = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      hits += 1;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '2' });
      res.end('{}');
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const alone: number[] = [];
  const hooked: number[] = [];
  const requests: number[] = [];
  try {
    for (let round = 0; round < 3; round++)
      for (const withHooks of [false, true]) {
        const repo = makeRepo({ files: { 'README.md': '# bench\n' } });
        try {
          hits = 0;
          const run = await runAgent({
            agent: 'claude-code',
            cwd: repo.dir,
            prompt: 'Do the steps.',
            script: sessionScript(repo.dir, CLAUDE_CODE.tools),
            ...(withHooks ? { settings: { hooks: nullHooks(url) } } : {}),
          });
          if (run.exitCode !== 0)
            throw new Error(`Claude Code exited ${run.exitCode}: ${run.stderr.slice(-500)}`);
          checkDisk(repo.dir, `Claude Code ${withHooks ? 'with null hooks' : 'alone'}`);
          (withHooks ? hooked : alone).push(run.durationMs);
          if (withHooks) requests.push(hits);
        } finally {
          repo.cleanup();
        }
      }
  } finally {
    server.close();
  }
  return [
    {
      name: `Claude Code with Tally's hook set answered by a server that does nothing (${spread(requests)} http hook requests; median of 3)`,
      measured: `${median(hooked).toFixed(0)} ms (${spread(hooked)})`,
      baseline: `alone ${median(alone).toFixed(0)} ms (${spread(alone)})`,
      ratio: median(hooked) / median(alone),
      target: 'report: the floor of hook-based capture',
    },
  ];
}

const bench: BenchModule = {
  title: 'a whole scripted Claude Code session, alone and under tally run',
  async run() {
    const measured = await measureSession(CLAUDE_CODE);
    return [
      ...sessionResults(CLAUDE_CODE.label, measured),
      ...(await nullHooked()),
      ...(await probeSession(CLAUDE_CODE)),
    ];
  },
};

export default bench;
