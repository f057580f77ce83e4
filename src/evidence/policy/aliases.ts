/**
 * One table of tool-name aliases across agents, so a certificate written once (`Bash(git status*)`,
 * `Edit(src/**)`) means the same thing whether the session ran Claude Code, Codex, Cursor, Gemini CLI,
 * Kimi or any AHP harness. Documented in docs/policy.md.
 */

import { isJsonObject } from '../../core/json.js';
import { patchHeaders, patchLines } from '../../core/patch-headers.js';
import { isUrlValue, urlsOf } from './urls.js';

/** What a tool does, coarsely. `task` is a subagent, `plan` a todo/plan list, `mcp` any MCP server tool. */
export type ToolKind =
  | 'shell'
  | 'read'
  | 'write'
  | 'edit'
  | 'delete'
  | 'search'
  | 'list'
  | 'fetch'
  | 'task'
  | 'plan'
  | 'mcp'
  | 'other';

export interface ToolIdentity {
  canonical: string;
  kind: ToolKind;
}

/** What a tool call acts on: the command of a shell tool, the path(s) of a file tool, the URL(s) of a fetch. */
export interface ToolArgument {
  command?: string;
  path?: string;
  paths?: string[];
  url?: string;
  urls?: string[];
}

/**
 * Canonical names follow Claude Code's spelling (the dialect most hook matchers and permission rules are
 * written in). Every name is matched case-insensitively, so `bash` (Kimi plugin) and `Shell` (Cursor)
 * land on the same row as `Bash`.
 */
export const TOOL_ALIASES: readonly { canonical: string; kind: ToolKind; names: readonly string[] }[] = [
  {
    canonical: 'Bash',
    kind: 'shell',
    names: [
      'Bash', // Claude Code, Codex hooks
      'Shell', // Cursor hooks, Kimi Code CLI
      'shell', // Codex (argv form)
      'local_shell', // Codex
      'exec_command', // Codex unified exec
      'write_stdin', // Codex: text typed into a running shell is a command too
      'WriteShellStdin', // Cursor
      'run_terminal_cmd', // Cursor
      'run_shell_command', // Gemini CLI
      'execute_command', // Cline
      'run_command',
      'run_in_terminal',
      'exec', // OpenClaw
      'terminal',
    ],
  },
  { canonical: 'BashOutput', kind: 'shell', names: ['BashOutput', 'KillShell', 'KillBash', 'process'] },
  {
    canonical: 'Read',
    kind: 'read',
    names: [
      'Read', // Claude Code, Cursor hooks
      'read', // Kimi plugin, OpenClaw
      'read_file', // Gemini CLI, Cursor, Codex MCP-style
      'ReadFile', // Kimi Code CLI
      'read_many_files', // Gemini CLI
      'ReadMediaFile', // Kimi Code CLI
      'NotebookRead',
      'view',
      'view_file',
      'open_file',
    ],
  },
  {
    canonical: 'Write',
    kind: 'write',
    names: ['Write', 'write', 'write_file', 'WriteFile', 'create_file', 'create', 'save_file', 'TabWrite'],
  },
  {
    canonical: 'Edit',
    kind: 'edit',
    names: [
      'Edit', // Claude Code, Cursor hooks
      'edit', // OpenClaw
      'MultiEdit', // Claude Code
      'NotebookEdit', // Claude Code
      'edit_file', // Cursor
      'search_replace', // Cursor
      'StrReplace', // Cursor hooks
      'StrReplaceFile', // Kimi Code CLI
      'replace', // Gemini CLI
      'apply_patch', // Codex
      'ApplyAgentDiff', // Cursor
      'reapply', // Cursor
      'str_replace',
      'insert',
      'patch',
    ],
  },
  { canonical: 'Delete', kind: 'delete', names: ['Delete', 'delete_file', 'DeleteFile', 'remove_file'] },
  {
    canonical: 'Grep',
    kind: 'search',
    names: [
      'Grep', // Claude Code, Cursor, Kimi Code CLI
      'grep_search', // Cursor, Gemini CLI (newer)
      'search_file_content', // Gemini CLI
      'codebase_search', // Cursor
      'SemSearch', // Cursor
      'search',
    ],
  },
  { canonical: 'Glob', kind: 'list', names: ['Glob', 'glob', 'file_search', 'find_files'] },
  { canonical: 'LS', kind: 'list', names: ['LS', 'ls', 'list_dir', 'list_directory', 'list_files'] },
  {
    canonical: 'WebFetch',
    kind: 'fetch',
    names: ['WebFetch', 'web_fetch', 'webfetch', 'fetch', 'FetchURL', 'fetch_url', 'read_url'],
  },
  {
    canonical: 'WebSearch',
    kind: 'fetch',
    names: ['WebSearch', 'web_search', 'google_web_search', 'SearchWeb', 'search_web'],
  },
  { canonical: 'Task', kind: 'task', names: ['Task', 'Agent', 'spawn_agent', 'dispatch_agent'] },
  {
    canonical: 'TodoWrite',
    kind: 'plan',
    names: [
      'TodoWrite',
      'todo_write',
      'write_todos',
      'update_plan',
      'SetTodoList',
      'UpdateTodos',
      'ReadTodos',
      'CreatePlan',
      'ExitPlanMode',
    ],
  },
  { canonical: 'ListMcpResources', kind: 'mcp', names: ['ListMcpResources'] },
  { canonical: 'ReadMcpResource', kind: 'mcp', names: ['ReadMcpResource'] },
];

const BY_LOWER_NAME: ReadonlyMap<string, ToolIdentity> = (() => {
  const map = new Map<string, ToolIdentity>();
  for (const row of TOOL_ALIASES) {
    for (const name of row.names) {
      const key = name.toLowerCase();
      const prior = map.get(key);
      if (prior !== undefined && prior.canonical !== row.canonical) {
        throw new Error(`tool alias table: ${name} is listed under ${prior.canonical} and ${row.canonical}`);
      }
      map.set(key, { canonical: row.canonical, kind: row.kind });
    }
  }
  return map;
})();

/** AHP `tool.kind` values (current and the older enum) and our own kind names → our kind. */
const KIND_HINTS: Readonly<Record<string, ToolKind>> = {
  shell: 'shell',
  file_read: 'read',
  read: 'read',
  file_write: 'write',
  write: 'write',
  file_edit: 'edit',
  edit: 'edit',
  delete: 'delete',
  file_delete: 'delete',
  search: 'search',
  list: 'list',
  fetch: 'fetch',
  task: 'task',
  plan: 'plan',
  mcp: 'mcp',
  other: 'other',
};

/**
 * A tool with a name we do not know but a kind hint that says what it does takes that kind's
 * canonical name, so `Bash(rm -rf *)` still catches a harness's unfamiliar shell tool.
 */
const CANONICAL_FOR_KIND: Partial<Record<ToolKind, string>> = {
  shell: 'Bash',
  read: 'Read',
  write: 'Write',
  edit: 'Edit',
  delete: 'Delete',
  fetch: 'WebFetch',
};

/** True for MCP tool names as Claude Code, Codex and Gemini CLI spell them: `mcp__<server>__<tool>`. */
export function isMcpToolName(name: string): boolean {
  return name.startsWith('mcp__');
}

export function kindFromHint(kindHint: string | undefined): ToolKind | undefined {
  if (kindHint === undefined) return undefined;
  return Object.hasOwn(KIND_HINTS, kindHint) ? KIND_HINTS[kindHint] : undefined;
}

/**
 * Resolve a tool name as an agent reported it. Known names win over the hint (the name is more
 * specific); MCP names keep their spelling; unknown names keep theirs unless the hint names a kind
 * with a canonical tool.
 */
export function canonicalTool(name: string, kindHint?: string): ToolIdentity {
  if (isMcpToolName(name)) return { canonical: name, kind: 'mcp' };
  const known = BY_LOWER_NAME.get(name.toLowerCase());
  if (known !== undefined) return { canonical: known.canonical, kind: known.kind };
  const kind = kindFromHint(kindHint) ?? 'other';
  return { canonical: CANONICAL_FOR_KIND[kind] ?? name, kind };
}

export const COMMAND_FIELDS = ['command', 'cmd', 'chars', 'script', 'commandLine', 'command_line'] as const;
export const PATH_FIELDS = [
  'file_path',
  'path',
  'target_file',
  'filePath',
  'absolute_path',
  'notebook_path',
  'relative_workspace_path',
  'dir_path',
  'directory',
  'target_directory',
  'file',
  'filename',
  'source',
  'destination',
] as const;
export const PATHS_FIELDS = ['paths', 'file_paths', 'files'] as const;
// `patchText`: OpenCode's apply_patch (offered instead of edit and write to GPT-5-class models).
export const PATCH_FIELDS = ['input', 'patch', 'patchText', 'command', 'diff'] as const;

/** Quote one argv word so that joining argv gives a command a POSIX shell would split back the same way. */
function shellQuote(word: string): string {
  if (word !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

function commandOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (Array.isArray(value) && value.length > 0 && value.every((w) => typeof w === 'string')) {
    return (value as string[]).map(shellQuote).join(' ');
  }
  return undefined;
}

function shellCommand(input: unknown): string | undefined {
  if (typeof input === 'string' || Array.isArray(input)) return commandOf(input);
  if (!isJsonObject(input)) return undefined;
  for (const field of COMMAND_FIELDS) {
    const command = commandOf(input[field]);
    if (command !== undefined) return command;
  }
  // Codex local_shell nests the argv under `action`.
  return isJsonObject(input.action) ? shellCommand(input.action) : undefined;
}

/** A unified diff's new-file line (`+++ b/x`). */
const DIFF_HEADER = /^\+\+\+ (?:b\/)?(.+)$/s;

/**
 * File paths named by a patch: every reading of each apply_patch envelope header (Codex's and
 * OpenCode's, src/core/patch-headers.ts) and a unified diff's `+++ b/x` lines.
 */
export function patchPaths(patch: string): string[] {
  const paths: string[] = [];
  const add = (path: string) => {
    if (path !== '' && path !== '/dev/null' && !paths.includes(path)) paths.push(path);
  };
  for (const header of patchHeaders(patch)) for (const path of header.paths) add(path);
  for (const line of patchLines(patch)) add(DIFF_HEADER.exec(line)?.[1]?.trim() ?? '');
  return paths;
}

function filePaths(name: string, input: unknown): string[] {
  if (typeof input === 'string') return name.toLowerCase().includes('patch') ? patchPaths(input) : [input];
  if (!isJsonObject(input)) return [];
  const paths: string[] = [];
  // Every path field: a move names its source and its destination.
  for (const field of PATH_FIELDS) {
    const value = input[field];
    if (typeof value === 'string' && value !== '' && !paths.includes(value)) paths.push(value);
  }
  for (const field of PATHS_FIELDS) {
    const list = input[field];
    if (!Array.isArray(list)) continue;
    for (const item of list)
      if (typeof item === 'string' && item !== '' && !paths.includes(item)) paths.push(item);
  }
  // Every patch field, whatever else the input names: a path field beside a patch must not hide
  // the files the patch writes.
  for (const field of PATCH_FIELDS) {
    const patch = input[field];
    if (typeof patch !== 'string') continue;
    for (const path of patchPaths(patch)) if (!paths.includes(path)) paths.push(path);
  }
  return paths;
}

function withPaths(out: ToolArgument, paths: string[]): ToolArgument {
  const [first] = paths;
  if (first !== undefined) {
    out.path = first;
    out.paths = paths;
  }
  return out;
}

function withUrls(out: ToolArgument, urls: string[]): ToolArgument {
  const [first] = urls;
  if (first !== undefined) {
    out.url = first;
    out.urls = urls;
  }
  return out;
}

/**
 * Pull what a call acts on out of its input, knowing each agent's field names. Shell tools give the
 * command (argv arrays are shell-quoted and joined), file tools the path(s) (patches give every file
 * they touch), fetch tools the URL(s). Tools of other kinds give whatever of these their input carries.
 */
export function toolArgument(name: string, input: unknown, kindHint?: string): ToolArgument {
  const { kind } = canonicalTool(name, kindHint);
  switch (kind) {
    case 'shell': {
      const command = shellCommand(input);
      return command === undefined ? {} : { command };
    }
    case 'read':
    case 'write':
    case 'edit':
    case 'delete':
    case 'search':
    case 'list':
      return withPaths({}, filePaths(name, input));
    case 'fetch':
      return withUrls({}, urlsOf(input));
    default: {
      if (!isJsonObject(input)) return {};
      const out: ToolArgument = {};
      const command = shellCommand(input);
      if (command !== undefined) out.command = command;
      withPaths(
        out,
        filePaths(name, input).filter((p) => p !== command && !isUrlValue(p)),
      );
      return withUrls(
        out,
        urlsOf(input).filter((u) => u !== command),
      );
    }
  }
}
