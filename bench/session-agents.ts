/**
 * The real agents whose whole sessions are measured (agent-session.ts), each with the one script's
 * calls in its own tools: a write, an edit, a shell command and a read. Codex has no file tools
 * of its own but apply_patch (an added file, an updated one) and reads through its shell.
 */
import { join } from 'node:path';
import { call } from '../test/agents/model/script.js';
import type { SessionAgent, SessionTools } from './agent-session.js';

/** Write, Edit and Read anywhere; the script's two kinds of shell command. */
const ALLOW = ['Write', 'Edit', 'Read', 'Bash(echo *)', 'Bash(cat *)'] as const;

/** An agent's file and shell tools: their names and the names of their arguments. */
interface ToolNames {
  write: string;
  edit: string;
  shell: string;
  read: string;
  path: string;
  old: string;
  new: string;
  /** Arguments the edit tool requires beyond the path and the two strings. */
  editExtra?: (before: string, after: string) => Record<string, string>;
}

function fileTools(n: ToolNames): SessionTools {
  return {
    write: (dir, file, content) => call(n.write, { [n.path]: join(dir, file), content }),
    edit: (dir, file, before, after) =>
      call(n.edit, {
        [n.path]: join(dir, file),
        [n.old]: before,
        [n.new]: after,
        ...n.editExtra?.(before, after),
      }),
    shell: (_dir, command) => call(n.shell, { command, description: command }),
    read: (dir, file) => call(n.read, { [n.path]: join(dir, file) }),
  };
}

export const CLAUDE_CODE: SessionAgent = {
  agent: 'claude-code',
  label: 'Claude Code',
  allow: ALLOW,
  tools: fileTools({
    write: 'Write',
    edit: 'Edit',
    shell: 'Bash',
    read: 'Read',
    path: 'file_path',
    old: 'old_string',
    new: 'new_string',
  }),
};

const patch = (body: string) => `*** Begin Patch\n${body}*** End Patch\n`;

export const CODEX: SessionAgent = {
  agent: 'codex',
  label: 'Codex',
  allow: ALLOW,
  tools: {
    write: (_dir, file, content) => call('apply_patch', patch(`*** Add File: ${file}\n+${content}`)),
    edit: (_dir, file, before, after) =>
      call('apply_patch', patch(`*** Update File: ${file}\n@@\n-${before}\n+${after}\n`)),
    shell: (dir, command) => call('exec_command', { cmd: command, workdir: dir }),
    read: (dir, file) => call('exec_command', { cmd: `cat ${file}`, workdir: dir }),
  },
};

/** Gemini CLI's tools; Qwen Code, its fork, names the edit tool `edit` and asks no instruction. */
const GEMINI_TOOLS: ToolNames = {
  write: 'write_file',
  edit: 'replace',
  shell: 'run_shell_command',
  read: 'read_file',
  path: 'file_path',
  old: 'old_string',
  new: 'new_string',
  editExtra: (before, after) => ({ instruction: `change ${before} to ${after}` }),
};

export const GEMINI_CLI: SessionAgent = {
  agent: 'gemini-cli',
  label: 'Gemini CLI',
  allow: ALLOW,
  tools: fileTools(GEMINI_TOOLS),
};

export const QWEN_CODE: SessionAgent = {
  agent: 'qwen-code',
  label: 'Qwen Code',
  allow: ALLOW,
  tools: fileTools({ ...GEMINI_TOOLS, edit: 'edit', editExtra: () => ({}) }),
};

export const OPENCODE: SessionAgent = {
  agent: 'opencode',
  label: 'OpenCode',
  allow: ALLOW,
  tools: fileTools({
    write: 'write',
    edit: 'edit',
    shell: 'bash',
    read: 'read',
    path: 'filePath',
    old: 'oldString',
    new: 'newString',
  }),
};
