/**
 * What the OpenCode subagent runs share: a script whose primary agent hands a task to OpenCode's
 * built-in `general` subagent through the `task` tool (the subagent writes a file and runs a shell
 * command), a config giving that subagent a model of its own, and Tally's own plugin posting to a
 * recording server that stands in for the recorder (what the recorder would receive, byte for byte).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openCodePlugin } from '../../src/capture/opencode/plugin.js';
import { type HttpHook, type HttpHookCall, httpHook } from './hooks.js';
import { call, type ScriptInput, type Step, text } from './model/script.js';
import { TALLY } from './tally-flow.js';
import { makeTempDir, removeTempDir } from './temp.js';

export const SUB = 'SUBTASK-ALPHA: write sub.txt, then sub2.txt with the shell';
export const BETA = 'SUBTASK-BETA: write beta.txt with the shell';

/** The subagent's model: not the session's, so the graph shows whose model is whose. */
export const SUB_MODEL = 'sub-model';

/** OpenCode config: the `general` subagent runs the scripted provider's second model. */
export const SUBAGENT_SETTINGS = {
  provider: { scripted: { models: { [SUB_MODEL]: { name: 'Sub model', tool_call: true } } } },
  agent: { general: { model: `scripted/${SUB_MODEL}` } },
};

export function task(prompt: string, description = 'Write sub files') {
  return { tool: 'task', input: { description, prompt, subagent_type: 'general' } };
}

/** `main` are the primary's steps; each subagent is a thread matched by its task's prompt. */
export function subagentScript(dir: string, main: Step[]): ScriptInput {
  return {
    steps: [...main, text('Main done.')],
    threads: [
      {
        match: 'SUBTASK-ALPHA',
        steps: [
          call('write', { filePath: join(dir, 'sub.txt'), content: 'from subagent\n' }),
          call('bash', { command: 'echo two > sub2.txt', description: 'sub2' }),
          text('Sub done.'),
        ],
      },
      {
        match: 'SUBTASK-BETA',
        steps: [call('bash', { command: 'echo b > beta.txt', description: 'beta' }), text('Beta done.')],
      },
    ],
  };
}

export interface RecordedPlugin {
  /** Files for runAgent: Tally's plugin in OpenCode's user plugin folder. */
  files: Record<string, string>;
  /** TALLY_HOME for the run: it names the recording server as the recorder. */
  env: Record<string, string>;
  home: string;
  /** Every post the plugin (and the shim it runs for a session start) made. */
  posts(): HttpHookCall[];
  close(): Promise<void>;
}

/** Tally's OpenCode plugin, as `tally install` writes it, posting to a recording server. */
export async function recordedTallyPlugin(): Promise<RecordedPlugin> {
  const server: HttpHook = await httpHook();
  const home = makeTempDir('tally-home');
  mkdirSync(join(home, 'run'), { recursive: true });
  writeFileSync(join(home, 'recorder.json'), JSON.stringify({ port: Number(new URL(server.url).port) }));
  writeFileSync(join(home, 'run', 'recorder.secret'), `${'ab'.repeat(32)}\n`);
  const plugin = openCodePlugin({
    node: process.execPath,
    tallyBin: TALLY,
    failClosed: true,
    timeoutMs: 10_000,
  });
  return {
    files: { '.config/opencode/plugin/tally.js': plugin },
    env: { TALLY_HOME: home },
    home,
    posts: () => server.calls.filter((c) => c.path.startsWith('/hooks/opencode')),
    close: async () => {
      await server.close();
      removeTempDir(home);
    },
  };
}
