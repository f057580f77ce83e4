/**
 * The chain head kept outside the log (src/evidence/log/head-file.ts). Oracles: the MAC is
 * recomputed here from its definition (docs/formats.md, "Chain head": HMAC-SHA256 over DSSE's PAE,
 * keyed by HKDF-SHA256 of the ship key's Ed25519 seed, RFC 5869) with node:crypto alone; the log's
 * own last line, read back independently, names the head after concurrent commits.
 */
import assert from 'node:assert/strict';
import { createHmac, hkdfSync, type KeyObject } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { signEnvelope } from '../../src/core/dsse.js';
import { keyId } from '../../src/core/keys.js';
import { createKey, loadPrivateKey } from '../../src/core/keystore.js';
import {
  HEAD_SLOT_BYTES,
  HeadFile,
  HeadFileError,
  headFilePath,
  headOfLine,
} from '../../src/evidence/log/head-file.js';
import { LogWriter } from '../../src/evidence/log/writer.js';
import { logContent } from '../log-content.js';
import { tempDir } from '../temp.js';

function setup(name = 'ship') {
  const dir = tempDir('tally-head-');
  createKey(dir, name);
  const { privateKey } = loadPrivateKey(dir, name);
  return { dir, signer: { privateKey, keyId: keyId(privateKey) } };
}

/** The slot's envelope, parsed. */
function slotEnvelope(path: string, slot: number) {
  const bytes = readFileSync(path).subarray(slot * HEAD_SLOT_BYTES, (slot + 1) * HEAD_SLOT_BYTES);
  return JSON.parse(bytes.subarray(0, bytes.indexOf(0x0a)).toString('utf8')) as {
    payload: string;
    payloadType: string;
    signatures: { keyid: string; sig: string }[];
  };
}

/** HMAC-SHA256(HKDF-SHA256(seed, salt "", info), PAE(type, payload)), written out from the spec. */
function expectedMac(privateKey: KeyObject, payloadType: string, payload: Buffer): string {
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const key = Buffer.from(hkdfSync('sha256', seed, Buffer.alloc(0), 'tally/chain-head-mac/v1', 32));
  const pae = Buffer.concat([
    Buffer.from(`DSSEv1 ${Buffer.byteLength(payloadType)} ${payloadType} ${payload.length} `),
    payload,
  ]);
  return createHmac('sha256', key).update(pae).digest('base64');
}

const digestOf = (c: string) => `sha256:${c.repeat(64)}`;

describe('the chain head file', () => {
  it('each slot is the head payload under an HMAC keyed from the ship key; the later slot is the head', async () => {
    const { dir, signer } = setup();
    const head = new HeadFile(headFilePath(dir, 'ses_h'), 'ses_h', signer);
    for (const [seq, c] of [
      [0, 'a'],
      [1, 'b'],
      [2, 'c'],
    ] as const)
      await head.write({ seq, digest: digestOf(c) });
    head.close();
    assert.deepEqual(new HeadFile(head.path, 'ses_h', signer).read(), { seq: 2, digest: digestOf('c') });
    const envelope = slotEnvelope(head.path, 0); // seq 2 is in slot 2 mod 2
    assert.equal(envelope.payloadType, 'application/vnd.tally.head+json');
    assert.equal(envelope.signatures.length, 1);
    assert.equal(envelope.signatures[0]!.keyid, `hmac-sha256:${signer.keyId}`);
    const payload = Buffer.from(envelope.payload, 'base64');
    assert.equal(envelope.signatures[0]!.sig, expectedMac(signer.privateKey, envelope.payloadType, payload));
    const fields = JSON.parse(payload.toString('utf8'));
    assert.equal(fields.seq, 2);
    assert.equal(fields.type, 'tally/chain-head/v1');
    assert.equal(fields.session, 'ses_h');
  });

  it('a head under another ship key, of another session, or with a changed MAC or payload is refused', async () => {
    const { dir, signer } = setup();
    const other = setup('other');
    const path = headFilePath(dir, 'ses_h');
    const foreign = new HeadFile(path, 'ses_h', other.signer);
    await foreign.write({ seq: 0, digest: digestOf('a') });
    foreign.close();
    const refused = (why: RegExp) => (error: unknown) =>
      error instanceof HeadFileError && error.code === 'head-invalid' && why.test(error.message);
    // The other ship's MAC names its own key: refused before any MAC is compared.
    assert.throws(() => new HeadFile(path, 'ses_h', signer).read(), refused(/another key/));
    // The same key id with the other key's MAC: the MAC does not verify.
    const envelope = slotEnvelope(path, 0);
    envelope.signatures[0]!.keyid = `hmac-sha256:${signer.keyId}`;
    const put = (value: unknown) => {
      const slot = Buffer.alloc(HEAD_SLOT_BYTES);
      Buffer.from(`${JSON.stringify(value)}\n`).copy(slot);
      writeFileSync(path, slot);
    };
    put(envelope);
    assert.throws(() => new HeadFile(path, 'ses_h', signer).read(), refused(/does not verify/));
    // A genuine head of one session is no head of another.
    const mine = new HeadFile(path, 'ses_h', signer);
    await mine.write({ seq: 0, digest: digestOf('a') });
    mine.close();
    assert.throws(() => new HeadFile(path, 'ses_other', signer).read(), refused(/not this session/));
    // A later seq put in the payload under the old MAC: refused.
    const genuine = slotEnvelope(path, 0);
    const payload = JSON.parse(Buffer.from(genuine.payload, 'base64').toString('utf8'));
    payload.seq = 9;
    put({ ...genuine, payload: Buffer.from(JSON.stringify(payload)).toString('base64') });
    assert.throws(() => new HeadFile(path, 'ses_h', signer).read(), refused(/does not verify/));
  });

  it('a head signed with the ship key (the form written before) is still read', () => {
    const { dir, signer } = setup();
    const path = headFilePath(dir, 'ses_h');
    const payload = Buffer.from(
      JSON.stringify({
        digest: digestOf('d'),
        seq: 5,
        session: 'ses_h',
        time: '2026-12-01T00:00:00.000Z',
        type: 'tally/chain-head/v1',
      }),
    );
    const envelope = signEnvelope(payload, 'application/vnd.tally.head+json', {
      privateKey: signer.privateKey,
      keyid: signer.keyId,
    });
    const slot = Buffer.alloc(HEAD_SLOT_BYTES);
    Buffer.from(`${JSON.stringify(envelope)}\n`).copy(slot);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, slot);
    assert.deepEqual(new HeadFile(path, 'ses_h', signer).read(), { seq: 5, digest: digestOf('d') });
    assert.throws(() => new HeadFile(path, 'ses_h', setup('x').signer).read(), HeadFileError);
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
