/**
 * `tally hook` as a whole process: bin/tally.js runs the bundled shim (dist/src/cli/hook-process.cjs,
 * nothing else loaded), and it behaves exactly as the ES module it is built from — the request the
 * recorder gets, the answer, the exit code, stderr and the spool — answered, refused and with the
 * recorder down. stdin that is non-blocking still reads whole; the bundle is compiled from the code
 * cache the build made of it, a cache V8 refuses changes nothing, and without the bundle bin/tally.js
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
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from '../temp.js';
import { jsonOut, makeProject, runProcess, TALLY_BIN } from './tally-process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MODULE = new URL('../../src/cli/hook-process.js', import.meta.url).href;
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

function run(argv: string[], env: NodeJS.ProcessEnv, stdin: string) {
  return runProcess(process.execPath, argv, { env, stdin });
}

const entries = {
  bundle: (args: string[]) => [TALLY_BIN, 'hook', ...args],
  module: (args: string[]) => [
    '--input-type=module',
    '-e',
    `const m = await import(${JSON.stringify(MODULE)}); m.runHookProcess(process.argv.slice(1));`,
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

  it('loads the bundle and nothing else of Tally: compiled from the V8 code cache the build made of it', async () => {
    const { home } = await fakeRecorder(() => ({ status: 200, parts: ['{}'] }));
    const probe = join(home, 'probe.cjs');
    // Every file of Tally the hook reads, and every module it requires.
    writeFileSync(
      probe,
      `const fs = require('node:fs'); const read = []; const readFileSync = fs.readFileSync;
fs.readFileSync = function (file, ...rest) { if (String(file).startsWith(${JSON.stringify(ROOT)})) read.push(String(file)); return readFileSync.call(fs, file, ...rest); };
process.on('exit', () => fs.writeFileSync(${JSON.stringify(join(home, 'loaded.json'))}, JSON.stringify({ read, required: Object.keys(require.cache) })));\n`,
    );
    const ran = await run(
      ['--require', probe, ...entries.bundle(['claude-code'])],
      { TALLY_HOME: home },
      pre,
    );
    assert.equal(ran.stdout, '{}', ran.stderr);
    const loaded = JSON.parse(readFileSync(join(home, 'loaded.json'), 'utf8')) as {
      read: string[];
      required: string[];
    };
    assert.deepEqual(
      loaded.required.filter((f) => f !== probe),
      [TALLY_BIN],
    );
    const cli = join(ROOT, 'dist', 'src', 'cli');
    assert.deepEqual(loaded.read, [
      TALLY_BIN,
      join(cli, 'hook-process.cjs'),
      join(cli, 'hook-process.code-cache'),
    ]);
  });

  it('without TALLY_HOME the shim finds the recorder under the home folder (~/.tally)', async () => {
    const { home, seen } = await fakeRecorder(() => ({ status: 200, parts: ['{"via":"home"}'] }));
    const user = tempDir('tally-hook-userhome-');
    symlinkSync(home, join(user, '.tally'));
    const ran = await run(entries.bundle(['claude-code']), { HOME: user }, pre);
    assert.equal(ran.stdout, '{"via":"home"}', ran.stderr);
    assert.equal(seen[0]?.body, pre);
  });

  /** What loadShim() of the bin/tally.js at `bin` reports of its cache, in a process run with `nodeArgs`. */
  const cacheSeen = async (bin: string, nodeArgs: string[] = []) => {
    const ran = await run(
      [
        ...nodeArgs,
        '-e',
        `const { shim, script } = require(${JSON.stringify(bin)}).loadShim();
console.log(JSON.stringify({ entry: typeof shim.runHookProcess, rejected: script.cachedDataRejected ?? 'not given' }));`,
      ],
      { PATH: process.env.PATH },
      '',
    );
    assert.equal(ran.code, 0, ran.stderr);
    return JSON.parse(ran.stdout) as { entry: string; rejected: boolean | 'not given' };
  };

  it('the code cache the build made is one this Node accepts for the bundle', async () => {
    assert.deepEqual(await cacheSeen(TALLY_BIN), { entry: 'function', rejected: false });
  });

  it('a cache V8 refuses (here: the hook runs with another V8 flag) changes nothing but the speed', async () => {
    const flag = ['--max-old-space-size=200'];
    assert.deepEqual(await cacheSeen(TALLY_BIN, flag), { entry: 'function', rejected: true });
    const { home, seen } = await fakeRecorder(() => ({ status: 200, parts: ['{"ok":2}'] }));
    const ran = await run([...flag, TALLY_BIN, 'hook', 'claude-code'], { TALLY_HOME: home }, pre);
    assert.deepEqual([ran.code, ran.stdout, ran.stderr], [0, '{"ok":2}', '']);
    assert.equal(seen[0]?.body, pre);
  });

  describe("a code-cache file that is not whole, or not this bundle's and this Node's, is not given to V8", () => {
    const built = () => {
      const cli = join(ROOT, 'dist', 'src', 'cli');
      const file = readFileSync(join(cli, 'hook-process.code-cache'));
      const k = file.readUInt32LE(0);
      const s = file.readUInt32LE(4);
      const n = file.readUInt32LE(8);
      return {
        id: file.subarray(12, 12 + k),
        source: readFileSync(join(cli, 'hook-process.cjs')),
        cache: file.subarray(12 + k + s, 12 + k + s + n),
        file,
      };
    };
    /** A code-cache file as the build lays it out, from its parts. */
    const fileOf = (id: Buffer, source: Buffer, one: Buffer, two: Buffer) => {
      const head = Buffer.alloc(12);
      head.writeUInt32LE(id.length, 0);
      head.writeUInt32LE(source.length, 4);
      head.writeUInt32LE(one.length, 8);
      return Buffer.concat([head, id, source, one, two]);
    };
    /** Half a kilobyte of the cache's middle overwritten: past V8's header, which it checks. */
    const damaged = (cache: Buffer) => {
      const out = Buffer.from(cache);
      for (let i = cache.length >> 1; i < (cache.length >> 1) + 512; i++) out[i]! ^= 0x5a;
      return out;
    };
    /** bin/ and the bundle copied to a tree of their own, with `source` and `cacheFile` in place. */
    const treeWith = (source: Buffer, cacheFile: Buffer) => {
      const tree = tempDir('tally-hook-cache-');
      mkdirSync(join(tree, 'bin'));
      for (const f of ['tally.js', 'package.json']) copyFileSync(join(ROOT, 'bin', f), join(tree, 'bin', f));
      const cli = join(tree, 'dist', 'src', 'cli');
      mkdirSync(cli, { recursive: true });
      writeFileSync(join(cli, 'hook-process.cjs'), source);
      writeFileSync(join(cli, 'hook-process.code-cache'), cacheFile);
      return join(tree, 'bin', 'tally.js');
    };

    it('the oracle: V8 given the damaged cache itself aborts the process', async () => {
      const { source, cache } = built();
      const dir = tempDir('tally-hook-v8abort-');
      writeFileSync(join(dir, 'bundle.cjs'), source);
      writeFileSync(join(dir, 'cache.bin'), damaged(cache));
      const ran = await run(
        [
          '-e',
          `const fs = require('node:fs'); const vm = require('node:vm');
new vm.Script('(function (exports, require, module, __filename, __dirname) {' + fs.readFileSync(${JSON.stringify(join(dir, 'bundle.cjs'))}, 'utf8') + '\\n})', { cachedData: fs.readFileSync(${JSON.stringify(join(dir, 'cache.bin'))}) });
console.log('compiled');`,
        ],
        {},
        '',
      );
      assert.notEqual(ran.code, 0);
      assert.doesNotMatch(ran.stdout, /compiled/);
    });

    it('damaged, truncated, or made for another bundle or another Node: the hook answers as without a cache', async () => {
      const { id, source, cache, file } = built();
      const other = Buffer.concat([source, Buffer.from('// another build\n')]);
      const otherNode = Buffer.from(id.toString('latin1').replace(/^v\d+\.\d+\.\d+/, 'v20.0.0'), 'latin1');
      assert.notDeepEqual(otherNode, id);
      const cases: [string, Buffer, Buffer][] = [
        ['one copy damaged', source, fileOf(id, source, damaged(cache), cache)],
        ['both copies damaged alike', source, fileOf(id, source, damaged(cache), damaged(cache))],
        ['cut short', source, file.subarray(0, file.length - 100)],
        ['the header alone', source, file.subarray(0, 12)],
        ['lengths past the file', source, Buffer.concat([Buffer.alloc(12, 0xff), file.subarray(12)])],
        ["another bundle's", other, file],
        ["another Node's", source, fileOf(otherNode, source, cache, cache)],
      ];
      for (const [what, bundle, cacheFile] of cases) {
        const bin = treeWith(bundle, cacheFile);
        const { home, seen } = await fakeRecorder(() => ({ status: 200, parts: ['{"ok":1}'] }));
        const ran = await run([bin, 'hook', 'claude-code'], { TALLY_HOME: home }, pre);
        if (what === 'both copies damaged alike') {
          // Two copies alike are taken as whole: the one damage the file cannot catch (docs/security.md).
          assert.notEqual(ran.code, 0, `${what}: V8 aborts, as the oracle says`);
          continue;
        }
        assert.deepEqual([ran.code, ran.stdout, ran.stderr], [0, '{"ok":1}', ''], what);
        assert.equal(seen[0]?.body, pre, what);
        assert.equal((await cacheSeen(bin)).rejected, 'not given', what);
      }
    });

    it('an edit of the bundle that keeps its length runs the edited code, not the cached', async () => {
      const { source, file } = built();
      const text = source.toString('latin1');
      const edited = Buffer.from(
        text.replace('tally hook: expected an agent (', 'TALLY HOOK: EXPECTED AN AGENT ('),
        'latin1',
      );
      assert.equal(edited.length, source.length);
      assert.notDeepEqual(edited, source);
      const ran = await run([treeWith(edited, file), 'hook', 'nobody'], {}, pre);
      assert.equal(ran.code, 2);
      assert.match(ran.stderr, /^TALLY HOOK: EXPECTED AN AGENT \(/);
    });
  });

  it('through node:net (TALLY_HOOK_SOCKET=net, as on a Node major the bindings were not verified on), the bundle answers and spools as through the bindings', async () => {
    for (const socket of ['net', 'binding']) {
      const up = await fakeRecorder(() => ({ status: 200, parts: ['{"via":"net"}'] }));
      const answered = await run(
        entries.bundle(['claude-code']),
        { TALLY_HOME: up.home, TALLY_HOOK_SOCKET: socket },
        pre,
      );
      assert.deepEqual([answered.code, answered.stdout, answered.stderr], [0, '{"via":"net"}', ''], socket);
      assert.equal(up.seen[0]?.body, pre, socket);
      const down = await fakeRecorder(null);
      const refused = await run(
        entries.bundle(['claude-code', '--fail', 'closed']),
        { TALLY_HOME: down.home, TALLY_HOOK_SOCKET: socket },
        pre,
      );
      assert.equal(refused.code, 0, socket);
      assert.match(refused.stdout, /"permissionDecision":"deny"/, socket);
      assert.match(refused.stderr, /ECONNREFUSED; the event was spooled/, socket);
      assert.ok(existsSync(join(down.home, 'spool', 'claude-code.jsonl')), socket);
    }
  });

  it('a SessionStart with no recorder starts one (the client loaded by bin/tally.js for the cached bundle), nothing on stderr', async () => {
    const p = makeProject('tally-hook-start-');
    p.env.TALLY_RECORDER_IDLE_MS = '5000';
    assert.equal((await p.tally(['init'])).code, 0);
    try {
      // Without require() of ES modules (Node 20 before 20.19 has none): only the client bin/tally.js
      // loads for the bundle can start the recorder.
      const noRequireEsm = process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module')
        ? ['--no-experimental-require-module']
        : [];
      const ran = await run(
        [...noRequireEsm, ...entries.bundle(['claude-code'])],
        p.env,
        JSON.stringify({
          session_id: 'hp-start',
          cwd: p.root,
          hook_event_name: 'SessionStart',
          source: 'startup',
        }),
      );
      assert.equal(ran.code, 0, ran.stderr);
      assert.equal(ran.stderr, '');
      const status = jsonOut(await p.tally(['recorder', 'status', '--json'])) as { sessions: unknown[] };
      assert.equal(status.sessions.length, 1, 'the recorder is up and holds the session');
    } finally {
      await p.tally(['recorder', 'stop']);
    }
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
    // bin/ copied beside a dist/ of links to the real one, less the bundle.
    const tree = tempDir('tally-hook-nobundle-');
    mkdirSync(join(tree, 'bin'));
    for (const f of ['tally.js', 'package.json']) copyFileSync(join(ROOT, 'bin', f), join(tree, 'bin', f));
    const src = join(ROOT, 'dist', 'src');
    mkdirSync(join(tree, 'dist', 'src', 'cli'), { recursive: true });
    for (const name of readdirSync(src))
      if (name !== 'cli') symlinkSync(join(src, name), join(tree, 'dist', 'src', name));
    for (const name of readdirSync(join(src, 'cli')))
      if (name !== 'hook-process.cjs')
        symlinkSync(join(src, 'cli', name), join(tree, 'dist', 'src', 'cli', name));
    const { home, seen } = await fakeRecorder(() => ({ status: 200, parts: ['{"via":"module"}'] }));
    const ran = await run([join(tree, 'bin', 'tally.js'), 'hook', 'claude-code'], { TALLY_HOME: home }, pre);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, '{"via":"module"}');
    assert.equal(seen[0]?.body, pre);
  });
});
