/** The runs whose payloads test/agents/fixtures/ holds (see capture.ts). */
import { join } from 'node:path';
import type { Captured, Scenario } from './capture.js';
import { commandHook, httpHook, opencodePlugin } from './hooks.js';
import type { AgentName } from './install.js';
import { call, type ScriptInput, text } from './model/script.js';
import {
  recordedTallyPlugin,
  SUBAGENT_SETTINGS,
  SUB as TASK_PROMPT,
  task,
  subagentScript as taskScript,
} from './opencode-task.js';
import { makeRepo } from './repo.js';
import { type RunOptions, runAgent } from './runner.js';

/** Every hook event Claude Code 2.1.332 accepts (from its own "Valid events" message). */
export const CLAUDE_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'Notification',
  'UserPromptSubmit',
  'UserPromptExpansion',
  'SessionStart',
  'SessionEnd',
  'Stop',
  'StopFailure',
  'SubagentStart',
  'SubagentStop',
  'PreCompact',
  'PostCompact',
  'PermissionRequest',
  'PermissionDenied',
  'Setup',
  'InstructionsLoaded',
  'CwdChanged',
  'FileChanged',
];

/** Codex 0.171.0's hook events (its app-server's HookEventName list, in PascalCase). */
export const CODEX_EVENTS = [
  'SessionStart',
  'SessionEnd',
  'UserPromptSubmit',
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'PreCompact',
  'PostCompact',
  'SubagentStart',
  'SubagentStop',
  'Stop',
];

/** Gemini CLI 0.61.0's hook events (the `hooks` properties of its settings schema). */
export const GEMINI_EVENTS = [
  'SessionStart',
  'SessionEnd',
  'BeforeAgent',
  'AfterAgent',
  'BeforeModel',
  'AfterModel',
  'BeforeToolSelection',
  'BeforeTool',
  'AfterTool',
  'PreCompress',
  'Notification',
];

/** Qwen Code 0.24.4's hook events (its hooks documentation, bundled with the package). */
export const QWEN_EVENTS = [
  'PreToolUse',
  'PostToolUse',
  'PostToolUseFailure',
  'PostToolBatch',
  'UserPromptSubmit',
  'SessionStart',
  'SessionEnd',
  'Stop',
  'StopFailure',
  'SubagentStart',
  'SubagentStop',
  'PreCompact',
  'PostCompact',
  'Notification',
  'PermissionRequest',
  'PermissionDenied',
];

interface Spec {
  agent: AgentName;
  name: string;
  events: string[];
  prompt: string;
  script: (dir: string) => ScriptInput;
  /** Add an http hook beside each command hook (agents that have them). */
  http?: boolean;
  /** Where the hooks go: the agent's settings (default) or Codex's hooks.json. */
  codexHooksFile?: boolean;
  collect?: string[];
  keep?: (path: string) => boolean;
  options?: Partial<RunOptions>;
}

/** A scenario: recording command (and http) hooks on every event, one scripted run. */
function scenario(spec: Spec): Scenario {
  return {
    agent: spec.agent,
    name: spec.name,
    async capture(): Promise<Captured> {
      const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
      const cmd = commandHook();
      const http = await httpHook();
      try {
        const hooks = Object.fromEntries(
          spec.events.map((e) => [
            e,
            [
              {
                matcher: '',
                hooks: [
                  { type: 'command', command: cmd.command(e) },
                  ...(spec.http ? [{ type: 'http', url: http.urlFor(e) }] : []),
                ],
              },
            ],
          ]),
        );
        const run = await runAgent({
          agent: spec.agent,
          cwd: repo.dir,
          prompt: spec.prompt,
          script: spec.script(repo.dir),
          ...(spec.codexHooksFile
            ? { files: { '.codex/hooks.json': JSON.stringify({ hooks }) }, trustHooks: true }
            : { settings: { hooks } }),
          collect: spec.collect ?? [],
          ...spec.options,
        });
        return {
          run,
          repoDir: repo.dir,
          dirs: { hook: cmd.dir },
          command: cmd.calls(),
          http: http.calls,
          ...(spec.keep ? { keep: spec.keep } : {}),
          ...(run.setup ? { notes: { setup: run.setup } } : {}),
        };
      } finally {
        await http.close();
        cmd.cleanup();
        repo.cleanup();
      }
    },
  };
}

const SUB = 'SUBTASK-ALPHA: write sub.txt in the project';

function subagentScript(dir: string, background: boolean): ScriptInput {
  const input: Record<string, unknown> = {
    description: 'Write sub file',
    prompt: SUB,
    subagent_type: 'general-purpose',
  };
  if (!background) input.run_in_background = false;
  return {
    steps: [call('Agent', input), text('Main done.')],
    threads: [
      {
        match: 'SUBTASK-ALPHA',
        steps: [
          call('Write', { file_path: join(dir, 'sub.txt'), content: 'from subagent\n' }),
          call('Bash', { command: 'echo sub > sub2.txt', description: 'Write sub2.txt' }),
          text('Sub done.'),
        ],
      },
    ],
  };
}

/**
 * A nested spawn: the main agent spawns A, A writes child.txt and spawns B, B writes grandchild.txt
 * (foreground throughout; `model` gives B a model of its own where the spawn tool takes one).
 */
export function nestedSubagentScript(
  dir: string,
  tools: { spawn: string; write: string; modelB?: string },
): ScriptInput {
  const spawn = (description: string, prompt: string, model?: string) =>
    call(tools.spawn, {
      description,
      prompt,
      subagent_type: 'general-purpose',
      ...(model ? { model } : {}),
      run_in_background: false,
    });
  return {
    steps: [spawn('A', 'SUBTASK-ALPHA: write child.txt, then delegate'), text('Main done.')],
    threads: [
      {
        match: 'SUBTASK-ALPHA',
        steps: [
          call(tools.write, { file_path: join(dir, 'child.txt'), content: 'child\n' }),
          spawn('B', 'SUBTASK-BETA: write grandchild.txt', tools.modelB),
          text('A done.'),
        ],
      },
      {
        match: 'SUBTASK-BETA',
        steps: [
          call(tools.write, { file_path: join(dir, 'grandchild.txt'), content: 'grandchild\n' }),
          text('B done.'),
        ],
      },
    ],
  };
}

const NESTED_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PostToolUse',
  'SubagentStart',
  'SubagentStop',
  'Stop',
  'SessionEnd',
];

/** A file write and a shell command, with the tool names of one agent. */
function writeShell(
  write: string,
  shell: string,
  shellArgs: (dir: string) => Record<string, unknown>,
  pathKey = 'file_path',
) {
  return (dir: string): ScriptInput => [
    call(write, { [pathKey]: join(dir, 'a.txt'), content: 'alpha\n' }),
    call(shell, shellArgs(dir)),
    text('All done.'),
  ];
}

const PROMPT = 'Write a.txt, then b.txt with the shell.';

const OPENCODE_SCRIPT = (dir: string): ScriptInput =>
  writeShell('write', 'bash', () => ({ command: 'echo beta > b.txt', description: 'b' }), 'filePath')(dir);

/** OpenCode: the recording plugin instead of hooks; `ask` permissions show what headless does. */
function opencodeScenario(name: string, settings: Record<string, unknown>): Scenario {
  return {
    agent: 'opencode',
    name,
    async capture(): Promise<Captured> {
      const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
      const plugin = opencodePlugin();
      try {
        const run = await runAgent({
          agent: 'opencode',
          cwd: repo.dir,
          prompt: PROMPT,
          script: OPENCODE_SCRIPT(repo.dir),
          files: plugin.files,
          settings,
          permissive: Object.keys(settings).length === 0,
          collect: ['.local/share/opencode/log'],
        });
        return { run, repoDir: repo.dir, dirs: { plugin: plugin.dir }, plugin: plugin.calls(), perName: 2 };
      } finally {
        plugin.cleanup();
        repo.cleanup();
      }
    },
  };
}
/**
 * OpenCode's task tool: the recording plugin, which also asks OpenCode's client for each hook's
 * session, beside Tally's own plugin posting to a recording server (the `post-*` files are what the
 * recorder receives).
 */
function opencodeSubagentScenario(): Scenario {
  return {
    agent: 'opencode',
    name: 'subagent',
    async capture(): Promise<Captured> {
      const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
      const plugin = opencodePlugin([], { sessions: true });
      const tally = await recordedTallyPlugin();
      try {
        const run = await runAgent({
          agent: 'opencode',
          cwd: repo.dir,
          prompt: 'Write main.txt, then delegate the sub files.',
          script: taskScript(repo.dir, [
            call('bash', { command: 'echo main > main.txt', description: 'main' }),
            { calls: [task(TASK_PROMPT)] },
            call('write', { filePath: join(repo.dir, 'after.txt'), content: 'after\n' }),
          ]),
          settings: SUBAGENT_SETTINGS,
          files: { ...plugin.files, ...tally.files },
          env: tally.env,
          collect: ['.local/share/opencode/log'],
        });
        return {
          run,
          repoDir: repo.dir,
          dirs: { plugin: plugin.dir, 'tally-home': tally.home },
          plugin: plugin.calls(),
          posts: tally.posts(),
          perName: 2,
        };
      } finally {
        await tally.close();
        plugin.cleanup();
        repo.cleanup();
      }
    },
  };
}

const claudeWriteBash = writeShell('Write', 'Bash', () => ({
  command: 'echo beta > b.txt',
  description: 'Write b.txt',
}));

export const SCENARIOS: Scenario[] = [
  scenario({
    agent: 'claude-code',
    name: 'write-bash',
    events: CLAUDE_EVENTS,
    prompt: PROMPT,
    script: claudeWriteBash,
    collect: ['.claude/projects'],
  }),
  scenario({
    agent: 'claude-code',
    name: 'subagent',
    events: CLAUDE_EVENTS,
    prompt: 'Delegate the sub file to a subagent.',
    script: (dir) => subagentScript(dir, false),
    http: true,
    collect: ['.claude/projects'],
  }),
  scenario({
    agent: 'claude-code',
    name: 'background-subagent',
    events: CLAUDE_EVENTS,
    prompt: 'Delegate the sub file to a subagent.',
    script: (dir) => subagentScript(dir, true),
  }),
  scenario({
    agent: 'claude-code',
    name: 'nested-subagent',
    events: NESTED_EVENTS,
    prompt: 'Delegate.',
    script: (dir) => nestedSubagentScript(dir, { spawn: 'Agent', write: 'Write', modelB: 'haiku' }),
    collect: ['.claude/projects'],
  }),
  scenario({
    agent: 'claude-code',
    name: 'headless-default-permissions',
    events: CLAUDE_EVENTS,
    prompt: 'Write a.txt, write b.txt with the shell, run false.',
    script: (dir) => [
      call('Write', { file_path: join(dir, 'a.txt'), content: 'alpha\n' }),
      call('Bash', { command: 'echo beta > b.txt', description: 'Write b.txt' }),
      call('Bash', { command: 'false', description: 'Fail' }),
      text('All done.'),
    ],
    options: { permissive: false },
  }),
  scenario({
    agent: 'codex',
    name: 'apply-patch-shell',
    events: CODEX_EVENTS,
    prompt: 'Add a.txt, edit README.md, then write b.txt with the shell.',
    script: (dir) => [
      call('apply_patch', '*** Begin Patch\n*** Add File: a.txt\n+alpha\n*** End Patch\n'),
      call(
        'apply_patch',
        '*** Begin Patch\n*** Update File: README.md\n@@\n-# demo\n+# demo, edited\n*** End Patch\n',
      ),
      call('exec_command', { cmd: 'echo beta > b.txt', workdir: dir }),
      text('All done.'),
    ],
    codexHooksFile: true,
    collect: ['.codex'],
    keep: (path) =>
      path.startsWith('.codex/sessions/') || path === '.codex/config.toml' || path === '.codex/hooks.json',
  }),
  scenario({
    agent: 'gemini-cli',
    name: 'write-shell',
    events: GEMINI_EVENTS,
    prompt: PROMPT,
    script: writeShell('write_file', 'run_shell_command', () => ({
      command: 'echo beta > b.txt',
      description: 'b',
    })),
    collect: ['.gemini'],
    keep: (path) => path.includes('/chats/') || path === '.gemini/settings.json',
  }),
  scenario({
    agent: 'qwen-code',
    name: 'write-shell',
    events: QWEN_EVENTS,
    prompt: PROMPT,
    script: writeShell('write_file', 'run_shell_command', () => ({
      command: 'echo beta > b.txt',
      description: 'b',
    })),
    http: true,
    collect: ['.qwen'],
    keep: (path) => path.includes('/chats/') || path === '.qwen/settings.json',
  }),
  scenario({
    agent: 'qwen-code',
    name: 'nested-subagent',
    events: NESTED_EVENTS,
    prompt: 'Delegate.',
    script: (dir) => nestedSubagentScript(dir, { spawn: 'agent', write: 'write_file' }),
    collect: ['.qwen'],
    keep: (path) => path.includes('/chats/') || path.includes('/subagents/'),
  }),
  opencodeScenario('write-bash', {}),
  opencodeScenario('permission-ask', { permission: { edit: 'ask', bash: 'ask' } }),
  opencodeSubagentScenario(),
];
