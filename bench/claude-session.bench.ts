/**
 * A whole scripted session of the real Claude Code (31 tool calls: writes, edits, shell commands,
 * reads) alone and under `tally run`: see agent-session.ts for what is measured and how.
 */
import { measureSession, probeSession, sessionResults } from './agent-session.js';
import type { BenchModule } from './harness.js';
import { CLAUDE_CODE } from './session-agents.js';

const bench: BenchModule = {
  title: 'a whole scripted Claude Code session, alone and under tally run',
  async run() {
    return [
      ...sessionResults(CLAUDE_CODE.label, await measureSession(CLAUDE_CODE)),
      ...(await probeSession(CLAUDE_CODE)),
    ];
  },
};

export default bench;
