/**
 * `tally install <agent>` and `tally uninstall <agent>` edit the user's settings file in place: an
 * install then an uninstall gives back the file byte for byte — its indentation (tabs or spaces),
 * its CRLF line ends, its key order and, where the agent reads comments (Gemini CLI and Qwen Code
 * strip them before parsing JSON), its comments. A file in a dialect the agent does not read (a
 * comment in Claude Code's or Codex's JSON, a trailing comma in Gemini CLI's) is refused with its
 * line and column, and nothing is written. Each installer's own merge and removal are run on the
 * text; `tally install`/`uninstall` themselves on the two files the finding named.
 */
import assert from 'node:assert/strict';
import { chmodSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseSettings, settingsText } from '../../src/capture/hook-settings.js';
import { plain, readJsonc } from '../../src/capture/jsonc.js';
import { INSTALLERS } from '../../src/cli/installers.js';
import type { JsonObject } from '../../src/core/json.js';
import { makeProject } from './tally-process.js';

const WIRING = { port: 4567, tally: '/opt/tally/bin/tally.js', transport: 'command' as const };

/** A user's settings in each agent's own shape: one key of theirs, one hook of theirs. */
const USER: Record<string, JsonObject> = {
  'claude-code': {
    model: 'opus',
    hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './guard.sh' }] }] },
  },
  'gemini-cli': {
    ui: { theme: 'Default' },
    hooks: { BeforeTool: [{ matcher: '', hooks: [{ type: 'command', command: 'true' }] }] },
  },
  'qwen-code': {
    model: { name: 'qwen' },
    hooks: { PreToolUse: [{ matcher: '', hooks: [{ type: 'command', command: 'true' }] }] },
  },
  codex: {
    hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: './guard.sh' }] }] },
  },
  cursor: { version: 1, hooks: { afterFileEdit: [{ command: './format.sh' }] } },
};

/** The same settings written by hand: `indent`, `eol`, and comments where `comments` is set. */
function handWritten(value: JsonObject, indent: string, eol: string, comments: boolean): string {
  const lines = JSON.stringify(value, null, indent).split('\n');
  if (comments) {
    lines.splice(1, 0, `${indent}// my settings`);
    lines[lines.length - 2] += ' /* kept */';
  }
  return `${lines.join(eol)}${eol}`;
}

function roundTrip(agent: string, text: string): { installed: string; back: string } {
  const installer = INSTALLERS[agent]!;
  const hooks = installer.hooks(null, WIRING);
  const path = `/project/${agent}.json`;
  const merged = installer.merge(parseSettings(text, path, installer.dialect), hooks);
  const installed = settingsText(text, merged, path, installer.dialect);
  assert.deepEqual(
    plain(readJsonc(installed, installer.dialect)),
    merged,
    'the text holds the merged settings',
  );
  const removed = installer.remove(parseSettings(installed, path, installer.dialect));
  return { installed, back: settingsText(installed, removed, path, installer.dialect) };
}

describe('install and uninstall edit the settings text in place', () => {
  for (const agent of Object.keys(USER)) {
    const comments = INSTALLERS[agent]!.dialect !== 'json';
    for (const [indent, eol] of [
      ['  ', '\n'],
      ['\t', '\r\n'],
      ['    ', '\n'],
    ] as const)
      it(`${agent}: ${JSON.stringify(indent)} indentation, ${JSON.stringify(eol)} line ends${comments ? ', comments' : ''}: back byte for byte`, () => {
        const text = handWritten(USER[agent]!, indent, eol, comments);
        const { installed, back } = roundTrip(agent, text);
        assert.notEqual(installed, text);
        if (eol === '\r\n')
          assert.doesNotMatch(installed.replaceAll('\r\n', ''), /\n/, 'every line ends in CRLF');
        if (comments) assert.match(installed, /\/\/ my settings[\s\S]*\/\* kept \*\//);
        assert.equal(back, text);
        // Installing twice is installing once.
        const again = roundTrip(agent, installed).installed;
        assert.equal(again, installed);
      });
  }

  it('a file in a dialect the agent does not read is refused with its line and column', () => {
    const commented = '{\n  // mine\n  "model": "opus"\n}\n';
    for (const agent of ['claude-code', 'codex', 'cursor'])
      assert.throws(
        () => parseSettings(commented, `/p/${agent}.json`, INSTALLERS[agent]!.dialect),
        /is not JSON as the agent reads it \(line 2, column 3: comments are not JSON/,
      );
    assert.throws(
      () => parseSettings('{\n  "ui": {},\n}\n', '/p/settings.json', INSTALLERS['gemini-cli']!.dialect),
      /line 2, column 11: a comma before '}' is not JSON/,
    );
    assert.throws(
      () => parseSettings('{"a": 1, "a": 2}', '/p/settings.json', 'json'),
      /the key "a" is given twice/,
    );
  });
});

describe('tally install / uninstall on the user’s file', () => {
  const files = [
    ['gemini-cli', '.gemini/settings.json', 'json-comments'],
    ['cursor', '.cursor/hooks.json', 'json'],
  ] as const;
  for (const [agent, file] of files)
    it(`${agent}: ${file} comes back byte for byte`, async () => {
      const project = makeProject(`tally-install-in-place-${agent}-`);
      assert.equal((await project.tally(['init'])).code, 0);
      const text = handWritten(USER[agent]!, '\t', '\r\n', agent === 'gemini-cli');
      const path = join(project.root, file);
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, text);
      const installed = await project.tally(['install', agent]);
      assert.equal(installed.code, 0, installed.stderr);
      assert.notEqual(readFileSync(path, 'utf8'), text);
      const removed = await project.tally(['uninstall', agent]);
      assert.equal(removed.code, 0, removed.stderr);
      assert.equal(readFileSync(path, 'utf8'), text);
    });

  it('a hooks key or a hooked event of another type is refused, and the file is left as it was', async () => {
    const project = makeProject('tally-install-hooks-type-');
    assert.equal((await project.tally(['init'])).code, 0);
    const cases = [
      ['claude-code', '.claude/settings.json', '{\n  "hooks": "mine"\n}\n', /\/hooks: must be an object/],
      ['claude-code', '.claude/settings.json', '{\n  "hooks": []\n}\n', /\/hooks: must be an object/],
      [
        'claude-code',
        '.claude/settings.json',
        '{\n  "hooks": {"PreToolUse": {"matcher": "Bash"}}\n}\n',
        /\/hooks\/PreToolUse: must be an array/,
      ],
      [
        'gemini-cli',
        '.gemini/settings.json',
        '{\n  "hooks": {"BeforeTool": {"matcher": ""}}\n}\n',
        /\/hooks\/BeforeTool: must be an array/,
      ],
      ['cursor', '.cursor/hooks.json', '{\n  "hooks": "mine"\n}\n', /\/hooks: must be an object/],
    ] as const;
    for (const [agent, file, text, refusal] of cases) {
      const path = join(project.root, file);
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, text);
      const installed = await project.tally(['install', agent]);
      assert.notEqual(installed.code, 0, `${agent} ${text}`);
      assert.match(installed.stderr, refusal);
      assert.equal(readFileSync(path, 'utf8'), text);
    }
  });

  it('a settings file that is a symlink stays one, its target edited; the file keeps its mode', async () => {
    const project = makeProject('tally-install-symlink-');
    assert.equal((await project.tally(['init'])).code, 0);
    const text = '{\n  "model": "opus"\n}\n';
    const target = join(project.dir, 'dotfiles-settings.json');
    writeFileSync(target, text);
    chmodSync(target, 0o644);
    const path = join(project.root, '.claude', 'settings.json');
    mkdirSync(join(path, '..'), { recursive: true });
    symlinkSync(target, path);
    const installed = await project.tally(['install', 'claude-code']);
    assert.equal(installed.code, 0, installed.stderr);
    assert.ok(lstatSync(path).isSymbolicLink());
    assert.match(readFileSync(target, 'utf8'), /tally-hook|tally\.js/);
    assert.equal(statSync(target).mode & 0o777, 0o644);
    const removed = await project.tally(['uninstall', 'claude-code']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.ok(lstatSync(path).isSymbolicLink());
    assert.equal(readFileSync(target, 'utf8'), text);
    assert.equal(statSync(target).mode & 0o777, 0o644);
  });

  it('an MCP configuration that is a symlink stays one through install --mcp and uninstall --mcp', async () => {
    const project = makeProject('tally-install-mcp-symlink-');
    assert.equal((await project.tally(['init'])).code, 0);
    const text = `${JSON.stringify({ mcpServers: { files: { command: 'node', args: ['server.js'] } } }, null, 2)}\n`;
    const target = join(project.dir, 'dotfiles-mcp.json');
    writeFileSync(target, text);
    chmodSync(target, 0o640);
    const path = join(project.root, '.mcp.json');
    symlinkSync(target, path);
    const installed = await project.tally(['install', 'claude-code', '--mcp']);
    assert.equal(installed.code, 0, installed.stderr);
    assert.ok(lstatSync(path).isSymbolicLink());
    assert.match(readFileSync(target, 'utf8'), /"mcp"/);
    assert.equal(statSync(target).mode & 0o777, 0o640);
    const removed = await project.tally(['uninstall', 'claude-code', '--mcp']);
    assert.equal(removed.code, 0, removed.stderr);
    assert.ok(lstatSync(path).isSymbolicLink());
    assert.equal(readFileSync(target, 'utf8'), text);
    assert.equal(statSync(target).mode & 0o777, 0o640);
  });

  it('a read-only settings file or MCP configuration is refused, named, and left as it was', async () => {
    const project = makeProject('tally-install-read-only-');
    assert.equal((await project.tally(['init'])).code, 0);
    const settings = join(project.root, '.claude', 'settings.json');
    mkdirSync(join(settings, '..'), { recursive: true });
    const text = '{\n  "model": "opus"\n}\n';
    writeFileSync(settings, text);
    chmodSync(settings, 0o444);
    const hooks = await project.tally(['install', 'claude-code']);
    assert.equal(hooks.code, 2, hooks.stderr);
    assert.match(hooks.stderr, /settings\.json is read-only \(mode 0444\); nothing was written/);
    assert.equal(readFileSync(settings, 'utf8'), text);
    assert.equal(statSync(settings).mode & 0o777, 0o444);
    // What it would write is still shown.
    const dry = await project.tally(['install', 'claude-code', '--dry-run', '--json']);
    assert.equal(dry.code, 0, dry.stderr);

    const mcp = join(project.root, '.mcp.json');
    const servers = `${JSON.stringify({ mcpServers: { files: { command: 'node', args: ['server.js'] } } })}\n`;
    writeFileSync(mcp, servers);
    chmodSync(mcp, 0o444);
    const gated = await project.tally(['install', 'claude-code', '--mcp']);
    assert.equal(gated.code, 2, gated.stderr);
    assert.match(gated.stderr, /\.mcp\.json is read-only \(mode 0444\)/);
    assert.equal(readFileSync(mcp, 'utf8'), servers);
    // Nothing kept for an uninstall either: the file was never changed.
    const undo = await project.tally(['uninstall', 'claude-code', '--mcp', '--json']);
    assert.equal(undo.code, 0, undo.stderr);
    assert.equal(readFileSync(mcp, 'utf8'), servers);
  });
});
