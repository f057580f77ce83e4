/**
 * The strict JSON reader beyond test/core/canonical.test.ts. Oracles: JSON.parse for every text
 * both accept (the official AHP fixtures and interop files, read in place), RFC 8259's grammar,
 * and byte offsets / JSON pointers (RFC 6901) worked out by hand for each bad input.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CanonicalError, parseJson } from '../../src/core/canonical.js';

const AHP = new URL('../../../../shared/ahp/', import.meta.url);

function jsonFiles(dir: URL): URL[] {
  const out: URL[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const url = new URL(entry.name + (entry.isDirectory() ? '/' : ''), dir);
    if (entry.isDirectory()) out.push(...jsonFiles(url));
    else if (entry.name.endsWith('.json')) out.push(url);
  }
  return out;
}

function fails(text: string, code: string, byte: number, pointer: string): void {
  assert.throws(
    () => parseJson(text),
    (e: unknown) => {
      assert.ok(e instanceof CanonicalError, String(e));
      assert.deepEqual(
        [e.code, e.detail?.byte, e.detail?.pointer],
        [code, byte, pointer],
        `${text}: ${e.message}`,
      );
      if (pointer) assert.ok(e.message.includes(`(in ${pointer})`));
      return true;
    },
  );
}

describe('strict JSON reader', () => {
  test('reads every official AHP JSON file exactly as JSON.parse does', () => {
    const files = jsonFiles(AHP);
    assert.ok(files.length > 100);
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      assert.deepStrictEqual(parseJson(text), JSON.parse(text), file.pathname);
    }
  });

  test('escapes, numbers and whitespace per RFC 8259', () => {
    const text =
      ' {"a\\"b":"\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00", "n":[-0,0.5,1E3,2e-2,-12.75e+1] ,"t":true,"f":false,"z":null}\r\n';
    assert.deepStrictEqual(parseJson(text), JSON.parse(text));
    assert.ok(Object.is(parseJson('-0') as number, -0));
    assert.equal(parseJson('9007199254740991'), 9007199254740991);
    assert.equal(parseJson('1e300'), 1e300, 'a float spelling may be large');
  });

  test('errors name the byte and the pointer of the innermost container', () => {
    fails('{"a":[1,{"b":tru}]}', 'syntax', 13, '/a/1/b');
    fails('{"a":[1,{"b":true}}', 'syntax', 18, '/a');
    fails('{"a/b":{"c~d":[01]}}', 'syntax', 16, '/a~1b/c~0d');
    fails('[{"x":1,"\\u0078":2}]', 'duplicate-key', 8, '/0');
    fails('{"é":{"k":9007199254740993}}', 'unsafe-integer', 11, '/é/k'); // é is two bytes
    fails('[1,2,"\\ud800"]', 'lone-surrogate', 5, '/2');
    fails('{"a":"x\ty"}', 'syntax', 7, '/a');
    fails('{"a":1', 'syntax', 6, '');
    fails('[1e999]', 'non-finite', 1, '/0');
  });

  test('"__proto__" stays an ordinary own member, and counts for duplicates', () => {
    const value = parseJson('{"a":{"__proto__":[1]}}') as { a: Record<string, unknown> };
    assert.equal(Object.getPrototypeOf(value.a), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(value.a, '__proto__')?.value, [1]);
    fails('{"__proto__":1,"__proto__":2}', 'duplicate-key', 15, '');
  });
});
