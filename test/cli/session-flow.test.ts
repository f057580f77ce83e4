/**
 * The session commands as real processes: init (twice), agent register, session start / event /
 * status / close, closing twice, bad events, redaction of secrets in what is recorded, and many
 * `session event` processes at once. Oracles: the issue text, the shared redaction vectors
 * (read in place), and the exit codes of docs/CONVENTIONS.md.
 */
import assert from 'node:assert/strict';
import {
  appendFileSync,
  existsSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { logContent } from '../log-content.js';
import { decodedPayloads, jsonOut, makeProject, type Project, runTally, toolEvent } from './tally-process.js';

interface Vector {
  name: string;
  input: string;
  must_not_contain?: string[];
  preserved?: string[];
}
const VECTORS = JSON.parse(
  readFileSync(
    new URL('../../../../shared/reference/treeship-vectors/vectors/redaction.json', import.meta.url),
    'utf8',
  ),
) as { leaks: Vector[]; benign: Vector[] };

async function ok(p: Project, args: string[], stdin?: string) {
  const ran = await p.tally(args, stdin === undefined ? {} : { stdin });
  assert.equal(ran.code, 0, `tally ${args.join(' ')} exited ${ran.code}:\n${ran.stderr}`);
  return ran;
}

describe('tally init', () => {
  it('creates the ship key once, outside the tree; the project holds only its public key', async () => {
    const p = makeProject();
    const first = jsonOut(await ok(p, ['init', '--json']));
    assert.equal(first.created, true);
    assert.equal(first.project, join(p.root, '.tally'));
    const keyFile = join(p.home, 'keys', 'ship.key.json');
    const bytes = readFileSync(keyFile);
    assert.equal(statSync(keyFile).mode & 0o077, 0, 'the private key is readable by others');
    // The tree: the public key (committable) and a .gitignore, never a private key.
    assert.ok(existsSync(join(p.root, '.tally', 'keys', 'ship.pub.json')));
    assert.ok(!existsSync(join(p.root, '.tally', 'keys', 'ship.key.json')));
    assert.match(readFileSync(join(p.root, '.tally', '.gitignore'), 'utf8'), /^sessions\/$/m);
    // Pinned in the home's trust store.
    assert.ok(existsSync(join(p.home, 'trust', `${first.key_id}.pub.json`)));
    const second = jsonOut(await ok(p, ['init', '--json']));
    assert.equal(second.created, false);
    assert.equal(second.key_id, first.key_id);
    assert.equal(second.ship_id, first.ship_id);
    assert.ok(readFileSync(keyFile).equals(bytes));
    // From a subdirectory the same project is found, and the key is kept; --global is the same ship.
    const third = jsonOut(await p.tally(['init', '--json'], { cwd: join(p.root, 'src') }));
    assert.equal(third.key_id, first.key_id);
    const global = jsonOut(await ok(p, ['init', '--global', '--json']));
    assert.equal(global.project, null);
    assert.equal(global.key_id, first.key_id);
  });

  it('never overwrites a committed public key of another ship; migrates an in-tree private key, saying so', async () => {
    const p = makeProject();
    await ok(p, ['init']);
    // Another user's home: the project's committed key is not theirs.
    const other = { ...p.env, TALLY_HOME: join(p.dir, 'other-home') };
    const refused = await runTally(['init'], { cwd: p.root, env: other });
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /never overwritten/);
    const started = await runTally(['session', 'start'], { cwd: p.root, env: other });
    assert.equal(started.code, 2);
    assert.match(started.stderr, /signed by another ship/);
    // The old layout: the private key inside the tree is refused until init moves it out.
    const old = makeProject();
    await ok(old, ['init']);
    renameSync(join(old.home, 'keys', 'ship.key.json'), join(old.root, '.tally', 'keys', 'ship.key.json'));
    rmSync(join(old.home, 'keys'), { recursive: true });
    const blocked = await old.tally(['session', 'start']);
    assert.equal(blocked.code, 2);
    assert.match(blocked.stderr, /inside the project tree/);
    const migrated = jsonOut(await ok(old, ['init', '--json']));
    assert.match(String((migrated.notes as string[])[0]), /moved the ship's private key/);
    assert.ok(!existsSync(join(old.root, '.tally', 'keys', 'ship.key.json')));
    assert.ok(existsSync(join(old.home, 'keys', 'ship.key.json')));
    assert.equal((await old.tally(['session', 'start'])).code, 0);
  });
});

describe('a session from the command line', () => {
  let p: Project;
  let session: string;
  let log: string;

  before(async () => {
    p = makeProject();
    await ok(p, ['init']);
    const allow = ['--allow', 'Read', '--allow', 'Edit(src/**)', '--allow', 'Bash(*)'];
    await ok(p, ['agent', 'register', '--name', 'coder', ...allow, '--forbid', 'Bash(rm -rf *)', '--json']);
    const started = jsonOut(await ok(p, ['session', 'start', '--agent', 'coder', '--json']));
    session = started.session as string;
    assert.match(session, /^ses_/);
    assert.deepEqual(started.agent, { name: 'coder' });
    log = join(p.root, '.tally', 'sessions', session, 'events.log');
  });

  // biome-ignore lint/suspicious/noExplicitAny: the records are read as the JSON they are.
  const rejectedRecords = (): any[] =>
    decodedPayloads(readFileSync(log))
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((r) => r.event.type === 'tally.ingest.rejected');

  it('records an event and prints its sequence number; a forbidden call is denied', async () => {
    const read = await ok(
      p,
      ['session', 'event', '--source', 'hook'],
      toolEvent('c1', 'Read', { file_path: 'README.md' }),
    );
    assert.match(read.stdout, /^\d+\n$/);
    // Recorded, and a policy failure: exit 1.
    const denied = await p.tally(['session', 'event', '--json'], {
      stdin: toolEvent('c2', 'Bash', { command: 'rm -rf /tmp/x' }, 'shell'),
    });
    assert.equal(denied.code, 1, denied.stderr);
    const rm = jsonOut(denied);
    assert.equal(rm.seq, Number(read.stdout) + 1);
    assert.equal((rm.decision as { decision: string }).decision, 'deny');
  });

  it('an invalid event exits 2, names the JSON pointer, and is recorded only as rejected (its digest)', async () => {
    const rejectedBefore = rejectedRecords().length;
    const cases: [string, RegExp][] = [
      [
        JSON.stringify({ type: 'tool.before', path: 'native', tool: { origin: 'native', name: 'Read' } }),
        /\/call/,
      ],
      [JSON.stringify({ ...JSON.parse(toolEvent('c', 'Read', {})), time: 'noon' }), /\/time/],
      ['{"type": "tool.before", "type": "tool.after"}', /duplicate|type/i],
      ['not json', /JSON/],
      ['', /stdin/],
    ];
    for (const [stdin, expected] of cases) {
      const ran = await p.tally(['session', 'event'], { stdin });
      assert.equal(ran.code, 2, `${stdin}: exit ${ran.code}`);
      assert.match(ran.stderr, expected, stdin);
      assert.equal(ran.stdout, '');
    }
    // Each input that was received (all but the empty one) is one tally.ingest.rejected record
    // holding its digest and where it went wrong; the log never holds the bytes themselves.
    const rejected = rejectedRecords().slice(rejectedBefore);
    assert.equal(rejected.length, cases.length - 1);
    for (const r of rejected) {
      const facts = r.event.extensions['dev.tally.rejected'];
      assert.match(facts.digest, /^sha256:[0-9a-f]{64}$/);
      assert.equal(facts.channel, 'cli');
      assert.ok(facts.pointer !== undefined || facts.offset !== undefined || /JSON/.test(facts.reason));
    }
    assert.ok(!readFileSync(log, 'utf8').includes(Buffer.from('not json').toString('base64')));
    const size = statSync(log).size;
    const badSource = await p.tally(['session', 'event', '--source', 'Not A Label'], {
      stdin: toolEvent('c', 'Read', {}),
    });
    assert.equal(badSource.code, 2);
    assert.equal(statSync(log).size, size);
  });

  it('secrets in commands are redacted before they reach the log (shared redaction vectors)', async () => {
    let i = 0;
    for (const v of [...VECTORS.leaks, ...VECTORS.benign]) {
      await ok(
        p,
        ['session', 'event', '--source', 'hook'],
        toolEvent(`s${i++}`, 'Bash', { command: v.input }, 'shell'),
      );
    }
    const raw = readFileSync(log);
    const decoded = decodedPayloads(raw);
    for (const v of VECTORS.leaks) {
      for (const secret of v.must_not_contain ?? []) {
        assert.ok(!decoded.includes(secret), `${v.name}: '${secret}' is in the log`);
        assert.ok(!raw.includes(secret), `${v.name}: '${secret}' is in the raw log bytes`);
      }
      for (const kept of v.preserved ?? []) assert.ok(decoded.includes(kept), `${v.name}: lost '${kept}'`);
    }
    for (const v of VECTORS.benign) assert.ok(decoded.includes(JSON.stringify(v.input).slice(1, -1)), v.name);
  });

  it('status reports the open session and its record count', async () => {
    const status = jsonOut(await ok(p, ['session', 'status', '--json']));
    assert.equal(status.session, session);
    assert.equal(status.state, 'open');
    const content = logContent(log);
    const lines = content.toString('utf8').split('\n').filter(Boolean).length;
    assert.equal(status.records, lines);
    assert.equal(status.log_bytes, content.length, 'the content, never the space reserved after it');
    assert.equal(status.torn_tail, false);
  });

  it('close seals a package that verifies, keeps secrets out of it, and a second close changes nothing', async () => {
    const closed = jsonOut(await ok(p, ['session', 'close', '--json']));
    const pkg = closed.package as string;
    assert.equal(pkg, join(p.root, '.tally', 'packages', `${session}.tally`));
    const bytes = readFileSync(pkg);
    const decoded = decodedPayloads(bytes);
    for (const v of VECTORS.leaks)
      for (const secret of v.must_not_contain ?? [])
        assert.ok(!decoded.includes(secret), `${v.name} in package`);
    const infoPath = join(p.root, '.tally', 'sessions', session, 'session.json');
    const info = readFileSync(infoPath);
    for (const args of [
      ['session', 'close'],
      ['session', 'close', '--session', session],
    ]) {
      const again = await p.tally(args);
      assert.equal(again.code, 2, `${args.join(' ')}: ${again.stderr}`);
      assert.match(again.stderr, /closed|no open session/);
    }
    const late = await p.tally(['session', 'event', '--session', session], {
      stdin: toolEvent('z', 'Read', {}),
    });
    assert.equal(late.code, 2);
    assert.ok(readFileSync(pkg).equals(bytes));
    assert.ok(readFileSync(infoPath).equals(info));
    const verified = await p.tally(['verify', pkg, '--json']);
    assert.equal(verified.code, 0, verified.stdout);
    assert.equal(jsonOut(verified).ok, true);
  });
});

describe('concurrent session event processes', () => {
  it('4 × 10 events from parallel processes all land with contiguous sequence numbers', async () => {
    const p = makeProject('tally-concurrent-');
    await ok(p, ['init']);
    await ok(p, ['session', 'start']);
    const worker = async (w: number) => {
      const seqs: number[] = [];
      for (let i = 0; i < 10; i++) {
        const ran = await ok(
          p,
          ['session', 'event'],
          toolEvent(`w${w}-${i}`, 'Read', { file_path: `f${w}-${i}` }),
        );
        seqs.push(Number(ran.stdout));
      }
      return seqs;
    };
    const all = (await Promise.all([0, 1, 2, 3].map(worker))).flat();
    assert.deepEqual(
      [...all].sort((a, b) => a - b),
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
    const closed = jsonOut(await ok(p, ['session', 'close', '--json']));
    assert.equal(closed.records, 43); // start, 40 events, the reconcile summary, end
    const bytes = readFileSync(closed.package as string);
    const records = bytes
      .toString()
      .split('\n')
      .filter(Boolean)
      .slice(1, -1)
      .map((l) => JSON.parse(Buffer.from(JSON.parse(l).payload, 'base64').toString()) as { seq: number });
    assert.deepEqual(
      records.map((r) => r.seq),
      Array.from({ length: 43 }, (_, i) => i),
    );
    const calls = new Set(
      records
        .map((r) => (r as unknown as { event: { call?: { id: string } } }).event.call?.id)
        .filter(Boolean),
    );
    assert.equal(calls.size, 40, 'an event was lost or recorded twice');
    assert.equal((await p.tally(['verify', closed.package as string])).code, 0);
  });
});

describe('session start with a certificate, and recovery from a killed writer', () => {
  it('refuses (exit 1) to run under a certificate that does not verify, and opens nothing', async () => {
    const p = makeProject('tally-forged-');
    await ok(p, ['init']);
    await ok(p, ['agent', 'register', '--name', 'coder', '--allow', 'Read']);
    const path = join(p.root, '.tally', 'agents', 'coder.agent.json');
    const envelope = JSON.parse(readFileSync(path, 'utf8')) as { payload: string };
    const payload = JSON.parse(Buffer.from(envelope.payload, 'base64').toString()) as Record<string, unknown>;
    payload.bounded_actions = ['*'];
    envelope.payload = Buffer.from(JSON.stringify(payload)).toString('base64');
    writeFileSync(path, JSON.stringify(envelope));
    const ran = await p.tally(['session', 'start', '--agent', 'coder']);
    assert.equal(ran.code, 1, ran.stderr);
    assert.match(ran.stderr, /does not verify/);
    assert.equal(jsonOut(await ok(p, ['session', 'status', '--json'])).session, null);
  });

  it('a torn last line is reported by status and quarantined and reported by close', async () => {
    const p = makeProject('tally-torn-cli-');
    await ok(p, ['init']);
    const id = (await ok(p, ['session', 'start'])).stdout.trim();
    await ok(p, ['session', 'event'], toolEvent('c1', 'Read', { file_path: 'README.md' }));
    const log = join(p.root, '.tally', 'sessions', id, 'events.log');
    const intact = statSync(log).size;
    const torn = '{"payload":"eyJldmVudCI6';
    appendFileSync(log, torn);
    const status = jsonOut(await ok(p, ['session', 'status', '--json']));
    assert.equal(status.torn_tail, true);
    assert.equal(status.records, 2);
    const closed = jsonOut(await ok(p, ['session', 'close', '--json']));
    const recovered = closed.recovered as { offset: number; bytes: number; quarantinePath: string };
    assert.equal(recovered.offset, intact);
    assert.equal(recovered.bytes, torn.length);
    assert.equal(readFileSync(recovered.quarantinePath, 'utf8'), torn);
    assert.equal(closed.records, 4); // start, one event, the reconcile summary, end
    assert.equal((await p.tally(['verify', closed.package as string])).code, 0);
  });
});
