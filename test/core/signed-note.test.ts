/**
 * C2SP signed notes and checkpoints. Oracles: the known-answer note of Go's sumdb/note tests (a
 * deterministic Ed25519 signature by the key "PeterNeumann"), and the C2SP spec's rules.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { generateKeyPair, toPrivateKey } from '../../src/core/keys.js';
import {
  NoteError,
  noteKeyId,
  noteVerifierKey,
  openNote,
  parseNote,
  parseNoteVerifierKey,
  signNote,
} from '../../src/core/signed-note.js';
import { formatCheckpoint, parseCheckpoint } from '../../src/core/tlog-tiles.js';

// golang.org/x/mod/sumdb/note: TestSign / TestOpen.
const PETER_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const TEXT =
  "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const PETER_SIG =
  '— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';
const ENOCH_SIG =
  '— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n';

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof NoteError, String(error));
    return error.code;
  }
  return 'no error';
}

describe('signed notes', () => {
  it('signs byte for byte as Go sumdb/note does, and derives its verifier key', () => {
    // The Go private key text is base64(0x01 || seed).
    const seed = Buffer.from('AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz', 'base64').subarray(1);
    const key = toPrivateKey(seed);
    assert.equal(signNote(TEXT, 'PeterNeumann', key), `${TEXT}\n${PETER_SIG}`);
    assert.equal(noteVerifierKey('PeterNeumann', key), PETER_VKEY);
    assert.equal(noteKeyId('PeterNeumann', key), 0xc74f20a3);
  });

  it('opens a note with the known key and ignores an unknown one', () => {
    const peter = parseNoteVerifierKey(PETER_VKEY);
    const opened = openNote(`${TEXT}\n${PETER_SIG}${ENOCH_SIG}`, [peter]);
    assert.equal(opened.text, TEXT);
    assert.deepEqual(opened.verified, [{ name: 'PeterNeumann', keyId: 0xc74f20a3 }]);
    assert.deepEqual(
      opened.unknown.map((s) => s.name),
      ['EnochRoot'],
    );
  });

  it('refuses a changed text, an unknown signer only, and a bad signature from a known key', () => {
    const peter = parseNoteVerifierKey(PETER_VKEY);
    assert.equal(
      code(() => openNote(`${TEXT.replace('answer', 'Answer')}\n${PETER_SIG}`, [peter])),
      'bad-signature',
    );
    assert.equal(
      code(() => openNote(`${TEXT}\n${ENOCH_SIG}`, [peter])),
      'unverified',
    );
    const other = generateKeyPair().privateKey;
    const forged = signNote(TEXT, 'PeterNeumann', other);
    // Same name, other key: a different key ID, so it is an unknown signature, not a known one.
    assert.equal(
      code(() => openNote(forged, [peter])),
      'unverified',
    );
  });

  it('refuses grammar the spec forbids', () => {
    assert.equal(
      code(() => parseNote(`${TEXT}${PETER_SIG}`)),
      'malformed',
    ); // no blank line
    assert.equal(
      code(() => parseNote(`${TEXT}\n— PeterNeumann not!base64\n`)),
      'malformed',
    );
    assert.equal(
      code(() => parseNote(`a\tb\n\n${PETER_SIG}`)),
      'malformed',
    ); // control character
    assert.equal(
      code(() => parseNote(`${TEXT}\n${PETER_SIG.slice(0, -1)}`)),
      'malformed',
    ); // no final newline
    assert.equal(
      code(() => parseNoteVerifierKey(PETER_VKEY.replace('c74f20a3', 'c74f20a4'))),
      'bad-key',
    );
    assert.equal(
      code(() => signNote('no newline', 'x', generateKeyPair().privateKey)),
      'malformed',
    );
    assert.equal(
      code(() => noteKeyId('has space', generateKeyPair().publicKey)),
      'bad-name',
    );
  });
});

describe('checkpoints', () => {
  it('reads and writes the C2SP example body', () => {
    const body = 'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';
    const c = parseCheckpoint(body);
    assert.equal(c.origin, 'example.com/behind-the-sofa');
    assert.equal(c.size, 20852163);
    assert.equal(c.root.length, 32);
    assert.equal(formatCheckpoint(c), body);
  });

  it('refuses sizes with leading zeros, short roots and empty extension lines', () => {
    const root = Buffer.alloc(32).toString('base64');
    assert.throws(() => parseCheckpoint(`o\n012\n${root}\n`), /decimal/);
    assert.throws(() => parseCheckpoint('o\n1\nAAAA\n'), /32 bytes/);
    assert.throws(() => parseCheckpoint(`o\n1\n${root}\n\n`), /non-empty/);
    assert.throws(() => parseCheckpoint(`o\n1\n`), /three lines/);
  });
});
