/**
 * The hub commands as real processes: `tally hub serve` on a SQLite file, and a project that
 * records a session and pushes its certificate and package, lists the hub and audits its log.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateKeyPair } from '../../src/core/keys.js';
import { noteVerifierKey } from '../../src/core/signed-note.js';
import { jsonOut, makeProject, type Project, toolEvent } from '../cli/tally-process.js';
import { type Served, serveHub } from './serve-process.js';

describe('tally hub serve, push, ls, audit', () => {
  let p: Project;
  let hubHome: string;
  let served: Served;
  let pkg: string;
  before(async () => {
    p = makeProject('tally-hub-cli-');
    hubHome = mkdtempSync(join(tmpdir(), 'tally-hub-home-'));
    served = await serveHub(['--db', join(hubHome, 'hub.db')], {
      PATH: process.env.PATH,
      TALLY_HOME: hubHome,
    });
    const ok = async (args: string[], stdin?: string) => {
      const ran = await p.tally(args, stdin === undefined ? {} : { stdin });
      assert.equal(ran.code, 0, `tally ${args.join(' ')}: ${ran.stderr}`);
      return ran;
    };
    await ok(['init']);
    await ok(['agent', 'register', '--name', 'coder', '--allow', 'Read', '--json']);
    const started = jsonOut(await ok(['session', 'start', '--agent', 'coder', '--json']));
    await ok(['session', 'event'], toolEvent('c1', 'Read', { file_path: 'README.md' }));
    const closed = jsonOut(await ok(['session', 'close', '--json']));
    pkg = closed.package as string;
    assert.ok(started.session);
  });
  after(async () => {
    served.child.kill('SIGTERM');
    assert.equal(await served.stopped, 0);
    rmSync(hubHome, { recursive: true, force: true });
    rmSync(p.dir, { recursive: true, force: true });
  });

  it('serve created its key under TALLY_HOME/keys/hub and answers with its verifier key', async () => {
    assert.ok(readFileSync(join(hubHome, 'keys', 'hub.key.json')));
    const info = (await (await fetch(`${served.url}v1/hub`)).json()) as {
      verifier_key: string;
      store: string;
    };
    assert.deepEqual([info.verifier_key, info.store], [served.verifierKey, 'sqlite']);
  });

  it('pushes the certificate and the package; pushing again finds them there', async () => {
    const cert = join(p.root, '.tally', 'agents', 'coder.agent.json');
    const certPush = jsonOut(await p.tally(['push', cert, '--hub', served.url, '--json']));
    assert.equal(certPush.status, 'created');
    const pushed = await p.tally([
      'push',
      pkg,
      '--hub',
      served.url,
      '--certificate',
      certPush.serial as string,
      '--json',
    ]);
    assert.equal(pushed.code, 0, pushed.stderr);
    assert.equal(jsonOut(pushed).status, 'created');
    assert.equal(jsonOut(await p.tally(['push', pkg, '--hub', served.url, '--json'])).status, 'exists');
  });

  it('verify --hub proves the pushed package is in the log; an unpushed one fails hub_inclusion', async () => {
    const hubRows = (ran: { stdout: string }) =>
      (jsonOut(ran as never).checks as { check: string; ok: boolean; code: string }[])
        .filter((c) => c.check === 'hub_inclusion' || c.check === 'witness_consistent')
        .map((c) => [c.check, c.ok, c.code]);
    const unpinned = await p.tally(['verify', pkg, '--hub', served.url]);
    assert.equal(unpinned.code, 2, 'no hub key pinned yet');
    assert.match(unpinned.stderr, /--hub-key KEY .*tally hub audit/);
    const pinned = await p.tally([
      'verify',
      pkg,
      '--hub',
      served.url,
      '--hub-key',
      served.verifierKey,
      '--json',
    ]);
    assert.equal(pinned.code, 0, pinned.stdout);
    assert.deepEqual(hubRows(pinned), [
      ['hub_inclusion', true, 'ok'],
      ['witness_consistent', true, 'info'],
    ]);
    assert.equal((await p.tally(['session', 'start'])).code, 0);
    const other = jsonOut(await p.tally(['session', 'close', '--json'])).package as string;
    const absent = await p.tally([
      'verify',
      other,
      '--hub',
      served.url,
      '--hub-key',
      served.verifierKey,
      '--json',
    ]);
    assert.equal(absent.code, 1);
    assert.deepEqual(hubRows(absent)[0], ['hub_inclusion', false, 'not-on-hub']);
    const wrongKey = await p.tally([
      'verify',
      pkg,
      '--hub',
      served.url,
      '--hub-key',
      // The same name and key ID, another key (split at the first two '+': base64 may hold '+').
      `${served.verifierKey.split('+').slice(0, 2).join('+')}+${Buffer.alloc(33, 1).toString('base64')}`,
      '--json',
    ]);
    // A key that does not match its ID is refused before any hub is asked (exit 2, naming it).
    assert.equal(wrongKey.code, 2, wrongKey.stderr);
    assert.match(wrongKey.stderr, /--hub-key .*key ID does not match/);
    // Another hub's key, well formed: its checkpoint proves nothing here.
    const name = served.verifierKey.slice(0, served.verifierKey.indexOf('+'));
    const anotherHub = await p.tally([
      'verify',
      pkg,
      '--hub',
      served.url,
      '--hub-key',
      noteVerifierKey(name, generateKeyPair().publicKey),
      '--json',
    ]);
    assert.equal(anotherHub.code, 1, 'a checkpoint the pinned key did not sign proves nothing');
    assert.equal(hubRows(anotherHub)[0]![2], 'untrusted-checkpoint');
    const mangled = await p.tally([
      'verify',
      pkg,
      '--hub',
      served.url,
      '--hub-key',
      `${served.verifierKey}+x`,
    ]);
    assert.equal(mangled.code, 2, mangled.stderr);
  });

  it('a tampered package is refused: exit 1, the failing check on stdout', async () => {
    const bytes = readFileSync(pkg, 'utf8').split('\n');
    bytes[1] = bytes[1]!
      .replace('"sig":"', '"sig":"A')
      .replace(/"sig":"A(.)/, (_m, c) => `"sig":"${c === 'A' ? 'B' : 'A'}`);
    const bad = join(p.dir, 'tampered.tally');
    writeFileSync(bad, bytes.join('\n'));
    const ran = await p.tally(['push', bad, '--hub', served.url, '--json']);
    assert.equal(ran.code, 1, ran.stderr);
    const out = jsonOut(ran) as { ok: boolean; error: { code: string; check: string } };
    assert.equal(out.ok, false);
    assert.equal(out.error.code, 'verification-failed');
    assert.match(out.error.check, /^record_|package_format/);
  });

  it('lists the hub and audits its log twice, the second time against the first', async () => {
    const listed = jsonOut(
      await p.tally(['hub', 'ls', '--hub', served.url, 'packages', '--agent', 'coder', '--json']),
    );
    assert.equal((listed.items as unknown[]).length, 1);
    const first = jsonOut(await p.tally(['hub', 'audit', served.url, '--json']));
    assert.deepEqual([first.trust, first.consistent], ['first-use', true]);
    const second = jsonOut(
      await p.tally(['hub', 'audit', served.url, '--hub-key', served.verifierKey, '--json']),
    );
    assert.deepEqual([second.trust, second.consistent], ['pinned', true]);
    // The key recorded on first use now pins the hub for verify as well.
    assert.equal((await p.tally(['verify', pkg, '--hub', served.url])).code, 0);
    const usage = await p.tally(['hub', 'nothing']);
    assert.equal(usage.code, 2);
  });
});
