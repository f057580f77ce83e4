/**
 * The space a log store reserves ahead of its appends (src/evidence/log/file-store.ts, docs/formats.md
 * "Session log"): zeros after the content while the store is open or after a crash, never content,
 * and gone once the store is closed or the log reopened. Oracles: the file's bytes and size on disk,
 * an independent parse of the lines, a real process killed mid-session.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { readLogLines, verifyLogFile } from '../../src/evidence/log/reader.js';
import { LogWriter } from '../../src/evidence/log/writer.js';
import { logContent } from '../log-content.js';
import { APPENDER, event, setup } from './log-fixture.js';

async function lines(path: string) {
  const out: { line: string; torn: boolean }[] = [];
  for await (const { line, torn } of readLogLines(path)) out.push({ line: line.toString('utf8'), torn });
  return out;
}

describe('the space a log reserves ahead of its appends', () => {
  it('is zeros after the content while open, invisible to readers, and given back on close', async () => {
    const { logPath, signer, publicKey } = setup('tally-log-reserve-');
    const log = await LogWriter.open(logPath, { session: 'ses_r', signer });
    for (let i = 0; i < 40; i++) await log.append({ source: 'cli', event: event(i) });
    const open = logContent(logPath);
    assert.ok(statSync(logPath).size > open.length, 'space is reserved after the content');
    assert.equal(open[open.length - 1], 0x0a, 'the content ends with a whole line');
    const seen = await lines(logPath);
    assert.equal(seen.length, 40);
    assert.ok(seen.every((l) => !l.torn && !l.line.includes('\u0000')));
    assert.deepEqual(
      seen.map((l) => l.line),
      open.toString('utf8').trimEnd().split('\n'),
    );
    const live = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(live.ok, true, live.issue?.message);
    assert.equal(live.records, 40);
    assert.equal(live.bytes, open.length);
    await log.close();
    assert.equal(statSync(logPath).size, open.length, 'close gives the reserved space back');
    assert.ok(readFileSync(logPath).equals(open));
  });

  it('is not taken by a store that appends once and closes (a CLI command)', async () => {
    const { logPath, signer, publicKey } = setup('tally-log-reserve-');
    const log = await LogWriter.open(logPath, { session: 'ses_r', signer });
    await log.append({ source: 'cli', event: event(0) });
    assert.equal(statSync(logPath).size, logContent(logPath).length, 'the first commit is a plain append');
    await log.append({ source: 'cli', event: event(1) });
    assert.ok(statSync(logPath).size > logContent(logPath).length, 'the second reserves');
    await log.close();
    const result = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(result.ok, true, result.issue?.message);
    assert.equal(result.records, 2);
  });

  it('grows past its first reservation without a gap between records', async () => {
    const { logPath, signer, publicKey } = setup('tally-log-reserve-');
    const log = await LogWriter.open(logPath, { session: 'ses_r', signer });
    const big = 'x'.repeat(8000);
    // 8 KB records: the 64 KiB first reservation is outgrown several times over.
    for (let i = 0; i < 60; i++) await log.append({ source: 'cli', event: { ...event(i), big } });
    await log.close();
    const result = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(result.ok, true, result.issue?.message);
    assert.equal(result.records, 60);
    assert.equal(result.bytes, statSync(logPath).size);
    assert.ok(!readFileSync(logPath).includes(0));
  });

  it('after a crash: readers verify the log as it is, and reopening drops the zeros and continues', async () => {
    const { dir, logPath, signer, publicKey } = setup('tally-log-reserve-');
    // A real writer process killed while it holds the log open.
    const child = spawn(process.execPath, [APPENDER, dir, logPath, 'ses_r', '100000', 'hold'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let acks = 0;
    await new Promise<void>((resolve) => {
      child.stdout!.on('data', (d: Buffer) => {
        acks += String(d).split('\n').filter(Boolean).length;
        if (acks >= 30 && child.exitCode === null && !child.killed) {
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    await new Promise((resolve) => child.once('close', resolve));
    const crashed = logContent(logPath);
    assert.ok(statSync(logPath).size > crashed.length, 'the killed writer left reserved space');
    const before = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(before.ok, true, before.issue?.message);
    assert.ok(before.records >= acks, `${before.records} records, ${acks} acknowledged`);
    const log = await LogWriter.open(logPath, { session: 'ses_r', signer });
    assert.equal(log.recovered, null, 'nothing torn: the zeros are not a torn line');
    assert.equal(statSync(logPath).size, crashed.length, 'reopening gave the space back');
    await log.append({ source: 'cli', event: event(-1) });
    await log.close();
    const after = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(after.ok, true, after.issue?.message);
    assert.equal(after.records, before.records + 1);
  });

  it('a torn line before the zeros is quarantined without them', async () => {
    const { logPath, signer, publicKey } = setup('tally-log-reserve-');
    const log = await LogWriter.open(logPath, { session: 'ses_r', signer });
    for (let i = 0; i < 3; i++) await log.append({ source: 'cli', event: event(i) });
    await log.close();
    const intact = readFileSync(logPath).length;
    appendFileSync(logPath, '{"payload":"eyJ2');
    truncateSync(logPath, intact + 16 + 4096); // what a crash mid-write leaves: the rest still zeros
    const torn = await lines(logPath);
    assert.deepEqual(torn[torn.length - 1], { line: '{"payload":"eyJ2', torn: true });
    const reopened = await LogWriter.open(logPath, { session: 'ses_r', signer });
    assert.deepEqual(reopened.recovered, {
      offset: intact,
      bytes: 16,
      quarantinePath: `${logPath}.torn-${intact}`,
    });
    assert.equal(readFileSync(reopened.recovered!.quarantinePath, 'utf8'), '{"payload":"eyJ2');
    await reopened.close();
    const result = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(result.ok, true, result.issue?.message);
    assert.equal(result.records, 3);
  });

  it('zeros followed by anything else are content: a log holding them does not verify', async () => {
    const { logPath, signer, publicKey } = setup('tally-log-reserve-');
    const log = await LogWriter.open(logPath, { session: 'ses_r', signer });
    for (let i = 0; i < 3; i++) await log.append({ source: 'cli', event: event(i) });
    await log.close();
    const bytes = readFileSync(logPath);
    const second = bytes.indexOf(0x0a) + 1;
    // Zero the second record's first bytes (past one read chunk of zeros, too): not reserved space.
    const holed = Buffer.concat([
      bytes.subarray(0, second),
      Buffer.alloc(300_000),
      bytes.subarray(second + 10),
    ]);
    writeFileSync(logPath, holed);
    const result = await verifyLogFile(logPath, { trusted: [publicKey] });
    assert.equal(result.ok, false);
    assert.equal(result.records, 1);
    assert.equal(result.issue?.offset, second);
  });
});
