/**
 * The tool alias table. Oracles: the tool names each agent uses as listed in
 * ../shared/reference/ecosystem.md §1, Treeship's hook fixtures and the event type its hooks record
 * for each tool (read in place), Treeship's alias buckets (treeship.md §3), and the AHP fixtures'
 * `tool.kind` values.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  canonicalTool,
  TOOL_ALIASES,
  type ToolKind,
  toolArgument,
} from '../../src/evidence/policy/aliases.js';

/** Tool names named per agent in ecosystem.md §1 (hook payload shapes, matchers, Gemini's own names). */
const ECOSYSTEM_TOOLS: Record<string, [string, ToolKind][]> = {
  'Claude Code (§1.1)': [
    ['Bash', 'shell'],
    ['Write', 'write'],
    ['Edit', 'edit'],
    ['Read', 'read'],
    ['mcp__github__create_issue', 'mcp'],
  ],
  'Codex (§1.2)': [['Bash', 'shell']],
  'Cursor (§1.3)': [['Shell', 'shell']],
  'Gemini CLI (§1.4)': [
    ['run_shell_command', 'shell'],
    ['write_file', 'write'],
    ['replace', 'edit'],
    ['read_file', 'read'],
    ['mcp__fs__read', 'mcp'],
  ],
};

describe('every tool ecosystem.md names resolves to a real kind', () => {
  for (const [agent, tools] of Object.entries(ECOSYSTEM_TOOLS)) {
    test(agent, () => {
      for (const [name, kind] of tools) {
        const resolved = canonicalTool(name);
        assert.notEqual(resolved.kind, 'other', name);
        assert.equal(resolved.kind, kind, name);
      }
    });
  }
});

describe('Treeship hook fixtures: the tool kind agrees with the event the hook records', () => {
  const base = '../shared/reference/treeship-vectors/integration-hook-fixtures';
  const KIND_FOR_EVENT: Record<string, ToolKind[]> = {
    'agent.read_file': ['read'],
    'agent.wrote_file': ['write', 'edit'],
    'agent.completed_process': ['shell'],
    'agent.connected_network': ['fetch'],
  };
  for (const plugin of readdirSync(join(base, 'fixtures'))) {
    for (const file of readdirSync(join(base, 'fixtures', plugin))) {
      test(`${plugin}/${file}`, () => {
        const fixture = JSON.parse(readFileSync(join(base, 'fixtures', plugin, file), 'utf8'));
        const name = (fixture.tool_name ?? fixture.toolName) as string;
        const input = fixture.tool_input ?? fixture.params;
        const expected = readFileSync(
          join(base, 'expectations', plugin, file.replace(/\.json$/, '.txt')),
          'utf8',
        );
        const event = /--type (\S+)/.exec(expected.split('\n')[1] ?? '')?.[1] as string;
        const { kind } = canonicalTool(name);
        if (event === 'agent.called_tool') {
          // the pre-tool-use hook records the raw name only; the kind must still be known
          assert.notEqual(kind, 'other');
          return;
        }
        assert.ok(KIND_FOR_EVENT[event]?.includes(kind), `${name} → ${kind} but the hook recorded ${event}`);
        const argument = toolArgument(name, input);
        const file_ = /--file (\S+)/.exec(expected)?.[1];
        if (file_ !== undefined) assert.equal(argument.path, file_);
        const destination = /--destination (\S+)/.exec(expected)?.[1];
        if (destination !== undefined) assert.equal(new URL(argument.url as string).hostname, destination);
        if (event === 'agent.completed_process') assert.equal(argument.command, input.command);
      });
    }
  }
});

test('Treeship alias buckets (treeship.md §3) stay together', () => {
  const buckets: [string[], ToolKind[]][] = [
    [['read_file', 'Read'], ['read']],
    [
      ['write_file', 'Write', 'Edit', 'MultiEdit', 'NotebookEdit', 'edit_file'],
      ['write', 'edit'],
    ],
    [['bash', 'Bash', 'shell'], ['shell']],
    [['web_fetch', 'WebFetch', 'webfetch'], ['fetch']],
  ];
  for (const [names, kinds] of buckets) {
    for (const name of names) assert.ok(kinds.includes(canonicalTool(name).kind), name);
  }
  assert.equal(canonicalTool('bash').canonical, canonicalTool('shell').canonical);
  assert.equal(canonicalTool('WebFetch').canonical, canonicalTool('webfetch').canonical);
});

test('AHP fixtures: a known name agrees with its tool.kind; an unknown name takes the hint', () => {
  assert.equal(canonicalTool('Bash', 'shell').kind, 'shell');
  assert.equal(canonicalTool('read_file', 'file_read').kind, 'read');
  assert.equal(canonicalTool('unknown', 'other').kind, 'other');
  assert.deepEqual(canonicalTool('terminal_v2', 'shell'), { canonical: 'Bash', kind: 'shell' });
  assert.deepEqual(canonicalTool('fs_put', 'file_write'), { canonical: 'Write', kind: 'write' });
  assert.deepEqual(canonicalTool('lookup', 'mcp'), { canonical: 'lookup', kind: 'mcp' });
  assert.deepEqual(canonicalTool('frobnicate'), { canonical: 'frobnicate', kind: 'other' });
  // a known name wins over a hint that disagrees
  assert.equal(canonicalTool('Read', 'shell').kind, 'read');
});

test('the table: each canonical name resolves to itself, MCP names are kept verbatim', () => {
  for (const row of TOOL_ALIASES) {
    assert.deepEqual(canonicalTool(row.canonical), { canonical: row.canonical, kind: row.kind });
    for (const name of row.names)
      assert.equal(canonicalTool(name.toUpperCase()).canonical, row.canonical, name);
  }
  assert.deepEqual(canonicalTool('mcp__github__create_issue'), {
    canonical: 'mcp__github__create_issue',
    kind: 'mcp',
  });
  assert.equal(canonicalTool('exec_command').canonical, 'Bash');
  assert.equal(canonicalTool('run_terminal_cmd').canonical, 'Bash');
  assert.equal(canonicalTool('apply_patch').canonical, 'Edit');
  assert.equal(canonicalTool('search_file_content').canonical, 'Grep');
});

describe('toolArgument knows each agent’s input fields', () => {
  test('shell commands: string, cmd, argv arrays (quoted back), nested action', () => {
    assert.deepEqual(toolArgument('Bash', { command: 'git status' }), { command: 'git status' });
    assert.deepEqual(toolArgument('exec_command', { cmd: 'ls -la' }), { command: 'ls -la' });
    assert.deepEqual(toolArgument('shell', { command: ['bash', '-lc', "echo 'a b'"] }), {
      command: `bash -lc 'echo '\\''a b'\\'''`,
    });
    assert.deepEqual(toolArgument('local_shell', { action: { command: ['ls', '/tmp'] } }), {
      command: 'ls /tmp',
    });
    assert.deepEqual(toolArgument('write_stdin', { chars: 'rm -rf /\n' }), { command: 'rm -rf /\n' });
    assert.deepEqual(toolArgument('Bash', {}), {});
  });
  test('file paths: every agent’s field name', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['Write', { file_path: '/p/a.ts', content: 'x' }, '/p/a.ts'],
      ['edit_file', { target_file: 'src/a.ts', code_edit: '…' }, 'src/a.ts'],
      ['read_file', { absolute_path: '/p/README.md' }, '/p/README.md'],
      ['ReadFile', { path: 'notes.md' }, 'notes.md'],
      ['NotebookEdit', { notebook_path: 'n.ipynb' }, 'n.ipynb'],
      ['list_dir', { relative_workspace_path: 'src' }, 'src'],
      ['list_directory', { dir_path: 'lib' }, 'lib'],
      ['StrReplace', { filePath: 'x.ts' }, 'x.ts'],
    ];
    for (const [name, input, path] of cases) assert.equal(toolArgument(name, input).path, path, name);
  });
  test('many paths: Gemini read_many_files and Codex apply_patch envelopes', () => {
    assert.deepEqual(toolArgument('read_many_files', { paths: ['a.md', 'b.md'] }).paths, ['a.md', 'b.md']);
    const patch =
      '*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** Add File: docs/b.md\n+hi\n*** Delete File: old.txt\n*** End Patch\n';
    assert.deepEqual(toolArgument('apply_patch', { command: patch }).paths, [
      'src/a.ts',
      'docs/b.md',
      'old.txt',
    ]);
    assert.deepEqual(toolArgument('apply_patch', patch).paths, ['src/a.ts', 'docs/b.md', 'old.txt']);
    // Indented headers (Codex trims lines), OpenCode's patchText, and a path field beside a patch.
    const indented =
      '*** Begin Patch\n*** Add File: ok.txt\n+k\n \t*** Add File: protected/x.txt\n+x\n*** End Patch';
    assert.deepEqual(toolArgument('apply_patch', { input: indented }).paths, ['ok.txt', 'protected/x.txt']);
    assert.deepEqual(toolArgument('apply_patch', { patchText: indented }).paths, [
      'ok.txt',
      'protected/x.txt',
    ]);
    assert.deepEqual(toolArgument('apply_patch', { path: 'ok.txt', patch: indented }).paths, [
      'ok.txt',
      'protected/x.txt',
    ]);
    const diff = '--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n';
    assert.deepEqual(toolArgument('patch', { diff }).paths, ['x.c']);
  });
  test('URLs: url field, urls list, or inside a Gemini web_fetch prompt', () => {
    assert.equal(toolArgument('fetch', { url: 'https://a.example/x' }).url, 'https://a.example/x');
    assert.deepEqual(
      toolArgument('web_fetch', { prompt: 'compare https://a.example/1 and https://b.example/2' }).urls,
      ['https://a.example/1', 'https://b.example/2'],
    );
  });
  test('MCP tools give whatever they carry', () => {
    assert.deepEqual(toolArgument('mcp__fs__write', { path: '/etc/hosts', content: 'x' }), {
      path: '/etc/hosts',
      paths: ['/etc/hosts'],
    });
    assert.deepEqual(toolArgument('mcp__x__run', { command: 'make' }), { command: 'make' });
    assert.deepEqual(toolArgument('mcp__x__noargs', 'text'), {});
  });
});
