/**
 * `tally verify` as a real process: exit codes (0 verified, 1 a check failed, 2 usage or input
 * error), `--json` alone on stdout, which keys were trusted, `--trust`, `--now` and `--certificate`.
 * Oracles: the description of `tally verify` and docs/CONVENTIONS.md's exit codes.
 */

import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { tempDir } from '../temp.js';
import { jsonOut, makeProject, type Project, type Ran, runTally, toolEvent } from './tally-process.js';

interface Check {
  check: string;
  ok: boolean;
  code: string;
  detail: unknown;
}

let p: Project;
let keyId: string;
let keyFile: string;
let pkgA: string;
let pkgB: string;

async function ok(args: string[], stdin?: string): Promise<Ran> {
  const ran = await p.tally(args, stdin === undefined ? {} : { stdin });
  assert.equal(ran.code, 0, `tally ${args.join(' ')} exited ${ran.code}:\n${ran.stderr}${ran.stdout}`);
  return ran;
}

async function session(events: string[]): Promise<string> {
  await ok(['session', 'start', '--agent', 'coder']);
  for (const e of events) await ok(['session', 'event', '--source', 'hook'], e);
  return jsonOut(await ok(['session', 'close', '--json'])).package as string;
}

function checksOf(ran: Ran): Check[] {
  return jsonOut(ran).checks as Check[];
}

function failing(ran: Ran): Check[] {
  return checksOf(ran).filter((c) => !c.ok && c.code !== 'skipped');
}

before(async () => {
  p = makeProject('tally-verify-');
  const init = jsonOut(await ok(['init', '--json']));
  keyId = init.key_id as string;
  keyFile = join(p.root, '.tally', 'keys', 'ship.pub.json');
  const day = 86_400_000;
  await ok([
    'agent',
    'register',
    '--name',
    'coder',
    '--allow',
    'Read',
    '--allow',
    'Bash(git status*)',
    '--forbid',
    'Bash(rm -rf *)',
    '--escalate',
    'Bash(git push*)',
    '--valid-from',
    new Date(Date.now() - day).toISOString(),
    '--valid-until',
    new Date(Date.now() + day).toISOString(),
  ]);
  await ok([
    'agent',
    'register',
    '--name',
    'late',
    '--allow',
    'Read',
    '--allow',
    'Bash(git status*)',
    '--valid-from',
    '2099-01-01T00:00:00Z',
  ]);
  pkgA = await session([
    toolEvent('a1', 'Read', { file_path: 'README.md' }),
    toolEvent('a2', 'exec_command', { cmd: 'git status --short' }),
  ]);
  // Seen only as it ran (a tool.after, no tool.before that was judged and asked): unapproved.
  pkgB = await session([
    JSON.stringify({
      type: 'tool.after',
      call: { id: 'b1' },
      path: 'native',
      tool: { origin: 'native', name: 'run_shell_command', input: { command: 'git push origin main' } },
      outcome: 'ok',
      execution: { status: 'executed' },
      items: [],
    }),
  ]);
});

describe('tally verify', () => {
  it('verifies a package (exit 0) and says which keys it trusted', async () => {
    const human = await ok(['verify', pkgA]);
    assert.match(human.stdout, /VERIFIED/);
    assert.ok(human.stdout.includes(keyId), 'the trusted key id is not named');
    const ran = await ok(['verify', pkgA, '--json', '--now', '2099-05-01T00:00:00Z']);
    const out = jsonOut(ran);
    assert.equal(out.ok, true);
    assert.deepEqual(out.trusted_keys, [keyId]);
    assert.equal(out.trusted_from, 'default');
    assert.equal(out.now, '2099-05-01T00:00:00.000Z');
    assert.equal(out.format, 'v2');
    const names = (out.checks as Check[]).map((c) => c.check);
    for (const name of [
      'signer_pinned',
      'record_signatures',
      'record_sequence',
      'record_chain',
      'merkle_root',
      'receipt_signature',
      'receipt_recomputed',
      'receipt_complete',
    ]) {
      assert.ok(names.includes(name), `no ${name} check`);
    }
    assert.ok((out.checks as Check[]).every((c) => c.ok));
    for (const c of out.checks as Record<string, unknown>[])
      assert.deepEqual(Object.keys(c).sort(), ['check', 'code', 'detail', 'ok']);
  });

  it('--now is used: a package recorded after it fails not_after_now (exit 1), naming the record', async () => {
    const ran = await p.tally(['verify', pkgA, '--json', '--now', '2001-01-01T00:00:00Z']);
    assert.equal(ran.code, 1, ran.stderr);
    const failed = checksOf(ran).filter((c) => !c.ok);
    assert.deepEqual(
      failed.map((c) => [c.check, c.code]),
      [['not_after_now', 'after-now']],
    );
    assert.equal((failed[0]!.detail as { seq: number }).seq, 0);
  });

  it('reports the certificate state at --now as its own check, informational once it expired', async () => {
    const at = async (now: string) =>
      checksOf(await ok(['verify', pkgA, '--certificate', 'coder', '--json', '--now', now])).find(
        (c) => c.check === 'certificate_at_now',
      )!;
    const later = await at('2099-12-31T00:00:00Z');
    assert.equal(later.code, 'info');
    assert.equal((later.detail as { state: string }).state, 'expired');
    const soon = await at(new Date(Date.now() + 60_000).toISOString());
    assert.equal(soon.code, 'ok');
    assert.equal((soon.detail as { state: string }).state, 'valid');
  });

  it('verifies against a certificate by name or file, however late `now` is (exit 0)', async () => {
    for (const cert of ['coder', join(p.root, '.tally', 'agents', 'coder.agent.json')]) {
      const ran = await ok([
        'verify',
        pkgA,
        '--certificate',
        cert,
        '--json',
        '--now',
        '2099-12-31T00:00:00Z',
      ]);
      const names = checksOf(ran).map((c) => c.check);
      for (const name of ['certificate_signature', 'ship_id_match', 'within_validity_window'])
        assert.ok(names.includes(name), name);
      for (const name of ['unauthorized_calls', 'escalations', 'never_called'])
        assert.ok(names.includes(name));
    }
  });

  it('fails (exit 1) an unapproved escalation and a session outside the certificate window', async () => {
    const escalated = await p.tally(['verify', pkgB, '--certificate', 'coder', '--json']);
    assert.equal(escalated.code, 1);
    assert.deepEqual(
      failing(escalated).map((c) => [c.check, c.code]),
      [['escalations', 'unapproved-escalation']],
    );
    const late = await p.tally(['verify', pkgA, '--certificate', 'late', '--json']);
    assert.equal(late.code, 1);
    assert.deepEqual(
      failing(late).map((c) => c.check),
      ['certificate_bound', 'within_validity_window'],
    );
  });

  it('fails (exit 1) a tampered copy and names the broken check in --json', async () => {
    const bytes = readFileSync(pkgA);
    const lines = bytes.toString().split('\n');
    const secondRecord = lines[0]!.length + 1 + lines[1]!.length + 1;
    const at = bytes.indexOf('"payload":"', secondRecord) + 30;
    bytes[at] = bytes[at] === 0x41 ? 0x42 : 0x41;
    const tampered = join(p.dir, 'tampered.tally');
    writeFileSync(tampered, bytes);
    const ran = await p.tally(['verify', tampered, '--json']);
    assert.equal(ran.code, 1);
    const out = jsonOut(ran);
    assert.equal(out.ok, false);
    const [first] = failing(ran);
    assert.equal(first?.check, 'record_signatures');
    const human = await p.tally(['verify', tampered]);
    assert.equal(human.code, 1);
    assert.match(human.stdout, /FAILED/);
    assert.match(human.stdout, /record_signatures/);
  });

  it('pins only the --trust keys: a foreign key fails signer_pinned, the own key file or hex passes', async () => {
    const other = makeProject('tally-verify-other-');
    const otherInit = jsonOut(await other.tally(['init', '--json']));
    const foreignFile = join(other.root, '.tally', 'keys', 'ship.pub.json');
    const foreign = await p.tally(['verify', pkgA, '--trust', foreignFile, '--json']);
    assert.equal(foreign.code, 1);
    const out = jsonOut(foreign);
    assert.equal(out.trusted_from, 'flag');
    assert.deepEqual(out.trusted_keys, [otherInit.key_id]);
    // The signer is this project's committed key: present in the tree, not pinned — repository-provided.
    assert.deepEqual(
      failing(foreign).map((c) => [c.check, c.code]),
      [['signer_pinned', 'repository-provided']],
    );
    assert.equal(jsonOut(await ok(['verify', pkgA, '--trust', keyFile, '--json'])).ok, true);
    const raw = Buffer.from(JSON.parse(readFileSync(keyFile, 'utf8')).publicKey, 'base64').toString('hex');
    assert.equal(jsonOut(await ok(['verify', pkgA, '--trust', raw, '--json'])).ok, true);
  });

  it('a pull request that replaces the public key, the certificate and the package fails: repository-provided', async () => {
    // The attacker's own ship signs a permissive certificate and a package, and commits its key.
    const attacker = makeProject('tally-attacker-');
    await attacker.tally(['init']);
    await attacker.tally(['agent', 'register', '--name', 'coder', '--allow', 'Bash(*)']);
    await attacker.tally(['session', 'start', '--agent', 'coder']);
    await attacker.tally(['session', 'event', '--source', 'hook'], {
      stdin: toolEvent('x1', 'Bash', { command: 'rm -rf /' }),
    });
    const forged = jsonOut(await attacker.tally(['session', 'close', '--json'])).package as string;
    // The reviewer's CI: a clone of the tree with the attacker's files in it, the reviewer's own home.
    const ci = makeProject('tally-ci-');
    await ci.tally(['init', '--global']);
    mkdirSync(join(ci.root, '.tally', 'keys'), { recursive: true });
    mkdirSync(join(ci.root, '.tally', 'agents'), { recursive: true });
    copyFileSync(
      join(attacker.root, '.tally', 'keys', 'ship.pub.json'),
      join(ci.root, '.tally', 'keys', 'ship.pub.json'),
    );
    copyFileSync(
      join(attacker.root, '.tally', 'agents', 'coder.agent.json'),
      join(ci.root, '.tally', 'agents', 'coder.agent.json'),
    );
    copyFileSync(forged, join(ci.root, 'forged.tally'));
    const ran = await ci.tally(['verify', 'forged.tally', '--certificate', 'coder', '--json']);
    assert.equal(ran.code, 1);
    assert.deepEqual(
      failing(ran).map((c) => [c.check, c.code]),
      [['signer_pinned', 'repository-provided']],
    );
    // Pinning it deliberately is the reviewer's choice, and then it verifies.
    assert.equal(
      (await ci.tally(['trust', 'add', join(ci.root, '.tally', 'keys', 'ship.pub.json')])).code,
      0,
    );
    const listed = jsonOut(await ci.tally(['trust', 'list', '--json'])).keys as { key_id: string }[];
    assert.equal(listed.length, 2);
    // Pinned, the attacker's package is what it is: consistent with the attacker's own certificate.
    assert.equal((await ci.tally(['verify', 'forged.tally', '--certificate', 'coder'])).code, 0);
    const own = jsonOut(await ci.tally(['init', '--global', '--json'])).key_id;
    const id = listed.find((k) => k.key_id !== own)!.key_id;
    assert.equal((await ci.tally(['trust', 'remove', id])).code, 0);
    assert.equal((await ci.tally(['verify', 'forged.tally'])).code, 1);
  });

  it('with no key to pin anywhere, nothing is trusted and signer_pinned fails', async () => {
    const elsewhere = tempDir('tally-nokeys-');
    const ran = await runTally(['verify', pkgA, '--json'], {
      cwd: elsewhere,
      env: { ...p.env, TALLY_HOME: join(elsewhere, 'home') },
    });
    assert.equal(ran.code, 1);
    assert.deepEqual(jsonOut(ran).trusted_keys, []);
    assert.equal(failing(ran)[0]?.check, 'signer_pinned');
  });

  it('usage and input errors exit 2 with nothing on stdout', async () => {
    const notKey = join(p.dir, 'not-a-key.json');
    writeFileSync(notKey, '{"hello": 1}\n');
    const cases: string[][] = [
      ['verify', join(p.dir, 'missing.tally'), '--json'],
      ['verify', pkgA, '--now', 'yesterday', '--json'],
      ['verify', pkgA, '--now', '2026-13-45T00:00:00Z', '--json'],
      ['verify', pkgA, '--now', '2026-02-30T00:00:00Z', '--json'],
      ['verify', p.root, '--json'],
      ['verify', pkgA, '--trust', 'nonsense', '--json'],
      ['verify', pkgA, '--trust', notKey, '--json'],
      ['verify', pkgA, '--certificate', 'nobody', '--json'],
      ['verify', '--json'],
      ['verify', pkgA, pkgB, '--json'],
      ['verify', pkgA, '--no-such-flag'],
    ];
    for (const args of cases) {
      const ran = await p.tally(args);
      assert.equal(ran.code, 2, `${args.join(' ')}: exit ${ran.code}\n${ran.stderr}`);
      if (args.includes('--json')) {
        // Machine readers get one JSON document on stdout, the failure included.
        const out = JSON.parse(ran.stdout) as { ok: boolean; error: { code: string; message: string } };
        assert.equal(out.ok, false, args.join(' '));
        assert.ok(out.error.message.length > 0);
      } else assert.equal(ran.stdout, '', args.join(' '));
      assert.ok(ran.stderr.length > 0);
    }
  });

  it('a file that is not a package fails package_format (exit 1), and an empty one too', async () => {
    const notPackage = join(p.dir, 'readme.tally');
    writeFileSync(notPackage, '# not a package\n');
    const empty = join(p.dir, 'empty.tally');
    writeFileSync(empty, '');
    for (const file of [notPackage, empty]) {
      const ran = await p.tally(['verify', file, '--json']);
      assert.equal(ran.code, 1, ran.stderr);
      assert.equal(failing(ran)[0]?.check, 'package_format');
    }
  });
});

describe('tally agent register refuses bad input (exit 2) and writes nothing', () => {
  it('names the pattern at fault as a JSON pointer, and refuses days that do not exist', async () => {
    const agents = join(p.root, '.tally', 'agents');
    const before = readdirSync(agents).sort();
    const cases: [string[], RegExp][] = [
      [['--allow', 'Read', '--allow', 'Bash(git status'], /\/bounded_actions\/1/],
      [['--allow', 'Read', '--forbid', 'Ba*sh'], /\/forbidden\/0/],
      [['--allow', 'Read', '--escalate', ''], /\/escalation_required\/0/],
      [['--allow', 'Read', '--valid-until', '2026-02-30'], /--valid-until/],
      [['--allow', 'Read', '--valid-days', '-1'], /--valid-days/],
      [['--allow', 'Read', '--valid-from', '2030-01-02', '--valid-until', '2030-01-01'], /\/valid_until/],
    ];
    for (const [flags, expected] of cases) {
      const ran = await p.tally(['agent', 'register', '--name', 'bad', ...flags]);
      assert.equal(ran.code, 2, `${flags.join(' ')}: ${ran.stderr}`);
      assert.match(ran.stderr, expected);
    }
    const badName = await p.tally(['agent', 'register', '--name', '../escape', '--allow', 'Read']);
    assert.equal(badName.code, 2);
    assert.match(badName.stderr, /\/agent\/name/);
    assert.deepEqual(readdirSync(agents).sort(), before);
  });
});
