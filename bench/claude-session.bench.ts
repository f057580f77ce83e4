/**
 * A whole scripted session of the real Claude Code (31 tool calls: writes, edits, shell commands,
 * reads) alone, with Tally's hook set answered by nothing, and under `tally run`: see
 * agent-session.ts for what is measured and how, null-hooks.ts for the floor.
 *
 * The floor: the very hook set `tally run` writes for Claude Code (every event Tally hooks, over
 * http; SessionStart a command) pointed at a server that answers `{}` at once and a command that
 * reads its input and exits — hooks that cost Claude Code what Tally's cost it, with nothing
 * behind them. That run is the floor any hook-based capture of Claude Code pays; Tally's own share
 * is `tally run` over it.
 */
import { measureSession, probeSession, sessionResults } from './agent-session.js';
import type { BenchModule } from './harness.js';
import { CLAUDE_CODE } from './session-agents.js';

const bench: BenchModule = {
  title: 'a whole scripted Claude Code session, alone, with null hooks and under tally run',
  async run() {
    const measured = await measureSession(CLAUDE_CODE);
    return [...sessionResults(CLAUDE_CODE.label, measured), ...(await probeSession(CLAUDE_CODE))];
  },
};

export default bench;
