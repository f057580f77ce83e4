/**
 * `tally wrap` against a command that works against it (docs/wrap.md, docs/security.md): children
 * left running, secrets in words that need quoting, wraps at the same time, a signal after the
 * command, an empty command name, a subfolder outside git. Oracles: the files on disk, git's own
 * view, the shell's reading of the recorded words, and the exit code the command gave.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { commandLine } from '../../src/capture/wrap/wrap.js';
import { git } from '../session/fixture.js';
import { tempDir } from '../temp.js';
import { decodedPayloads, jsonOut, makeProject, type Project, runTally, TALLY_BIN } from './tally-process.js';

/** Every `file.changed` row in a package: `[path, operation, source]`. */
function allChanges(pkg: string): [string, string, string][] {
  const rows: [string, string, string][] = [];
  for (const line of readFileSync(pkg, 'utf8').trim().split('\n')) {
    const payload = (JSON.parse(line) as { payload?: string }).payload;
    if (payload === undefined) continue;
    const { event } = JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) as {
      event?: { type?: string; source?: string; changes?: { path: string; operation: string }[] };
    };
    if (event?.type !== 'file.changed') continue;
    for (const c of event.changes ?? []) rows.push([c.path, c.operation, String(event.source)]);
  }
  return rows;
}

async function ok(p: Project, args: string[]) {
  const ran = await p.tally(args);
  assert.equal(ran.code, 0, `tally ${args.join(' ')} exited ${ran.code}:\n${ran.stderr}`);
  return ran;
}

/** Runs tally in the background; resolves with its exit code and output. */
function background(p: Project, args: string[]) {
  const child = spawn(process.execPath, [TALLY_BIN, ...args], {
    cwd: p.root,
    env: p.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, stdout, stderr })),
  );
}

async function until(path: string) {
  for (let i = 0; i < 600 && !existsSync(path); i++) await sleep(50);
  assert.ok(existsSync(path), `${path} never appeared`);
}

describe('tally wrap: review', () => {
  it('D1 a file written by a child the command left running is recorded somewhere', async () => {
    const p = makeProject('rv-bg-');
    await ok(p, ['init']);
    writeFileSync(join(p.root, '.gitignore'), '.tally/\n');
    const script = '(sleep 1; echo late > late.txt) >/dev/null 2>&1 & echo early > early.txt';
    const out = jsonOut(await ok(p, ['wrap', '--json', '--', 'sh', '-c', script]));
    await sleep(2000);
    assert.ok(existsSync(join(p.root, 'late.txt')), 'the child did write late.txt');
    const status = await p.tally(['session', 'status']);
    assert.match(status.stdout + status.stderr, /no open session/, 'wrap sealed its session');
    const paths = allChanges(String(out.package)).map(([path]) => path);
    assert.ok(paths.includes('early.txt'));
    assert.ok(paths.includes('late.txt'), `late.txt recorded nowhere: ${JSON.stringify(paths)}`);
  });

  it('D2a a secret in an argv word that needs quoting is redacted', async () => {
    const p = makeProject('rv-secret-');
    await ok(p, ['init']);
    await ok(p, ['session', 'start']);
    await ok(p, ['wrap', '--', 'true', '--password=correct horse battery staple']);
    await ok(p, ['wrap', '--', 'env', 'AWS_SECRET_ACCESS_KEY=abc def ghijkl', 'true']);
    await ok(p, ['wrap', '--', 'sh', '-c', "export GITHUB_TOKEN='tok en value'"]);
    const closed = jsonOut(await ok(p, ['session', 'close', '--json']));
    const payloads = decodedPayloads(readFileSync(String(closed.package)));
    assert.ok(payloads.includes('AWS_SECRET_ACCESS_KEY'), 'the commands were recorded');
    const leaked = ['horse battery', 'def ghijkl', 'en value'].filter((s) => payloads.includes(s));
    assert.deepEqual(leaked, [], 'secret parts recorded unredacted');
  });

  it('the recorded command line reads back in the shell as the same words', () => {
    const words = [
      'printf',
      '%s\\0',
      '--password=a b',
      "NAME=it's",
      'sh -c "x=\'y z\'"',
      "export T='a b'",
      '$HOME `x`',
      '',
      'plain',
      '-k="q" \'r\'',
    ];
    const line = commandLine(words);
    const out = execFileSync('sh', ['-c', line]).toString('utf8');
    assert.deepEqual(out.split('\0').slice(0, -1), words.slice(2), line);
  });

  it('D2b a secret in a command that cannot start is not printed', async () => {
    const p = makeProject('rv-secret-print-');
    await ok(p, ['init']);
    await ok(p, ['session', 'start']);
    const ran = await p.tally(['wrap', '--', 'DB_PASSWORD=hunter2secret', 'make']);
    assert.equal(ran.code, 127);
    assert.ok(!ran.stderr.includes('hunter2secret'), ran.stderr);
  });

  it('D3a a wrap started while another wrap runs outside a session: both are recorded, the last seals', async () => {
    const p = makeProject('rv-concurrent-');
    await ok(p, ['init']);
    writeFileSync(join(p.root, '.gitignore'), '.tally/\n');
    const a = background(p, [
      'wrap',
      '--json',
      '--',
      'sh',
      '-c',
      'touch a-running; while [ ! -f go ]; do sleep 0.02; done; echo a > a.txt',
    ]);
    await until(join(p.root, 'a-running'));
    // B lets A end, and writes once A's wrap has finished.
    const b = background(p, [
      'wrap',
      '--json',
      '--',
      'sh',
      '-c',
      'touch go; while [ ! -f a-done ]; do sleep 0.05; done; echo b > b.txt; exit 3',
    ]);
    const first = await a;
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stderr, /left for the tally wrap still recording into it/);
    writeFileSync(join(p.root, 'a-done'), '');
    const second = await b;
    assert.equal(second.code, 3, second.stderr);
    const out = JSON.parse(second.stdout) as { compared: boolean; package?: string; session: string };
    assert.equal(out.compared, true, second.stderr);
    assert.equal(out.session, (JSON.parse(first.stdout) as { session: string }).session);
    const rows = allChanges(String(out.package)).map(([path]) => path);
    assert.ok(rows.includes('a.txt') && rows.includes('b.txt'), JSON.stringify(rows));
  });

  it('D3b a wrap whose recording fails once the command ran still exits with the command’s code', async () => {
    const p = makeProject('rv-record-fails-');
    await ok(p, ['init']);
    const id = jsonOut(await ok(p, ['session', 'start', '--json'])).session as string;
    // The command puts a folder where the session's log is: the end cannot be recorded.
    const log = `.tally/sessions/${id}/events.log`;
    const ran = await p.tally(['wrap', '--', 'sh', '-c', `mv ${log} ../moved.log; mkdir ${log}; exit 4`]);
    assert.equal(ran.code, 4, ran.stderr);
    assert.match(ran.stderr, /not all was recorded/);
  });

  it('D4 an empty command name is a clear error (or 127) and leaves no session open', async () => {
    const p = makeProject('rv-empty-');
    await ok(p, ['init']);
    const ran = await p.tally(['wrap', '--', '']);
    assert.ok(ran.code === 2 || ran.code === 127, `exit ${ran.code}: ${ran.stderr}`);
    assert.doesNotMatch(ran.stderr, /ERR_INVALID_ARG_VALUE|at normalizeSpawnArguments/);
    const status = await p.tally(['session', 'status']);
    assert.match(status.stdout + status.stderr, /no open session/);
  });

  it("D6 outside git, wrap from a subfolder watches the project's tree, as `tally session start` does", async () => {
    const dir = tempDir('rv-subdir-');
    const root = join(dir, 'proj');
    mkdirSync(join(root, 'sub'), { recursive: true });
    writeFileSync(join(root, 'a.txt'), 'a\n');
    const env = { PATH: process.env.PATH, HOME: dir, TALLY_HOME: join(dir, 'home'), NO_COLOR: '1' };
    assert.equal((await runTally(['init'], { cwd: root, env })).code, 0);
    const ran = await runTally(['wrap', '--json', '--', 'sh', '-c', 'echo b > ../b.txt; rm ../a.txt'], {
      cwd: join(root, 'sub'),
      env,
    });
    assert.equal(ran.code, 0, ran.stderr);
    const pkg = String(jsonOut(ran).package);
    assert.ok(pkg.startsWith(join(root, '.tally')), 'recorded in the project at proj/');
    const rows = allChanges(pkg).map(([path, op]) => `${op} ${path}`);
    assert.ok(
      rows.some((r) => r.endsWith('b.txt')),
      `../b.txt not recorded: ${JSON.stringify(rows)}`,
    );
    assert.ok(
      rows.some((r) => r.endsWith('a.txt')),
      `../a.txt deletion not recorded: ${JSON.stringify(rows)}`,
    );
  });

  it('a command that starts the recorder on wrap’s own session (a hook it runs): its end is recorded through it', async () => {
    const p = makeProject('rv-recorder-takes-');
    await ok(p, ['init']);
    // Longer than wrap would wait for the log's lock: the recorder keeps the session meanwhile.
    p.env.TALLY_RECORDER_IDLE_MS = '30000';
    const payload = JSON.stringify({
      session_id: 'h',
      cwd: p.root,
      hook_event_name: 'SessionStart',
      source: 'startup',
    });
    writeFileSync(join(p.dir, 'start.json'), payload);
    try {
      const script = `"${process.execPath}" "${TALLY_BIN}" hook claude-code < "${join(p.dir, 'start.json')}" > /dev/null; echo x > x.txt; exit 3`;
      const ran = await p.tally(['wrap', '--json', '--', 'sh', '-c', script]);
      assert.equal(ran.code, 3, ran.stderr);
      const out = jsonOut(ran);
      assert.equal(out.compared, true, ran.stderr);
      assert.ok(
        allChanges(String(out.package)).some(([path]) => path === 'x.txt'),
        ran.stderr,
      );
    } finally {
      await p.tally(['recorder', 'stop']);
    }
  });

  it('D8 a SIGTERM that reaches wrap after the command ended does not leave its session open', async () => {
    const p = makeProject('rv-late-signal-');
    await ok(p, ['init']);
    writeFileSync(join(p.root, '.gitignore'), '.tally/\n');
    // A tree large enough that comparing it after the command takes a moment.
    mkdirSync(join(p.root, 'big'));
    for (let i = 0; i < 20_000; i++) writeFileSync(join(p.root, 'big', `f${i}`), `x${i}`);
    git(p.root, 'add', '-A');
    git(p.root, 'commit', '-qm', 'big');
    const child = spawn(
      process.execPath,
      [TALLY_BIN, 'wrap', '--json', '--', 'sh', '-c', 'echo x > done; exit 5'],
      {
        cwd: p.root,
        env: p.env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    const ended = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await until(join(p.root, 'done'));
    await sleep(200); // the command has ended; wrap is comparing the tree / sealing
    child.kill('SIGTERM');
    const code = await ended;
    const status = await p.tally(['session', 'status']);
    assert.match(status.stdout + status.stderr, /no open session/, `wrap exited ${code}; session left open`);
    assert.equal(code, 5);
  });
});
