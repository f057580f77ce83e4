/** C2SP tlog-tiles paths and entry bundles; oracles: the spec's examples and Go sumdb/tlog's path table. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeEntryBundle, parseEntryBundle, parseTilePath, tilePath } from '../../src/core/tlog-tiles.js';

describe('tile paths', () => {
  it('writes indexes in x-prefixed groups of three, as the spec example', () => {
    assert.equal(tilePath({ level: 0, index: 1234067, width: 256 }), 'tile/0/x001/x234/067');
    assert.equal(tilePath({ level: 2, index: 0, width: 1 }), 'tile/2/000.p/1');
    assert.equal(tilePath({ level: 'entries', index: 1000, width: 17 }), 'tile/entries/x001/000.p/17');
  });

  it('reads what Go sumdb/tlog writes, less its height element', () => {
    // Go's table (tlog_test.go) with H dropped: tile/3/5/x123/x456/078.p/2 → level 5.
    assert.deepEqual(parseTilePath('tile/5/x123/x456/078.p/2'), { level: 5, index: 123456078, width: 2 });
    assert.deepEqual(parseTilePath('tile/0/x003/x057/500'), { level: 0, index: 3057500, width: 256 });
    assert.deepEqual(parseTilePath('tile/entries/001'), { level: 'entries', index: 1, width: 256 });
  });

  it('refuses paths that are not canonical', () => {
    for (const bad of [
      'tile/5/123/456/078', // groups without x
      'tile/0/x000/001', // leading zero group
      'tile/0/01', // two digits
      'tile/64/000', // level over 63
      'tile/00/000', // level with a leading zero
      'tile/0/000.p/0',
      'tile/0/000.p/256',
      'tile/0/000.p/05',
      'tile/data/000',
      '/tile/0/000',
    ])
      assert.throws(() => parseTilePath(bad), /tile/, bad);
    for (let n = 0; n < 3000; n += 7) {
      const path = tilePath({ level: 1, index: n * 997, width: (n % 255) + 1 });
      assert.deepEqual(parseTilePath(path), { level: 1, index: n * 997, width: (n % 255) + 1 });
    }
  });
});

describe('entry bundles', () => {
  it('prefixes each entry with its uint16 big-endian length', () => {
    const bundle = encodeEntryBundle([Buffer.from('ab'), Buffer.alloc(0), Buffer.alloc(300, 1)]);
    assert.equal(bundle.subarray(0, 4).toString('hex'), '00026162');
    assert.equal(bundle.subarray(4, 6).toString('hex'), '0000');
    assert.equal(bundle.subarray(6, 8).toString('hex'), '012c');
    assert.deepEqual(
      parseEntryBundle(bundle).map((e) => e.length),
      [2, 0, 300],
    );
    assert.throws(() => parseEntryBundle(bundle.subarray(0, bundle.length - 1)), /ends inside/);
    assert.throws(() => encodeEntryBundle([Buffer.alloc(65536)]), /65535/);
  });
});
