/**
 * Every command the README shows runs as written. The tour is run in a fresh git repository with
 * `tally` on the PATH (a shim to bin/tally.js) and its own TALLY_HOME, one command at a time:
 *
 * - a command starts at a line in column 0; lines that start with white space, and the body of a
 *   here-document up to its terminator, belong to the command above;
 * - `<id>` is replaced by the session id `tally session start` printed;
 * - a command whose comment says `exit N` must exit N; one that says `runs until stopped` is
 *   started, waited for until it says it is listening, then stopped with SIGTERM and must exit 0;
 *   every other command must exit 0.
 *
 * The two set-up commands at the top (install + demo, install + test) are not run here: the demo
 * has its own test (test/cli/demo.test.ts), and the test command is this suite.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { git } from './session/fixture.js';
import { tempDir } from './temp.js';

const ROOT = process.cwd();

function fenced(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

/** The commands of a shell block, by the rule above. */
export function shellCommands(block: string): string[] {
  const out: string[] = [];
  let heredoc: string | undefined;
  for (const line of block.split('\n')) {
    if (heredoc !== undefined) {
      out[out.length - 1] += `\n${line}`;
      if (line === heredoc) heredoc = undefined;
      continue;
    }
    if (line.trim() === '') continue;
    if (/^\s/.test(line) && out.length > 0) out[out.length - 1] += `\n${line}`;
    else out.push(line);
    const opened = /<<'?(\w+)'?/.exec(line);
    if (opened) heredoc = opened[1];
  }
  return out;
}

function expectation(command: string): { exit: number; server: boolean } {
  const comment = command
    .split('\n')
    .map((l) => /#\s(.*)$/.exec(l)?.[1] ?? '')
    .join(' ');
  const exit = /\bexit (\d)\b/.exec(comment);
  return { exit: exit ? Number(exit[1]) : 0, server: /runs until stopped/.test(comment) };
}

describe('README', () => {
  const readme = readFileSync('README.md', 'utf8');
  const blocks = fenced(readme, 'sh');

  it('opens with exactly the two set-up commands: install + demo, install + test', () => {
    assert.deepEqual(shellCommands(blocks[0]!), [
      'npm install && node bin/tally.js demo',
      'npm install && npm test',
    ]);
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> })
      .scripts;
    assert.match(scripts.test!, /node scripts\/test\.mjs/);
    assert.match(scripts.prepare!, /build/, 'npm install builds the CLI the demo runs');
  });

  it('the shell-block rule splits commands as the README means them', () => {
    assert.deepEqual(shellCommands("a one\n  two \\\n  three\ncat > f <<'EOF'\n x\nEOF\nb\n"), [
      'a one\n  two \\\n  three',
      "cat > f <<'EOF'\n x\nEOF",
      'b',
    ]);
  });

  it('every command of the tour runs as written, with the exit code it states', async () => {
    const tour = shellCommands(blocks[1]!);
    assert.ok(tour.length >= 15, `${tour.length} commands`);
    const dir = tempDir('tally-readme-');
    const repo = join(dir, 'repo');
    const bin = join(dir, 'bin');
    mkdirSync(join(repo, 'src'), { recursive: true });
    mkdirSync(bin);
    writeFileSync(join(repo, 'README.md'), '# project\n');
    writeFileSync(join(repo, 'src/app.js'), 'export const v = 1;\n');
    git(repo, 'init', '-q');
    git(repo, 'add', '.');
    git(repo, 'commit', '-qm', 'initial');
    writeFileSync(
      join(bin, 'tally'),
      `#!/bin/sh\nexec "${process.execPath}" "${join(ROOT, 'bin/tally.js')}" "$@"\n`,
    );
    chmodSync(join(bin, 'tally'), 0o755);
    const env = {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: dir,
      TALLY_HOME: join(dir, 'home'),
      NO_COLOR: '1',
    };
    let sessionId = '';
    for (const raw of tour) {
      const command = raw.replaceAll('<id>', sessionId);
      const { exit, server } = expectation(raw);
      if (server) {
        const child = spawn('bash', ['-c', command], { cwd: repo, env, stdio: ['ignore', 'pipe', 'pipe'] });
        let err = '';
        await new Promise<void>((ready, fail) => {
          child.stderr.on('data', (d) => {
            err += d;
            if (/listening/.test(err)) ready();
          });
          child.once('exit', (code) =>
            fail(new Error(`${command}\nexited ${code} before listening:\n${err}`)),
          );
        });
        const ended = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
        // bash -c runs the last command with exec: the signal reaches tally itself.
        child.kill('SIGTERM');
        assert.equal(await ended, 0, `${command}\n${err}`);
        continue;
      }
      const ran = spawnSync('bash', ['-o', 'pipefail', '-c', command], { cwd: repo, env, encoding: 'utf8' });
      assert.equal(
        ran.status,
        exit,
        `${command}\nexited ${ran.status}, the README says ${exit}:\n${ran.stderr}${ran.stdout}`,
      );
      if (/tally session start/.test(command)) sessionId = ran.stdout.trim();
    }
    assert.match(sessionId, /^ses_/);
  });
});
