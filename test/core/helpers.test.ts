/** The shared core helpers: JSON pointers (RFC 6901 §3–4 examples), the line splitter, the version. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { tallyHome } from '../../src/core/home.js';
import { childPointer, isJsonObject, pointerOf, pointerToken, pointerTokens } from '../../src/core/json.js';
import { LineSplitter, LineTooLongError } from '../../src/core/lines.js';
import { TALLY_VERSION } from '../../src/core/version.js';

describe('JSON pointers', () => {
  it('escape and unescape reference tokens as RFC 6901 says (its examples)', () => {
    // RFC 6901 §5: "/a~1b" names "a/b", "/m~0n" names "m~n".
    assert.equal(pointerToken('a/b'), 'a~1b');
    assert.equal(pointerToken('m~n'), 'm~0n');
    assert.equal(pointerToken('~/'), '~0~1');
    assert.equal(childPointer('/foo', 0), '/foo/0');
    assert.equal(pointerOf(['a/b', 'm~n', '']), '/a~1b/m~0n/');
    assert.deepEqual(pointerTokens('/a~1b/m~0n/'), ['a/b', 'm~n', '']);
    assert.deepEqual(pointerTokens(''), []);
    // "~01" is "~1" unescaped once, never "/".
    assert.deepEqual(pointerTokens('/~01'), ['~1']);
  });

  it('an object is neither null nor an array', () => {
    assert.equal(isJsonObject({}), true);
    assert.equal(isJsonObject([]), false);
    assert.equal(isJsonObject(null), false);
    assert.equal(isJsonObject('x'), false);
  });
});

describe('line splitter', () => {
  const split = (chunks: string[], limit: number) => {
    const splitter = new LineSplitter(limit);
    const out: [string, number][] = [];
    for (const chunk of chunks) splitter.push(Buffer.from(chunk), (line, at) => out.push([String(line), at]));
    const rest = splitter.end();
    return { out, rest: rest ? [String(rest.line), rest.offset] : null };
  };

  it('gives each line with its byte offset across chunk boundaries, and the unterminated rest', () => {
    assert.deepEqual(split(['ab\ncd', 'e\n\nf'], 10), {
      out: [
        ['ab', 0],
        ['cde', 3],
        ['', 7],
      ],
      rest: ['f', 8],
    });
  });

  it('hands each line over with its newline too, as the bytes arrived, across chunk boundaries', () => {
    const splitter = new LineSplitter(10);
    const raws: string[] = [];
    for (const chunk of ['ab\r\ncd', 'e\n\n', 'f']) {
      splitter.push(Buffer.from(chunk), (line, _at, raw) => {
        assert.equal(String(raw), `${String(line)}\n`);
        raws.push(String(raw));
      });
    }
    assert.deepEqual(raws, ['ab\r\n', 'cde\n', '\n']);
  });

  it('refuses a line past the limit as soon as the bytes arrive, naming where it starts', () => {
    const splitter = new LineSplitter(4);
    splitter.push(Buffer.from('ok\n'), () => {});
    assert.throws(
      () => splitter.push(Buffer.from('12345'), () => {}),
      (e: unknown) => e instanceof LineTooLongError && e.offset === 3 && e.code === 'line-too-long',
    );
    assert.doesNotThrow(() => split(['1234\n'], 4));
  });
});

describe('version and home', () => {
  it('the version constant is the one package.json states', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    assert.equal(TALLY_VERSION, pkg.version);
  });

  it('TALLY_HOME wins when set, an empty one falls back to ~/.tally, always absolute', () => {
    assert.equal(tallyHome({ TALLY_HOME: '/x/y' }), '/x/y');
    assert.match(tallyHome({ TALLY_HOME: '', HOME: '/h' }), /\/\.tally$/);
    assert.ok(tallyHome({ TALLY_HOME: 'rel' }).startsWith('/'));
  });
});
