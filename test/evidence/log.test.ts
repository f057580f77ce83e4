import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { canonicalize } from '../../src/core/canonical.js';
import { signEnvelope } from '../../src/core/dsse.js';
import { sha256 } from '../../src/core/hash.js';
import { generateKeyPair, keyId } from '../../src/core/keys.js';
import { loadPrivateKey } from '../../src/core/keystore.js';
import { LineTooLong, MAX_LINE_BYTES, readLogLines, verifyLogFile } from '../../src/evidence/log/reader.js';
import { LogWriter } from '../../src/evidence/log/writer.js';
import { packageLine } from '../../src/evidence/package/build.js';
import { PackageError, SEAL_TYPE } from '../../src/evidence/package/grammar.js';
import { bufferLines } from '../../src/evidence/package/verify.js';
import { RecordError } from '../../src/evidence/record/codec.js';
import { RECORD_PAYLOAD_TYPE } from '../../src/evidence/record/record.js';
import { APPENDER, event, setup } from './log-fixture.js';

async function writeRecords(
  logPath: string,
  signer: { privateKey: import('node:crypto').KeyObject; keyId: string },
  n: number,
) {
  const log = await LogWriter.open(logPath, { session: 'ses_test', signer });
  await Promise.all(Array.from({ length: n }, (_, i) => log.append({ source: 'cli', event: event(i) })));
  await log.close();
}

function runAppender(args: string[]): Promise<{ acks: number[]; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [APPENDER, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({
        acks: out
          .split('\n')
          .filter(Boolean)
          .map((l) => Number(l.split(' ')[1])),
        code,
      }),
    );
  });
}

describe('signed event log', () => {
  it('appends signed, chained records that verify; each record is its own DSSE envelope', async () => {
    const { logPath, signer, publicKey } = setup();
    await writeRecords(logPath, signer, 50);
    const result = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.deepEqual(result.issue, null);
    assert.equal(result.records, 50);
    // Independent check of the format: line = canonical envelope; prev = sha256 of the previous payload.
    const lines = readFileSync(logPath, 'utf8').trimEnd().split('\n');
    let prev: string | null = null;
    lines.forEach((line, i) => {
      const env = JSON.parse(line);
      assert.equal(canonicalize(env), line);
      assert.equal(env.payloadType, RECORD_PAYLOAD_TYPE);
      const payload = Buffer.from(env.payload, 'base64');
      // The writer spells its line out; it is the generic DSSE envelope, byte for byte (Ed25519 is
      // deterministic).
      const generic = signEnvelope(payload, RECORD_PAYLOAD_TYPE, {
        privateKey: signer.privateKey,
        keyid: signer.keyId,
      });
      assert.equal(canonicalize(generic), line);
      const record = JSON.parse(payload.toString());
      assert.equal(record.seq, i);
      assert.equal(record.prev, prev);
      assert.deepEqual(record.event, event(i));
      prev = `sha256:${sha256(payload).toString('hex')}`;
    });
  });

  it('several logs committing at once in one process (their writes overlap in the thread pool) each hold every record, in order', async () => {
    const { dir, signer, publicKey } = setup();
    const paths = [0, 1, 2].map((i) => join(dir, `events-${i}.log`));
    const logs = await Promise.all(
      paths.map((path) => LogWriter.open(path, { session: 'ses_test', signer })),
    );
    // Rounds of appends to every log at once, then a log appended to while the others are idle.
    for (let round = 0; round < 10; round++)
      await Promise.all(
        logs.flatMap((log, l) =>
          [0, 1, 2].map((k) => log.append({ source: 'cli', event: event(round * 3 + k + l * 1000) })),
        ),
      );
    await logs[0]!.append({ source: 'cli', event: event(30) });
    await Promise.all(logs.map((log) => log.close()));
    for (const [l, path] of paths.entries()) {
      const result = await verifyLogFile(path, { trusted: [publicKey] });
      assert.deepEqual(result.issue, null);
      assert.equal(result.records, l === 0 ? 31 : 30);
      const ids = readFileSync(path, 'utf8')
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(Buffer.from(JSON.parse(line).payload, 'base64').toString()).event.i);
      assert.deepEqual(
        ids,
        Array.from({ length: l === 0 ? 31 : 30 }, (_, i) => (i === 30 ? 30 : i + l * 1000)),
      );
    }
  });

  it('continues the chain across reopen', async () => {
    const { logPath, signer, publicKey } = setup();
    await writeRecords(logPath, signer, 3);
    await writeRecords(logPath, signer, 4);
    const result = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(result.ok, true);
    assert.equal(result.records, 7);
  });

  it('refuses to continue another session or another key', async () => {
    const { logPath, signer } = setup();
    await writeRecords(logPath, signer, 1);
    await assert.rejects(
      LogWriter.open(logPath, { session: 'ses_other', signer }),
      /belongs to session ses_test/,
    );
    const other = generateKeyPair().privateKey;
    await assert.rejects(
      LogWriter.open(logPath, { session: 'ses_test', signer: { privateKey: other, keyId: keyId(other) } }),
      /does not verify/,
    );
  });

  it('serialises appenders from several processes without gaps or duplicates', async () => {
    const { dir, logPath, publicKey } = setup();
    const runs = await Promise.all(
      [1, 2, 3].map(() => runAppender([dir, logPath, 'ses_test', '15', 'close-each'])),
    );
    for (const run of runs) assert.equal(run.code, 0);
    const acked = runs.flatMap((r) => r.acks).sort((a, b) => a - b);
    assert.deepEqual(
      acked,
      Array.from({ length: 45 }, (_, i) => i),
    );
    const result = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(result.ok, true, result.issue?.message);
    assert.equal(result.records, 45);
  });

  it('several processes racing to take over a stale lock (dead owner) still append without gaps', async () => {
    const { dir, logPath, publicKey } = setup();
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    writeFileSync(`${logPath}.lock`, `${dead}\n`);
    const runs = await Promise.all(
      [1, 2, 3, 4].map(() => runAppender([dir, logPath, 'ses_test', '10', 'close-each'])),
    );
    for (const run of runs) assert.equal(run.code, 0);
    const acked = runs.flatMap((r) => r.acks).sort((a, b) => a - b);
    assert.deepEqual(
      acked,
      Array.from({ length: 40 }, (_, i) => i),
    );
    const result = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(result.ok, true, result.issue?.message);
    assert.equal(existsSync(`${logPath}.lock`), false);
  });

  it('keeps every acknowledged record when the writer is killed with SIGKILL', async () => {
    const { dir, logPath, publicKey } = setup();
    const child = spawn(process.execPath, [APPENDER, dir, logPath, 'ses_test', '100000', 'hold'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const acks: number[] = [];
    await new Promise<void>((resolve) => {
      let buf = '';
      child.stdout.on('data', (d) => {
        buf += d;
        const lines = buf.split('\n');
        buf = lines.pop()!;
        for (const l of lines) acks.push(Number(l.split(' ')[1]));
        if (acks.length >= 200 && !child.killed) child.kill('SIGKILL');
      });
      child.on('close', () => resolve());
    });
    assert.ok(acks.length >= 200);
    // Reopening recovers any torn tail; every acknowledged record is still there and verifies.
    const key = loadPrivateKey(dir, 'ship').privateKey;
    const log = await LogWriter.open(logPath, {
      session: 'ses_test',
      signer: { privateKey: key, keyId: keyId(key) },
    });
    await log.close();
    const result = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(result.ok, true, result.issue?.message);
    assert.ok(result.records > Math.max(...acks), `records ${result.records}, last ack ${Math.max(...acks)}`);
  });

  it('quarantines a torn last line on reopen and reports it', async () => {
    const { logPath, signer, publicKey } = setup();
    await writeRecords(logPath, signer, 5);
    const intact = readFileSync(logPath);
    appendFileSync(logPath, '{"payload":"eyJ2Ijo');
    const before = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(before.ok, false);
    assert.equal(before.issue?.check, 'parse');
    assert.equal(before.issue?.offset, intact.length);
    assert.match(before.issue!.message, /torn/);
    const log = await LogWriter.open(logPath, { session: 'ses_test', signer });
    assert.deepEqual(log.recovered, {
      offset: intact.length,
      bytes: 19,
      quarantinePath: `${logPath}.torn-${intact.length}`,
    });
    assert.equal(readFileSync(log.recovered!.quarantinePath, 'utf8'), '{"payload":"eyJ2Ijo');
    await log.append({ source: 'cli', event: event(5) });
    await log.close();
    const after = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(after.ok, true);
    assert.equal(after.records, 6);
    // A second crash at the same offset does not overwrite the first quarantine file.
    const sized = readFileSync(logPath);
    writeFileSync(`${logPath}.torn-${sized.length}`, 'earlier');
    appendFileSync(logPath, '{"x');
    const again = await LogWriter.open(logPath, { session: 'ses_test', signer });
    await again.close();
    assert.equal(again.recovered?.quarantinePath, `${logPath}.torn-${sized.length}-2`);
    assert.equal(readFileSync(`${logPath}.torn-${sized.length}`, 'utf8'), 'earlier');
  });

  it('a torn tail longer than any record is quarantined whole, in chunks; a too-long last record is refused', async () => {
    const { logPath, signer, publicKey } = setup();
    await writeRecords(logPath, signer, 2);
    const intact = readFileSync(logPath).length;
    const tail = Buffer.alloc(MAX_LINE_BYTES + 3 * 1024 * 1024 + 7, 0x78);
    appendFileSync(logPath, tail);
    const log = await LogWriter.open(logPath, { session: 'ses_test', signer });
    assert.deepEqual(log.recovered, {
      offset: intact,
      bytes: tail.length,
      quarantinePath: `${logPath}.torn-${intact}`,
    });
    await log.append({ source: 'cli', event: event(2) });
    await log.close();
    assert.ok(readFileSync(`${logPath}.torn-${intact}`).equals(tail));
    const after = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(after.records, 3);
    assert.deepEqual(after.issue, null);
    // A last complete line longer than any record: not a log this writer continues.
    appendFileSync(logPath, Buffer.concat([tail, Buffer.from('\n')]));
    await assert.rejects(LogWriter.open(logPath, { session: 'ses_test', signer }), (error) => {
      assert.ok(error instanceof RecordError);
      assert.equal(error.code, 'parse');
      assert.match(error.message, /longer than 67108864 bytes/);
      return true;
    });
  });

  it('reports the first bad record precisely: signature, chain, sequence, parse', async () => {
    const { logPath, signer, publicKey } = setup();
    await writeRecords(logPath, signer, 6);
    const original = readFileSync(logPath, 'utf8');
    const lines = original.trimEnd().split('\n');
    const offsetOf = (i: number) =>
      Buffer.byteLength(
        lines
          .slice(0, i)
          .map((l) => `${l}\n`)
          .join(''),
      );
    const check = async (mutated: string[], check: string, seq: number, offset: number) => {
      writeFileSync(logPath, `${mutated.join('\n')}\n`);
      const result = await verifyLogFile(logPath, { trusted: [publicKey] });
      assert.equal(result.ok, false);
      assert.deepEqual(
        { check: result.issue?.check, seq: result.issue?.seq, offset: result.issue?.offset },
        { check, seq, offset },
      );
    };
    // flipped byte inside record 3's payload
    const env3 = JSON.parse(lines[3]!);
    const payload3 = Buffer.from(env3.payload, 'base64');
    payload3[payload3.indexOf('"i":3') + 4] = 0x39;
    await check(
      lines.map((l, i) => (i === 3 ? JSON.stringify({ ...env3, payload: payload3.toString('base64') }) : l)),
      'signature',
      3,
      offsetOf(3),
    );
    // deleted record 2: record 3 arrives where 2 was expected
    await check(
      lines.filter((_, i) => i !== 2),
      'sequence',
      3,
      offsetOf(2),
    );
    // swapped records 1 and 2
    await check([lines[0]!, lines[2]!, lines[1]!, ...lines.slice(3)], 'sequence', 2, offsetOf(1));
    // duplicated record 4
    await check([...lines.slice(0, 5), lines[4]!, ...lines.slice(5)], 'sequence', 4, offsetOf(5));
    // garbage line
    await check([...lines.slice(0, 2), 'not json', ...lines.slice(3)], 'parse', 2, offsetOf(2));
    // a record re-signed by the right key but with a broken chain link
    const rec = JSON.parse(Buffer.from(JSON.parse(lines[4]!).payload, 'base64').toString());
    rec.prev = `sha256:${'0'.repeat(64)}`;
    const forged = signEnvelope(canonicalize(rec), RECORD_PAYLOAD_TYPE, signer.privateKey);
    await check(
      lines.map((l, i) => (i === 4 ? canonicalize(forged) : l)),
      'chain',
      4,
      offsetOf(4),
    );
    // signed by an unpinned key
    const stranger = generateKeyPair().privateKey;
    const alien = signEnvelope(
      Buffer.from(JSON.parse(lines[1]!).payload, 'base64'),
      RECORD_PAYLOAD_TYPE,
      stranger,
    );
    await check(
      lines.map((l, i) => (i === 1 ? canonicalize(alien) : l)),
      'signature',
      1,
      offsetOf(1),
    );
  });

  it('streams lines with exact offsets, including a torn tail', async () => {
    const { logPath } = setup();
    writeFileSync(logPath, 'a\nbcd\n\nxyz');
    const seen = [];
    for await (const l of readLogLines(logPath)) seen.push([l.line.toString(), l.offset, l.torn]);
    assert.deepEqual(seen, [
      ['a', 0, false],
      ['bcd', 2, false],
      ['', 6, false],
      ['xyz', 7, true],
    ]);
    assert.ok(existsSync(logPath));
  });

  it('refuses a line longer than the limit instead of holding it, with or without its newline', async () => {
    const { logPath } = setup();
    const collect = async (limit: number) => {
      const seen: number[] = [];
      try {
        for await (const l of readLogLines(logPath, limit)) seen.push(l.offset);
        return { seen, error: null };
      } catch (error) {
        return { seen, error };
      }
    };
    writeFileSync(logPath, `ab\n${'x'.repeat(40)}\ncd\n`);
    const complete = await collect(10);
    assert.deepEqual(complete.seen, [0]);
    assert.ok(complete.error instanceof LineTooLong);
    assert.equal(complete.error.offset, 3);
    assert.equal(complete.error.code, 'parse');
    writeFileSync(logPath, `ab\n${'x'.repeat(600_000)}`); // no newline, several read chunks
    const unterminated = await collect(300_000);
    assert.deepEqual(unterminated.seen, [0]);
    assert.ok(unterminated.error instanceof LineTooLong);
    assert.equal(unterminated.error.offset, 3);
    // Exactly at the limit is fine; in-memory package lines follow the same rule.
    writeFileSync(logPath, `${'x'.repeat(10)}\n`);
    assert.deepEqual((await collect(10)).seen, [0]);
    assert.throws(() => [...bufferLines(Buffer.from(`ab\n${'x'.repeat(11)}`), 10)], LineTooLong);
    assert.equal([...bufferLines(Buffer.from(`ab\n${'x'.repeat(10)}`), 10)].length, 2);
  });

  it('verifying a log whose tail is one huge line without a newline fails at that byte, not out of memory', async () => {
    const { logPath, signer, publicKey } = setup();
    await writeRecords(logPath, signer, 2);
    const good = readFileSync(logPath).length;
    appendFileSync(logPath, Buffer.alloc(MAX_LINE_BYTES + 1024, 0x78));
    const result = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(result.ok, false);
    assert.equal(result.records, 2);
    assert.deepEqual(
      { check: result.issue?.check, seq: result.issue?.seq, offset: result.issue?.offset },
      { check: 'parse', seq: 2, offset: good },
    );
    assert.match(result.issue?.message ?? '', /longer than 67108864 bytes/);
  });

  it('the writer refuses a record whose line would pass the limit, and changes nothing', async () => {
    const { logPath, signer, publicKey } = setup();
    const log = await LogWriter.open(logPath, { session: 'ses_test', signer, maxLineBytes: 2000 });
    await log.append({ source: 'cli', event: event(0) });
    await assert.rejects(
      log.append({ source: 'cli', event: { ...event(1), blob: 'y'.repeat(3000) } }),
      (error) => {
        assert.ok(error instanceof RecordError);
        assert.equal(error.code, 'schema');
        assert.equal(error.detail?.seq, 1);
        assert.equal(error.detail?.limit, 2000);
        assert.ok((error.detail?.bytes as number) > 3000);
        return true;
      },
    );
    const next = await log.append({ source: 'cli', event: event(2) });
    assert.equal(next.seq, 1, 'the refused record took no sequence number');
    await log.close();
    const result = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.deepEqual(result.issue, null);
    assert.equal(result.records, 2);
    const payloads = readFileSync(logPath, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => Buffer.from(JSON.parse(line).payload, 'base64').toString('utf8'));
    assert.equal(payloads.length, 2);
    assert.ok(payloads.every((p) => !p.includes('blob')));
  });
});

describe('package lines', () => {
  it('a seal line longer than readers accept is refused when the package is written', () => {
    const huge = 'x'.repeat(MAX_LINE_BYTES);
    const seal = {
      type: SEAL_TYPE,
      merkle: { algorithm: 'rfc9162-sha256', size: 1, root: '0'.repeat(64) },
      receipt: { payload: huge },
    };
    assert.throws(
      () => packageLine(seal as unknown as Parameters<typeof packageLine>[0]),
      (error) => {
        assert.ok(error instanceof PackageError);
        assert.equal(error.code, 'seal');
        assert.equal(error.detail?.limit, MAX_LINE_BYTES);
        return true;
      },
    );
    const small = { ...seal, receipt: { payload: 'x' } };
    assert.ok(packageLine(small as unknown as Parameters<typeof packageLine>[0]).length < 200);
  });
});
