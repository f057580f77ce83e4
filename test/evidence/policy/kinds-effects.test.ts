/**
 * The functions the receipt and the MCP gateway use: a tool's kind from its name and input schema
 * (oracle: the tool list of the MCP reference filesystem server, @modelcontextprotocol/server-filesystem,
 * with each tool's documented effect), a shell command's reads and writes with the directory they
 * are relative to (oracle: bash(1) REDIRECTION and the tools' manuals), and URL hosts (oracle: the
 * WHATWG URL standard's host parser as Node implements it, and RFC 3986's authority).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { inferToolKind, inferToolKindFromSchema } from '../../../src/evidence/policy/kinds.js';
import { shellFileEffects } from '../../../src/evidence/policy/shell-effects.js';
import { urlHosts } from '../../../src/evidence/policy/urls.js';

const schema = (...fields: string[]) => ({
  type: 'object',
  properties: Object.fromEntries(fields.map((f) => [f, { type: 'string' }])),
});

describe('inferToolKind: the MCP filesystem server and shell servers', () => {
  const ROWS: [string, unknown, string][] = [
    ['mcp__filesystem__read_file', schema('path'), 'read'],
    ['mcp__filesystem__read_text_file', schema('path', 'head', 'tail'), 'read'],
    ['mcp__filesystem__read_media_file', schema('path'), 'read'],
    [
      'mcp__filesystem__read_multiple_files',
      { type: 'object', properties: { paths: { type: 'array' } } },
      'read',
    ],
    ['mcp__filesystem__get_file_info', schema('path'), 'read'],
    ['mcp__filesystem__write_file', schema('path', 'content'), 'write'],
    ['mcp__filesystem__edit_file', schema('path', 'edits', 'dryRun'), 'edit'],
    ['mcp__filesystem__create_directory', schema('path'), 'write'],
    ['mcp__filesystem__move_file', schema('source', 'destination'), 'edit'],
    ['mcp__filesystem__list_directory', schema('path'), 'list'],
    ['mcp__filesystem__directory_tree', schema('path'), 'list'],
    ['mcp__filesystem__search_files', schema('path', 'pattern'), 'search'],
    ['mcp__shell__run_command', schema('command'), 'shell'],
    ['mcp__desktop-commander__start_process', schema('command', 'timeout_ms'), 'shell'],
    ['mcp__terminal__execute', { cmd: 'ls' }, 'shell'],
    ['mcp__fetch__fetch', schema('url', 'max_length'), 'fetch'],
    ['mcp__github__create_issue', schema('owner', 'repo', 'title', 'body'), 'other'],
    ['mcp__git__git_commit', schema('repo_path', 'message'), 'other'],
    ['mcp__notes__run_report', schema('command'), 'shell'],
    ['mcp__notes__summarise', schema('command'), 'other'],
  ];
  for (const [name, input, kind] of ROWS) {
    const isSchema = (input as { type?: unknown }).type === 'object';
    test(`${name} → ${kind}`, () =>
      assert.equal(isSchema ? inferToolKindFromSchema(name, input) : inferToolKind(name, input), kind));
  }
  test('an input shaped like a schema is still an input: its own keys name the kind', () => {
    const input = { path: 'protected/x', content: 'c', type: 'object', properties: {} };
    assert.equal(inferToolKind('mcp__fs__write_file', input), 'write');
    assert.equal(inferToolKindFromSchema('mcp__fs__write_file', input), 'other');
  });
  test('an input value works as well as its schema', () => {
    assert.equal(inferToolKind('mcp__fs__read_file', { path: '.env' }), 'read');
    assert.equal(inferToolKind('mcp__fs__read_file'), 'other');
  });
});

describe('shellFileEffects: paths as written, with the directory they are relative to', () => {
  test('redirections, readers, writers, and a cd that holds for the rest of the line', () => {
    const effects = shellFileEffects(
      'cd sub && sort -o ../out.txt in.txt < extra 2>/dev/null; tee log >> all',
      '/p',
    );
    assert.deepEqual(
      effects.reads.map((e) => [e.path, e.cwd, e.via]),
      [
        ['extra', '/p/sub', 'redirection'],
        ['in.txt', '/p/sub', 'sort'],
      ],
    );
    assert.deepEqual(
      effects.writes.map((e) => [e.path, e.cwd, e.via]),
      [
        ['../out.txt', '/p/sub', 'sort'],
        ['all', '/p/sub', 'redirection'],
        ['log', '/p/sub', 'tee'],
      ],
    );
    assert.equal(effects.opaque, false);
    assert.equal(effects.complete, true);
  });
  test('without a cwd the directory stays relative; an unknowable cd leaves it undefined', () => {
    const effects = shellFileEffects('cd build; cp a b; cd "$X"; touch c');
    assert.deepEqual(
      effects.writes.map((e) => [e.path, e.cwd]),
      [
        ['b', 'build'],
        ['c', undefined],
      ],
    );
    assert.deepEqual(
      effects.reads.map((e) => [e.path, e.cwd]),
      [['a', 'build']],
    );
  });
  test('a cd in a subshell or a pipeline does not move what follows', () => {
    const effects = shellFileEffects('(cd a; touch x); cd b | true; touch y', '/p');
    assert.deepEqual(
      effects.writes.map((e) => [e.path, e.cwd]),
      [
        ['x', '/p/a'],
        ['y', '/p'],
      ],
    );
  });
  test('dynamic and glob paths are marked; opaque commands are flagged', () => {
    const effects = shellFileEffects('cat "$f" *.log | sh');
    assert.deepEqual(
      effects.reads.map((e) => [e.path, e.dynamic, e.glob]),
      [
        ['$f', true, false],
        ['*.log', false, true],
      ],
    );
    assert.equal(effects.opaque, true);
  });
});

describe('urlHosts: every host either reading gives', () => {
  const ROWS: [string, string[]][] = [
    ['https://Example.COM./a', ['example.com']],
    ['example.com/a', ['example.com']],
    ['//example.com', ['example.com']],
    ['https://user:pw@example.com:8080/', ['example.com']],
    ['https://good.test@evil.test/', ['evil.test']],
    ['https://evil.test\\@good.test/', ['evil.test', 'good.test']],
    ['https://bücher.example/', ['xn--bcher-kva.example']],
    ['http://0x7f.0.0.1/', ['127.0.0.1']],
  ];
  for (const [url, hosts] of ROWS) test(url, () => assert.deepEqual(urlHosts(url), hosts));
});
