import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CanonicalError, canonicalize, canonicalNumber, parseJson } from '../../src/core/canonical.js';

function fromBits(hex: string): number {
  return Buffer.from(hex, 'hex').readDoubleBE(0);
}

describe('RFC 8785 canonical JSON', () => {
  it('serialises the RFC §3.2.2 example exactly', () => {
    const input =
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],' +
      ' "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}';
    const expected =
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],' +
      '"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}';
    assert.equal(canonicalize(parseJson(input)), expected);
  });

  it('sorts keys by UTF-16 code units (RFC §3.2.3 example)', () => {
    const input =
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One",' +
      '"\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}';
    const expected =
      '{"\\r":"Carriage Return","1":"One","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis",' +
      '"\u20ac":"Euro Sign","\ud83d\ude00":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}';
    assert.equal(canonicalize(parseJson(input)), expected);
  });

  it('serialises the RFC Appendix B number samples', () => {
    const samples: [string, string][] = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['ffefffffffffffff', '-1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['c340000000000000', '-9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4e', '999999999999999700000'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555555', '333333333.3333333'],
      ['41b3de4355555556', '333333333.3333334'],
      ['41b3de4355555557', '333333333.33333343'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ];
    for (const [bits, text] of samples) assert.equal(canonicalNumber(fromBits(bits)), text, bits);
    assert.throws(() => canonicalNumber(fromBits('7fffffffffffffff')), CanonicalError);
    assert.throws(() => canonicalNumber(fromBits('7ff0000000000000')), CanonicalError);
  });

  it('escapes only what JCS escapes', () => {
    assert.equal(canonicalize('\u0000\u001f\u007f\u2028/<>é'), '"\\u0000\\u001f\u007f\u2028/<>é"');
    assert.equal(canonicalize('\b\t\n\f\r"\\'), '"\\b\\t\\n\\f\\r\\"\\\\"');
  });

  it('refuses what has no faithful canonical form, naming where', () => {
    const cases: [unknown, string, string][] = [
      [{ a: [1, Number.NaN] }, 'non-finite', '/a/1'],
      [{ b: Number.POSITIVE_INFINITY }, 'non-finite', '/b'],
      [{ c: 2 ** 53 }, 'unsafe-integer', '/c'],
      [{ d: -(2 ** 60) }, 'unsafe-integer', '/d'],
      [{ e: 'x\ud800y' }, 'lone-surrogate', '/e'],
      [{ '\udc00': 1 }, 'lone-surrogate', '/\udc00'],
      [{ f: 10n }, 'not-json', '/f'],
      [{ g: new Uint8Array(2) }, 'not-json', '/g'],
    ];
    for (const [value, code, pointer] of cases) {
      assert.throws(
        () => canonicalize(value),
        (error: unknown) =>
          error instanceof CanonicalError && error.code === code && error.detail?.pointer === pointer,
        `${code} at ${pointer}`,
      );
    }
    assert.equal(canonicalize(2 ** 53 - 1), '9007199254740991');
    assert.equal(canonicalize(1.5e300), '1.5e+300');
    assert.equal(canonicalize(1e21), '1e+21');
    assert.throws(() => canonicalize(999999999999999900000), CanonicalError);
  });

  it('refuses a cyclic value with a CanonicalError, not a crash', () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    assert.throws(
      () => canonicalize(cyclic),
      (e: unknown) => e instanceof CanonicalError && e.code === 'not-json',
    );
  });

  it('orders names that look like array indexes by code units too, and keeps __proto__ a member', () => {
    // An engine lists integer-like names first in numeric order whatever their insertion order;
    // RFC 8785 §3.2.3 orders every name by its UTF-16 code units.
    assert.equal(canonicalize({ a: 1, 9: 2, 10: 3, '01': 4 }), '{"01":4,"10":3,"9":2,"a":1}');
    assert.equal(canonicalize({ x: [{ 2: true, 1: false }] }), '{"x":[{"1":false,"2":true}]}');
    assert.equal(
      canonicalize(parseJson('{"b":1,"__proto__":{"z":2,"y":1}}')),
      '{"__proto__":{"y":1,"z":2},"b":1}',
    );
  });

  it('agrees with the RFC rules written out plainly, over generated values', () => {
    // The rules of §3.2 as their own small program: members sorted by code units, strings and
    // numbers in ECMAScript's JSON form.
    const plain = (v: unknown): string => {
      if (Array.isArray(v)) return `[${v.map(plain).join(',')}]`;
      if (v !== null && typeof v === 'object') {
        const names = Object.keys(v).sort((a, b) => {
          for (let i = 0; i < Math.min(a.length, b.length); i++)
            if (a.charCodeAt(i) !== b.charCodeAt(i)) return a.charCodeAt(i) - b.charCodeAt(i);
          return a.length - b.length;
        });
        return `{${names.map((n) => `${JSON.stringify(n)}:${plain((v as Record<string, unknown>)[n])}`).join(',')}}`;
      }
      return JSON.stringify(v);
    };
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed;
    };
    const names = [
      'a',
      'b',
      'Z',
      '9',
      '10',
      '0',
      '\u00e9',
      '\u20ac',
      '\ud83d\ude00',
      'key',
      '',
      ' ',
      'a1',
      '1a',
    ];
    const make = (depth: number): unknown => {
      const r = next() % 7;
      if (depth > 3 || r === 0) return [1.5, -0, 1e21, 'x\u2028"\\', true, null][next() % 6];
      if (r < 3) return Array.from({ length: next() % 4 }, () => make(depth + 1));
      const out: Record<string, unknown> = {};
      for (let i = next() % 6; i > 0; i--) out[names[next() % names.length]!] = make(depth + 1);
      return out;
    };
    for (let i = 0; i < 500; i++) {
      const value = JSON.parse(JSON.stringify(make(0)));
      assert.equal(canonicalize(value), plain(value));
    }
  });

  it('omits undefined members and nests deterministically', () => {
    assert.equal(
      canonicalize({ b: [{ z: 1, a: undefined, y: { c: 3, b: 2 } }], a: null }),
      '{"a":null,"b":[{"y":{"b":2,"c":3},"z":1}]}',
    );
  });
});

describe('strict JSON parser', () => {
  it('parses ordinary JSON like JSON.parse', () => {
    const text = '{"a":[1,-2.5e3,true,false,null,"\\u00e9\\n"],"b":{"c":{}},"d":[]}';
    assert.deepEqual(parseJson(text), JSON.parse(text));
  });

  it('rejects duplicate keys with byte offset and pointer', () => {
    assert.throws(
      () => parseJson('{"x":{"é":1,"é":2}}'),
      (e: unknown) =>
        e instanceof CanonicalError &&
        e.code === 'duplicate-key' &&
        e.detail?.byte === 13 &&
        e.detail?.pointer === '/x',
    );
  });

  it('rejects lone surrogates, unsafe integers, bad syntax', () => {
    const bad: [string, string][] = [
      ['"\\ud800"', 'lone-surrogate'],
      ['"\\udc00\\ud800"', 'lone-surrogate'],
      ['9007199254740993', 'unsafe-integer'],
      ['1e400', 'non-finite'],
      ['{"a":1,}', 'syntax'],
      ['[1 2]', 'syntax'],
      ['01', 'syntax'],
      ['"a\nb"', 'syntax'],
      ['{"a":1} x', 'syntax'],
      ['', 'syntax'],
      ['"\\x"', 'syntax'],
      ['tru', 'syntax'],
    ];
    for (const [text, code] of bad) {
      assert.throws(
        () => parseJson(text),
        (e: unknown) => e instanceof CanonicalError && e.code === code,
        text,
      );
    }
    assert.equal(parseJson('"\\ud83d\\ude00"'), '😀');
    assert.equal(parseJson('12345678.5'), 12345678.5);
  });

  it('refuses nesting deep enough to exhaust the stack with a CanonicalError', () => {
    const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
    assert.throws(
      () => parseJson(deep),
      (e: unknown) => e instanceof CanonicalError && e.code === 'syntax',
    );
  });

  it('keeps __proto__ as an ordinary key', () => {
    const value = parseJson('{"__proto__":{"polluted":true}}') as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(value), Object.prototype);
    assert.deepEqual(Object.keys(value), ['__proto__']);
    assert.equal(canonicalize(value), '{"__proto__":{"polluted":true}}');
  });

  it('rejects invalid UTF-8 bytes', () => {
    assert.throws(() => parseJson(new Uint8Array([0x22, 0xff, 0x22])));
  });

  it('round-trips: canonicalize(parse(canonicalize(v))) is stable', () => {
    const value = { z: [0.1, -0, 1e21, 'ü'], a: { '10': 1, '9': 2, A: 3, a: 4 } };
    const once = canonicalize(value);
    assert.equal(canonicalize(parseJson(once)), once);
    assert.equal(once, '{"a":{"10":1,"9":2,"A":3,"a":4},"z":[0.1,0,1e+21,"ü"]}');
  });
});
