/**
 * `tally hook` as a whole process: bin/tally.js runs the bundled shim (dist/src/cli/hook-process.cjs,
 * nothing else loaded), and it behaves exactly as the ES module it is built from — the request the
 * recorder gets, the answer, the exit code, stderr and the spool — answered, refused and with the
 * recorder down. stdin that is non-blocking still reads whole, and without the bundle bin/tally.js
 * falls back to the module.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../temp.js';
import { runProcess, TALLY_BIN } from './tally-process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MODULE = new URL('../../src/cli/hook-process.js', import.meta.url).href;
const CLIENT = new URL('../../src/recorder/client.js', import.meta.url).href;
const BUNDLE = join(ROOT, 'dist', 'src', 'cli', 'hook-process.cjs');
const SECRET = 'ab'.repeat(32);

interface Seen {
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  seen: Seen[];
  spool: Record<string, unknown>[];
}

type Answer = (seen: Seen) => { status: number; parts: string[] };

const closers: (() => void)[] = [];
after(() => {
  for (const close of closers) close();
});

/** A recorder stand-in on 127.0.0.1 with its port and secret where the shim looks for them. */
async function fakeRecorder(answer: Answer | null): Promise<{ home: string; seen: Seen[] }> {
  const home = join(tempDir('tally-hook-process-'), 'home');
  mkdirSync(join(home, 'run'), { recursive: true });
  writeFileSync(join(home, 'run', 'recorder.secret'), `${SECRET}\n`, { mode: 0o600 });
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s = { url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(s);
      const { status, parts } = answer!(s);
      res.statusCode = status;
      for (const part of parts.slice(0, -1)) res.write(part);
      res.end(parts.at(-1));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  if (answer === null) await new Promise<void>((resolve) => server.close(() => resolve()));
  else closers.push(() => server.close());
  writeFileSync(join(home, 'recorder.json'), `${JSON.stringify({ port })}\n`);
  return { home, seen };
}

/**
 * A preload that records, as the process exits, what went through `require` and each script
 * node:vm compiled (its file, whether cached data was given and whether V8 refused it).
 */
function probe(home: string): string {
  const file = join(home, 'probe.cjs');
  writeFileSync(
    file,
    `const vm = require('node:vm');
const compiled = [];
const Script = vm.Script;
vm.Script = class extends Script {
  constructor(source, options) {
    super(source, options);
    compiled.push({ filename: options?.filename, cachedData: options?.cachedData !== undefined, rejected: this.cachedDataRejected });
  }
};
process.on('exit', () => require('node:fs').writeFileSync(${JSON.stringify(join(home, 'probed.json'))}, JSON.stringify({ required: Object.keys(require.cache).filter((f) => f !== __filename), compiled })));
`,
  );
  return file;
}

function probed(home: string): {
  required: string[];
  compiled: { filename: string; cachedData: boolean; rejected?: boolean }[];
} {
  return JSON.parse(readFileSync(join(home, 'probed.json'), 'utf8'));
}

/** bin/ and the bundle copied into a tree of their own, beside links to the rest of dist/. */
function copyOfBin(): { bin: string; bundleDir: string } {
  const tree = tempDir('tally-hook-bin-');
  mkdirSync(join(tree, 'bin'));
  for (const f of ['tally.js', 'package.json']) copyFileSync(join(ROOT, 'bin', f), join(tree, 'bin', f));
  const src = join(ROOT, 'dist', 'src');
  const bundleDir = join(tree, 'dist', 'src', 'cli');
  mkdirSync(bundleDir, { recursive: true });
  for (const name of readdirSync(src))
    if (name !== 'cli') symlinkSync(join(src, name), join(tree, 'dist', 'src', name));
  for (const name of readdirSync(join(src, 'cli')))
    if (name === 'hook-process.cjs') copyFileSync(join(src, 'cli', name), join(bundleDir, name));
    else if (name !== 'hook-process.cjs.cache') symlinkSync(join(src, 'cli', name), join(bundleDir, name));
  return { bin: join(tree, 'bin', 'tally.js'), bundleDir };
}

function run(argv: string[], env: NodeJS.ProcessEnv, stdin: string) {
  return runProcess(process.execPath, argv, { env, stdin });
}

const entries = {
  bundle: (args: string[]) => [TALLY_BIN, 'hook', ...args],
  module: (args: string[]) => [
    '--input-type=module',
    '-e',
    `const m = await import(${JSON.stringify(MODULE)}); m.runHookProcess(process.argv.slice(1), () => import(${JSON.stringify(CLIENT)}));`,
    '--',
    ...args,
  ],
};

/** One hook through `entry`, against a fresh recorder stand-in answering `answer` (null: down). */
async function hookThrough(
  entry: keyof typeof entries,
  args: string[],
  payload: string,
  answer: Answer | null,
): Promise<Outcome> {
  const { home, seen } = await fakeRecorder(answer);
  const env = { PATH: process.env.PATH, HOME: join(home, '..'), TALLY_HOME: home, TALLY_SESSION: 'ses_hp1' };
  const ran = await run(entries[entry](args), env, payload);
  const spoolFile = join(home, 'spool', 'claude-code.jsonl');
  const spool = existsSync(spoolFile)
    ? readFileSync(spoolFile, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];
  return { ...ran, seen, spool };
}

/** What must be equal between two runs: event ids, times and ports differ. */
function comparable(o: Outcome) {
  const port = (text: string) => text.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:PORT');
  return {
    code: o.code,
    stdout: port(o.stdout),
    stderr: port(o.stderr),
    seen: o.seen.map((s) => ({
      url: s.url,
      body: s.body,
      headers: { ...s.headers, host: 'HOST', 'x-tally-event-id': 'ID' },
    })),
    spool: o.spool.map(({ id: _id, received_at: _at, ...rest }) => rest),
  };
}

const pre = JSON.stringify({
  session_id: 'h1',
  cwd: '/tmp',
  hook_event_name: 'PreToolUse',
  tool_name: 'Bash',
  tool_input: { command: 'ls' },
  tool_use_id: 'toolu_1',
});
const deny = JSON.stringify({
  hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'deny' },
});

describe('tally hook, the process', () => {
  it('answered: the payload and headers reach the recorder as given, its answer is printed', async () => {
    const answer: Answer = () => ({ status: 200, parts: [deny.slice(0, 10), deny.slice(10)] });
    const args = ['claude-code', '--agent', 'coder'];
    const bundle = await hookThrough('bundle', args, pre, answer);
    const module = await hookThrough('module', args, pre, answer);
    assert.equal(bundle.code, 0, bundle.stderr);
    assert.equal(bundle.stdout, deny);
    assert.equal(bundle.stderr, '');
    const [seen = assert.fail('nothing reached the recorder')] = bundle.seen;
    assert.equal(seen.url, '/hooks/claude-code?agent=coder');
    assert.equal(seen.body, pre);
    assert.equal(seen.headers.authorization, `Bearer ${SECRET}`);
    assert.equal(seen.headers['x-tally-session'], 'ses_hp1');
    assert.equal(seen.headers['content-type'], 'application/json');
    assert.match(String(seen.headers['x-tally-event-id']), /^evt_[0-9a-f]+$/);
    assert.deepEqual(bundle.spool, []);
    assert.deepEqual(comparable(bundle), comparable(module));
  });

  it('refused (500) or down: spooled, answered by --fail, the same from the bundle and the module', async () => {
    const refused: Answer = () => ({ status: 500, parts: ['{"error":{"code":"x","message":"broken"}}'] });
    for (const [args, answer, expect] of [
      [['claude-code'], refused, /"permissionDecision":"deny"/],
      [['claude-code', '--fail', 'open'], null, /^\{\}$/],
      [['claude-code', '--fail', 'closed'], null, /"permissionDecision":"deny"/],
    ] as const) {
      const bundle = await hookThrough('bundle', [...args], pre, answer);
      const module = await hookThrough('module', [...args], pre, answer);
      assert.equal(bundle.code, 0, bundle.stderr);
      assert.match(bundle.stdout, expect);
      assert.match(bundle.stderr, answer ? /it answered 500: .*broken/ : /ECONNREFUSED/);
      assert.equal(bundle.spool.length, 1);
      assert.equal((bundle.spool[0]!.payload as { tool_use_id: string }).tool_use_id, 'toolu_1');
      assert.equal(bundle.spool[0]!.session, 'ses_hp1');
      assert.deepEqual(comparable(bundle), comparable(module));
    }
  });

  it('an unknown agent is a usage error (2), from both', async () => {
    const bundle = await hookThrough('bundle', ['nobody'], pre, null);
    const module = await hookThrough('module', ['nobody'], pre, null);
    assert.equal(bundle.code, 2);
    assert.match(bundle.stderr, /expected an agent \(claude-code,/);
    assert.deepEqual(comparable(bundle), comparable(module));
  });

  it('compiles the bundle from its code cache, and loads nothing else of Tally', async () => {
    const { home } = await fakeRecorder(() => ({ status: 200, parts: ['{}'] }));
    const ran = await run(
      ['--require', probe(home), ...entries.bundle(['claude-code'])],
      { TALLY_HOME: home },
      pre,
    );
    assert.equal(ran.stdout, '{}', ran.stderr);
    const seen = probed(home);
    // Nothing through require but bin/tally.js, and no ES module: the bundle is compiled by node:vm.
    assert.deepEqual(seen.required, [TALLY_BIN]);
    assert.deepEqual(seen.compiled, [{ filename: BUNDLE, cachedData: true, rejected: false }]);
  });

  it('compiles the source when the code cache is of another build, is damaged or is missing', async () => {
    const cache = readFileSync(`${BUNDLE}.cache`);
    const tag = readFileSync(BUNDLE, 'utf8').split('\n')[0]!;
    assert.ok(cache.subarray(0, tag.length).equals(Buffer.from(tag)), 'the cache starts with the bundle tag');
    const damaged = Buffer.from(cache);
    damaged.fill(0x5a, tag.length + 1, tag.length + 65);
    const cases: [string, Buffer | null, { cachedData: boolean; rejected?: boolean }][] = [
      [
        'another build',
        Buffer.concat([
          Buffer.from('// tally hook shim, build 0000000000000000\n'),
          cache.subarray(tag.length + 1),
        ]),
        { cachedData: false },
      ],
      ['damaged', damaged, { cachedData: true, rejected: true }],
      ['missing', null, { cachedData: false }],
    ];
    for (const [what, bytes, expected] of cases) {
      const tree = copyOfBin();
      if (bytes !== null) writeFileSync(join(tree.bundleDir, 'hook-process.cjs.cache'), bytes);
      const { home, seen } = await fakeRecorder(() => ({ status: 200, parts: ['{"ok":1}'] }));
      const ran = await run(
        ['--require', probe(home), tree.bin, 'hook', 'claude-code'],
        { TALLY_HOME: home },
        pre,
      );
      assert.equal(ran.code, 0, `${what}: ${ran.stderr}`);
      assert.equal(ran.stdout, '{"ok":1}', what);
      assert.equal(seen[0]?.body, pre, what);
      const [compiled] = probed(home).compiled;
      assert.equal(compiled?.cachedData, expected.cachedData, what);
      if (expected.rejected !== undefined) assert.equal(compiled?.rejected, expected.rejected, what);
    }
  });

  it('the bundle holds no import(), which node:vm could not run', () => {
    assert.doesNotMatch(readFileSync(BUNDLE, 'utf8'), /\bimport\s*\(/);
  });

  it('reads a non-blocking stdin whole: what the descriptor had, then the rest from the stream', async () => {
    const { home, seen } = await fakeRecorder(() => ({ status: 200, parts: ['{}'] }));
    // A parent (here a preload) that left stdin non-blocking: opening process.stdin on a pipe
    // does that. Half the payload now, the rest later: the first read finds it, the next EAGAIN.
    const probe = join(home, 'nonblocking.cjs');
    writeFileSync(probe, 'void process.stdin;\n');
    const ran = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ['--require', probe, ...entries.bundle(['claude-code'])], {
        env: { TALLY_HOME: home },
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.stderr.on('data', (d) => {
        stderr += d;
      });
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.write(pre.slice(0, 40));
      setTimeout(() => child.stdin.end(pre.slice(40)), 300);
    });
    assert.equal(ran.stdout, '{}', ran.stderr);
    assert.equal(seen[0]?.body, pre);
  });

  it('without the bundle (a tsc-only build), bin/tally.js runs the module instead', async () => {
    const tree = copyOfBin();
    rmSync(join(tree.bundleDir, 'hook-process.cjs'));
    const { home, seen } = await fakeRecorder(() => ({ status: 200, parts: ['{"via":"module"}'] }));
    const ran = await run([tree.bin, 'hook', 'claude-code'], { TALLY_HOME: home }, pre);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, '{"via":"module"}');
    assert.equal(seen[0]?.body, pre);
  });
});
