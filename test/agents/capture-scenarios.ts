/** The runs whose payloads test/agents/fixtures/ holds (see capture.ts). */
import { join } from 'node:path';
import type { Captured, Scenario } from './capture.js';
import { commandHook, httpHook } from './hooks.js';
import { call, type ScriptInput, text } from './model/script.js';
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

interface ClaudeCapture {
  name: string;
  prompt: string;
  script: (dir: string) => ScriptInput;
  http: boolean;
  transcripts: boolean;
  options?: Partial<RunOptions>;
}

function claudeScenario(spec: ClaudeCapture): Scenario {
  return {
    agent: 'claude-code',
    name: spec.name,
    async capture(): Promise<Captured> {
      const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
      const cmd = commandHook();
      const http = await httpHook();
      try {
        const hooks = Object.fromEntries(
          CLAUDE_EVENTS.map((e) => [
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
          agent: 'claude-code',
          cwd: repo.dir,
          prompt: spec.prompt,
          script: spec.script(repo.dir),
          settings: { hooks },
          collect: spec.transcripts ? ['.claude/projects'] : [],
          ...spec.options,
        });
        return { run, repoDir: repo.dir, dirs: { hook: cmd.dir }, command: cmd.calls(), http: http.calls };
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

const codexPatchShell: Scenario = {
  agent: 'codex',
  name: 'apply-patch-shell',
  async capture(): Promise<Captured> {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const cmd = commandHook();
    try {
      const hooks = Object.fromEntries(
        CODEX_EVENTS.map((e) => [
          e,
          [{ matcher: '', hooks: [{ type: 'command', command: cmd.command(e) }] }],
        ]),
      );
      const patch = '*** Begin Patch\n*** Add File: a.txt\n+alpha\n*** End Patch\n';
      const edit =
        '*** Begin Patch\n*** Update File: README.md\n@@\n-# demo\n+# demo, edited\n*** End Patch\n';
      const run = await runAgent({
        agent: 'codex',
        cwd: repo.dir,
        prompt: 'Add a.txt, edit README.md, then write b.txt with the shell.',
        script: [
          call('apply_patch', patch),
          call('apply_patch', edit),
          call('exec_command', { cmd: 'echo beta > b.txt', workdir: repo.dir }),
          text('All done.'),
        ],
        files: { '.codex/hooks.json': JSON.stringify({ hooks }) },
        trustHooks: true,
        collect: ['.codex'],
      });
      return {
        run,
        repoDir: repo.dir,
        dirs: { hook: cmd.dir },
        command: cmd.calls(),
        keep: (path) =>
          path.startsWith('.codex/sessions/') ||
          path === '.codex/config.toml' ||
          path === '.codex/hooks.json',
        notes: { trust: run.setup },
      };
    } finally {
      cmd.cleanup();
      repo.cleanup();
    }
  },
};

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

const geminiWriteShell: Scenario = {
  agent: 'gemini-cli',
  name: 'write-shell',
  async capture(): Promise<Captured> {
    const repo = makeRepo({ files: { 'README.md': '# demo\n' } });
    const cmd = commandHook();
    try {
      const hooks = Object.fromEntries(
        GEMINI_EVENTS.map((e) => [
          e,
          [{ matcher: '', hooks: [{ type: 'command', command: cmd.command(e) }] }],
        ]),
      );
      const run = await runAgent({
        agent: 'gemini-cli',
        cwd: repo.dir,
        prompt: 'Write a.txt, then b.txt with the shell.',
        script: [
          call('write_file', { file_path: join(repo.dir, 'a.txt'), content: 'alpha\n' }),
          call('run_shell_command', { command: 'echo beta > b.txt', description: 'Write b.txt' }),
          text('All done.'),
        ],
        settings: { hooks },
        collect: ['.gemini'],
      });
      return {
        run,
        repoDir: repo.dir,
        dirs: { hook: cmd.dir },
        command: cmd.calls(),
        keep: (path) => path.includes('/chats/') || path === '.gemini/settings.json',
      };
    } finally {
      cmd.cleanup();
      repo.cleanup();
    }
  },
};

export const SCENARIOS: Scenario[] = [
  codexPatchShell,
  geminiWriteShell,
  claudeScenario({
    name: 'write-bash',
    prompt: 'Write a.txt, then b.txt with the shell.',
    script: (dir) => [
      call('Write', { file_path: join(dir, 'a.txt'), content: 'alpha\n' }),
      call('Bash', { command: 'echo beta > b.txt', description: 'Write b.txt' }),
      text('All done.'),
    ],
    http: false,
    transcripts: true,
  }),
  claudeScenario({
    name: 'subagent',
    prompt: 'Delegate the sub file to a subagent.',
    script: (dir) => subagentScript(dir, false),
    http: true,
    transcripts: true,
  }),
  claudeScenario({
    name: 'background-subagent',
    prompt: 'Delegate the sub file to a subagent.',
    script: (dir) => subagentScript(dir, true),
    http: false,
    transcripts: false,
  }),
  claudeScenario({
    name: 'headless-default-permissions',
    prompt: 'Write a.txt, write b.txt with the shell, run false.',
    script: (dir) => [
      call('Write', { file_path: join(dir, 'a.txt'), content: 'alpha\n' }),
      call('Bash', { command: 'echo beta > b.txt', description: 'Write b.txt' }),
      call('Bash', { command: 'false', description: 'Fail' }),
      text('All done.'),
    ],
    http: false,
    transcripts: false,
    options: { permissive: false },
  }),
];
