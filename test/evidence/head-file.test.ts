/**
 * The chain head kept outside the log (src/evidence/log/head-file.ts): a head signed on the thread
 * pool — as the store signs it while other logs of the process commit — is the same signed head,
 * and after concurrent commits of several logs each head file names its log's last record.
 * Oracle: the log's own last line, read back independently.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { verifyEnvelope } from '../../src/core/dsse.js';
import { keyId } from '../../src/core/keys.js';
import { createKey, loadPrivateKey } from '../../src/core/keystore.js';
import { HEAD_SLOT_BYTES, HeadFile, headFilePath, headOfLine } from '../../src/evidence/log/head-file.js';
import { LogWriter } from '../../src/evidence/log/writer.js';
import { logContent } from '../log-content.js';
import { tempDir } from '../temp.js';

function setup() {
  const dir = tempDir('tally-head-');
  createKey(dir, 'ship');
  const { privateKey, key } = loadPrivateKey(dir, 'ship');
  return { dir, signer: { privateKey, keyId: keyId(privateKey) }, publicKey: key.publicKey };
}

describe('the chain head file', () => {
  it('a head signed on the thread pool reads back as the head, under the ship key', async () => {
    const { dir, signer, publicKey } = setup();
    const head = new HeadFile(headFilePath(dir, 'ses_h'), 'ses_h', signer);
    await head.write({ seq: 0, digest: `sha256:${'a'.repeat(64)}` });
    await head.write({ seq: 1, digest: `sha256:${'b'.repeat(64)}` }, new Date(), true);
    await head.write({ seq: 2, digest: `sha256:${'c'.repeat(64)}` }, new Date(), true);
    head.close();
    assert.deepEqual(new HeadFile(head.path, 'ses_h', signer).read(), {
      seq: 2,
      digest: `sha256:${'c'.repeat(64)}`,
    });
    const bytes = readFileSync(head.path);
    const slot = bytes.subarray(0, HEAD_SLOT_BYTES);
    const line = slot.subarray(0, slot.indexOf(0x0a));
    const verified = verifyEnvelope(JSON.parse(line.toString('utf8')), [publicKey], { strict: true });
    assert.equal(JSON.parse(verified.payload.toString('utf8')).seq, 2);
  });

  it('after concurrent commits of several logs, each head names its log’s last record', async () => {
    const { dir, signer } = setup();
    const sessions = ['ses_a', 'ses_b', 'ses_c', 'ses_d'];
    const logs = await Promise.all(
      sessions.map((session) =>
        LogWriter.open(join(dir, `${session}.log`), {
          session,
          signer,
          head: new HeadFile(headFilePath(dir, session), session, signer),
        }),
      ),
    );
    // Four logs, four appends in flight each, forty rounds: commits overlap across the logs.
    await Promise.all(
      logs.map(async (log, n) => {
        for (let round = 0; round < 40; round++)
          await Promise.all(
            Array.from({ length: 4 }, (_, i) =>
              log.append({
                source: 'cli',
                event: {
                  id: `e${n}-${round}-${i}`,
                  type: 'tool.before',
                  time: '2026-01-01T00:00:00Z',
                  source: 'urn:test',
                },
              }),
            ),
          );
      }),
    );
    await Promise.all(logs.map((log) => log.close()));
    for (const session of sessions) {
      const lines = logContent(join(dir, `${session}.log`))
        .toString('utf8')
        .trimEnd()
        .split('\n');
      assert.equal(lines.length, 160);
      const last = headOfLine(Buffer.from(lines[lines.length - 1]!));
      assert.deepEqual(new HeadFile(headFilePath(dir, session), session, signer).read(), last, session);
    }
  });
});
