/**
 * Another local user on the recorder's port. The port is kept in `recorder.json` for good, so while
 * the recorder is down any user can listen there. Run as root, the test drops a listener to another
 * uid (65534) on the port: a real process on 127.0.0.1 that answers every request 200 with an allow
 * and prints what it was sent. Neither the Node shim nor the CLI may send it the secret, or take its
 * answer for the recorder's.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openCodePlugin } from '../../src/capture/opencode/plugin.js';
import { makeProject, type Project, runProcess, TALLY_BIN } from '../cli/tally-process.js';
import { OTHER_UID } from '../session/as-user.js';

const LISTENER = `
const http = require('node:http');
http.createServer((req, res) => {
  process.stdout.write(req.method + ' ' + req.url + ' ' + String(req.headers.authorization) + '\\n');
  req.resume();
  const text = JSON.stringify({ hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' } });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}).listen(Number(process.argv[1]), process.argv[2], () => process.stdout.write('listening\\n'));
`;

const SH_SHIM = fileURLToPath(new URL('../../../bin/tally-hook', import.meta.url));
const DASH = execFileSync('sh', ['-c', 'command -v dash'], { encoding: 'utf8' }).trim();

const stops: (() => void)[] = [];
after(() => {
  for (const stop of stops) stop();
});

/** The other user's listener on `host`:port; what it was sent so far. */
async function squat(port: number, host: string): Promise<() => string> {
  const child = spawn(process.execPath, ['-e', LISTENER, String(port), host], {
    uid: OTHER_UID,
    gid: OTHER_UID,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  stops.push(() => child.kill());
  let seen = '';
  child.stdout.on('data', (d) => {
    seen += d;
  });
  for (let i = 0; i < 100 && !seen.includes('listening'); i++) await new Promise((r) => setTimeout(r, 50));
  assert.match(seen, /listening/);
  return () => seen.replace('listening\n', '');
}

async function project(): Promise<{ p: Project; port: number; secret: string }> {
  const p = makeProject('tally-foreign-');
  assert.equal((await p.tally(['init'])).code, 0);
  assert.equal(
    (
      await p.tally([
        'agent',
        'register',
        '--name',
        'coder',
        '--allow',
        'Bash(ls*)',
        '--forbid',
        'Bash(rm -rf *)',
      ])
    ).code,
    0,
  );
  // Made once, by the first client: the port kept and the secret.
  await p.tally(['recorder', 'status']);
  const port = (JSON.parse(readFileSync(join(p.home, 'recorder.json'), 'utf8')) as { port: number }).port;
  const secret = readFileSync(join(p.home, 'run', 'recorder.secret'), 'utf8').trim();
  return { p, port, secret };
}

const asRoot = process.getuid?.() === 0 && process.platform === 'linux';

describe("another user's process on the recorder's port", { skip: !asRoot && 'needs root on Linux' }, () => {
  for (const host of ['127.0.0.1', '0.0.0.0', '::']) {
    it(`on ${host}: the shims send it nothing and fail closed; the CLI says who holds the port`, async () => {
      const { p, port, secret } = await project();
      const seen = await squat(port, host);
      const stdin = JSON.stringify({
        session_id: 'harness-1',
        transcript_path: join(p.dir, 't.jsonl'),
        cwd: p.root,
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'rm -rf src' },
        tool_use_id: 'c1',
      });
      const hookArgs = ['claude-code', '--agent', 'coder'];
      // The Node shim, and the POSIX shim under dash (curl) and bash (/dev/tcp), which hand the
      // payload to the Node shim when another user holds the port.
      for (const [program, argv] of [
        [process.execPath, [join(SH_SHIM, '..', 'tally.js'), 'hook', ...hookArgs]],
        [DASH, [SH_SHIM, ...hookArgs]],
        ['/bin/bash', [SH_SHIM, ...hookArgs]],
      ] as const) {
        const shim = await runProcess(program, [...argv], { cwd: p.root, env: p.env, stdin });
        const answer = JSON.parse(shim.stdout) as { hookSpecificOutput: { permissionDecision: string } };
        assert.equal(answer.hookSpecificOutput.permissionDecision, 'deny', `${program}: ${shim.stdout}`);
        assert.match(shim.stderr, new RegExp(`uid ${OTHER_UID}`), program);
      }
      // Tally's OpenCode plugin, as written for OpenCode, loaded and called as OpenCode calls it.
      const pluginFile = join(p.dir, 'tally-plugin.mjs');
      writeFileSync(
        pluginFile,
        openCodePlugin({ node: process.execPath, tallyBin: TALLY_BIN, failClosed: true, timeoutMs: 5000 }),
      );
      const plugin = (await import(pathToFileURL(pluginFile).href)) as {
        TallyPlugin: (
          context: unknown,
        ) => Promise<Record<string, (input: unknown, output: unknown) => Promise<void>>>;
      };
      const home = process.env.TALLY_HOME;
      process.env.TALLY_HOME = p.home;
      try {
        const hooks = await plugin.TallyPlugin({
          directory: p.root,
          client: {
            session: { get: async ({ path }: { path: { id: string } }) => ({ data: { id: path.id } }) },
          },
        });
        await assert.rejects(
          hooks['tool.execute.before']!(
            { tool: 'bash', sessionID: 'ses_oc', callID: 'call_1' },
            { args: { command: 'rm -rf src' } },
          ),
          new RegExp(`fails closed .*uid ${OTHER_UID}`),
        );
      } finally {
        if (home === undefined) delete process.env.TALLY_HOME;
        else process.env.TALLY_HOME = home;
      }
      assert.match(readFileSync(join(p.home, 'spool', 'opencode.jsonl'), 'utf8'), /rm -rf src/);
      const status = await p.tally(['recorder', 'status', '--json']);
      assert.notEqual(status.code, 0);
      assert.match(status.stdout + status.stderr, /foreign-listener/);
      assert.equal(seen(), '', 'nothing reached the other user');
      assert.ok(!seen().includes(secret));
    });
  }
});

/** A free port whose decimal digits a shell would also read as octal (0-7 only, not leading 0). */
async function octalLookingPort(): Promise<number> {
  for (;;) {
    const server = createServer();
    const port = await new Promise<number>((ok) =>
      server.listen(0, '127.0.0.1', () => ok((server.address() as AddressInfo).port)),
    );
    await new Promise((done) => server.close(done));
    if (/^[1-7][0-7]*$/.test(String(port))) return port;
  }
}

describe('a port in recorder.json the shell reads otherwise', {
  skip: !asRoot && 'needs root on Linux',
}, () => {
  it('with a leading zero: the POSIX shim does not send the secret to the port another user holds', async () => {
    const { p, secret } = await project();
    const port = await octalLookingPort();
    const seen = await squat(port, '127.0.0.1');
    // curl and bash's /dev/tcp read 0<port> as <port>; the shell's arithmetic as an octal number.
    writeFileSync(join(p.home, 'recorder.json'), `{"port":0${port}}\n`);
    const stdin = JSON.stringify({ session_id: 'h', cwd: p.root, hook_event_name: 'Stop' });
    for (const program of [DASH, '/bin/bash'])
      await runProcess(program, [SH_SHIM, 'claude-code'], { cwd: p.root, env: p.env, stdin });
    assert.ok(!seen().includes(secret), seen());
    assert.equal(seen(), '', 'nothing reached the other user');
  });
});
