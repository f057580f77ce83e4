/**
 * Whole scripted sessions of the other real agents Tally captures — Codex, Gemini CLI, Qwen Code,
 * OpenCode — each alone, with `tally run`'s hook set answered by nothing (the floor of hook-based
 * capture, null-hooks.ts) and under `tally run`, 31 tool calls (see agent-session.ts).
 * TALLY_BENCH_AGENTS=codex,opencode measures only those.
 */
import { measureSession, probeSession, sessionResults } from './agent-session.js';
import type { BenchModule, BenchResult } from './harness.js';
import { CODEX, GEMINI_CLI, OPENCODE, QWEN_CODE } from './session-agents.js';

const only = process.env.TALLY_BENCH_AGENTS?.split(',').filter(Boolean);

const bench: BenchModule = {
  title:
    'whole scripted sessions of Codex, Gemini CLI, Qwen Code and OpenCode, alone, with null hooks and under tally run',
  async run() {
    const rows: BenchResult[] = [];
    for (const a of [CODEX, GEMINI_CLI, QWEN_CODE, OPENCODE]) {
      if (only && !only.includes(a.agent)) continue;
      rows.push(...sessionResults(a.label, await measureSession(a)), ...(await probeSession(a)));
    }
    return rows;
  },
};

export default bench;
