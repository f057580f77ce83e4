/**
 * An encrypted ship key works end to end through the CLI with its passphrase handed over on a file
 * descriptor (never an environment variable); a wrong or missing one changes nothing, and a
 * passphrase in the environment is refused.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject } from './tally-process.js';

const TOOL_BEFORE = JSON.stringify({
  type: 'tool.before',
  call: { id: 'c1' },
  path: 'native',
  tool: { origin: 'native', name: 'Read', kind: 'read', input: { file_path: 'README.md' } },
});
const SECRET = 'correct horse battery staple';

describe('encrypted ship key through the CLI', () => {
  it('init --encrypt, then register, start, event, close and verify, the passphrase on a file descriptor', async () => {
    const p = makeProject('tally-enc-');
    const init = await p.tally(['init', '--encrypt', '--json'], { passphrase: SECRET });
    assert.equal(init.code, 0, init.stderr);
    assert.equal(jsonOut(init).encrypted, true);
    const keyFile = readFileSync(join(p.home, 'keys', 'ship.key.json'), 'utf8');
    assert.match(keyFile, /"kdf":"scrypt"/);
    assert.ok(!keyFile.includes(SECRET));
    assert.equal(
      jsonOut(await p.tally(['init', '--json'])).encrypted,
      true,
      'a kept key still reports encryption',
    );
    const steps: [string[], string?][] = [
      [['agent', 'register', '--name', 'coder', '--allow', 'Read']],
      [['session', 'start', '--agent', 'coder']],
      [['session', 'event', '--source', 'hook'], TOOL_BEFORE],
    ];
    for (const [args, stdin] of steps) {
      const ran = await p.tally(args, { ...(stdin === undefined ? {} : { stdin }), passphrase: SECRET });
      assert.equal(ran.code, 0, `${args.join(' ')}: ${ran.stderr}`);
    }
    const close = await p.tally(['session', 'close', '--json'], { passphrase: SECRET });
    assert.equal(close.code, 0, close.stderr);
    const pkg = jsonOut(close).package as string;
    const verified = await p.tally(['verify', pkg, '--certificate', 'coder', '--json']);
    assert.equal(verified.code, 0, verified.stdout);
  });

  it('a wrong or missing passphrase is a clear error and records nothing; one in the environment is refused', async () => {
    const p = makeProject('tally-enc-');
    assert.equal((await p.tally(['init', '--encrypt'], { passphrase: 'right' })).code, 0);
    assert.equal((await p.tally(['session', 'start'], { passphrase: 'right' })).code, 0);
    const log = () =>
      readFileSync(
        join(
          p.root,
          '.tally/sessions',
          readFileSync(join(p.root, '.tally/sessions/current'), 'utf8').trim(),
          'events.log',
        ),
      );
    const before = log();
    const wrong = await p.tally(['session', 'event'], { stdin: TOOL_BEFORE, passphrase: 'wrong' });
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /wrong passphrase/);
    const missing = await p.tally(['session', 'event'], { stdin: TOOL_BEFORE });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /passphrase/);
    p.env.TALLY_PASSPHRASE = 'right';
    const fromEnv = await p.tally(['session', 'event'], { stdin: TOOL_BEFORE });
    assert.equal(fromEnv.code, 2);
    assert.match(fromEnv.stderr, /TALLY_PASSPHRASE is not read/);
    assert.deepEqual(log(), before);
  });
});
