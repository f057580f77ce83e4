/**
 * The kind of a tool the alias table does not know (MCP tools above all), inferred from its name
 * and the fields of its input, so that `Read(.env)` forbids `mcp__fs__read_file {path: ".env"}` and
 * `Bash(rm -rf *)` forbids an MCP shell tool. The MCP gateway calls the same function with a tool's
 * input schema. Table: docs/policy.md, "Tools by kind".
 */

import {
  COMMAND_FIELDS as CALL_COMMAND_FIELDS,
  PATH_FIELDS as CALL_PATH_FIELDS,
  PATCH_FIELDS,
  PATHS_FIELDS,
  type ToolKind,
} from './aliases.js';
import { URL_FIELDS as CALL_URL_FIELDS, URLS_FIELDS } from './urls.js';

/** Verbs in a tool's name (split at `_`, `-`, `.` and camelCase) and the kind each suggests. */
const VERBS: readonly [ToolKind, readonly string[]][] = [
  [
    'shell',
    [
      'shell',
      'bash',
      'terminal',
      'exec',
      'execute',
      'run',
      'command',
      'cmd',
      'spawn',
      'sh',
      'powershell',
      'console',
      'process',
      'start',
    ],
  ],
  ['delete', ['delete', 'remove', 'rm', 'unlink', 'trash', 'erase']],
  ['edit', ['edit', 'replace', 'patch', 'modify', 'update', 'append', 'insert', 'move', 'rename']],
  ['write', ['write', 'create', 'save', 'put', 'upload', 'overwrite', 'mkdir', 'touch', 'copy']],
  [
    'read',
    ['read', 'cat', 'view', 'open', 'load', 'show', 'get', 'head', 'tail', 'download', 'file', 'contents'],
  ],
  ['list', ['list', 'ls', 'dir', 'tree', 'glob', 'find', 'directory']],
  ['search', ['search', 'grep', 'query', 'find']],
  ['fetch', ['fetch', 'http', 'request', 'browse', 'navigate', 'url', 'curl', 'web', 'scrape', 'crawl']],
];

const COMMAND_FIELDS = ['command', 'cmd', 'script', 'commandLine', 'command_line', 'shell_command'];
const PATH_FIELDS = [
  'path',
  'file_path',
  'filePath',
  'file',
  'filename',
  'paths',
  'source',
  'destination',
  'target',
  'uri',
];
const URL_FIELDS = ['url', 'urls', 'uri', 'href', 'link', 'endpoint'];

/**
 * Every argument name the policy reads a call's input by: its paths, commands, patches and URLs,
 * and the names a tool's kind is inferred from. Another spelling of one of these is the same key
 * to a server that matches keys without regard to case, and none of them to the policy.
 */
export const READ_ARGUMENTS: ReadonlySet<string> = new Set([
  ...COMMAND_FIELDS,
  ...PATH_FIELDS,
  ...URL_FIELDS,
  ...CALL_COMMAND_FIELDS,
  ...CALL_PATH_FIELDS,
  ...PATHS_FIELDS,
  ...PATCH_FIELDS,
  ...CALL_URL_FIELDS,
  ...URLS_FIELDS,
]);

function nameWords(name: string): string[] {
  const tool = name.startsWith('mcp__') ? name.slice(name.indexOf('__', 5) + 2 || 5) : name;
  return tool
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

/** The keys of an object, else none. */
function keysOf(value: unknown): Set<string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return new Set();
  return new Set(Object.keys(value));
}

/**
 * The kind a tool's name and a call's input suggest: `shell` for a shell-like name with a command
 * field, `fetch` for a URL field, the file kinds for a path field with a matching verb, else
 * `other`. The input's own keys only: an input is never read as a schema, so arguments shaped like
 * one (`type: "object", properties: {}`) cannot hide the path beside them.
 */
export function inferToolKind(name: string, input?: unknown): ToolKind {
  return kindOf(name, keysOf(input));
}

/** The kind a tool's name and its declared input schema (`properties`) suggest. */
export function inferToolKindFromSchema(name: string, schema: unknown): ToolKind {
  const properties =
    typeof schema === 'object' && schema !== null
      ? (schema as { properties?: unknown }).properties
      : undefined;
  return kindOf(name, keysOf(properties));
}

function kindOf(name: string, fields: Set<string>): ToolKind {
  const words = nameWords(name);
  const has = (list: readonly string[]): boolean => list.some((f) => fields.has(f));
  const verb = (kind: ToolKind): boolean =>
    words.some((w) => VERBS.find(([k]) => k === kind)?.[1].includes(w) ?? false);
  if (has(COMMAND_FIELDS) && verb('shell')) return 'shell';
  const pathLike = has(PATH_FIELDS);
  if (pathLike) {
    for (const kind of ['delete', 'edit', 'write', 'read', 'list', 'search'] as const)
      if (verb(kind)) return kind;
  }
  if (has(URL_FIELDS)) return 'fetch';
  // A tool that takes a path and names no verb is taken to read it: only forbids widen by this.
  return pathLike ? 'read' : 'other';
}
