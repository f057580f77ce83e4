/** `tally run` of a shell-script "agent" in a test project, its output piped. */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type makeProject, TALLY_BIN } from '../cli/tally-process.js';

export function runAgentScript(p: ReturnType<typeof makeProject>, script: string) {
  const agent = join(p.dir, 'agent.sh');
  writeFileSync(agent, `${script}\n`, { mode: 0o755 });
  return spawn(process.execPath, [TALLY_BIN, 'run', '--harness', 'claude-code', '--', agent], {
    cwd: p.root,
    env: p.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
