/**
 * RFC 3339 date-times as the AHP `time` field uses them. Oracles: the examples of RFC 3339 §5.8,
 * its §5.6 grammar and §5.7 restrictions (written out below), and the independent grammar in
 * messages-oracle.ts, compared on systematic mutations of a valid time.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isRfc3339DateTime } from '../../src/ahp/messages/formats.js';
import { oracleDateTime } from './messages-oracle.js';

test('RFC 3339 §5.8 examples and §5.6/§5.7 edge cases', () => {
  const valid = [
    '1985-04-12T23:20:50.52Z',
    '1996-12-19T16:39:57-08:00',
    '1990-12-31T23:59:60Z',
    '1990-12-31T15:59:60-08:00',
    '1937-01-01T12:00:27.87+00:20',
    '2024-02-29T00:00:00Z',
    '2000-02-29T00:00:00Z',
    '2026-01-01t00:00:00z',
    '2026-12-31T23:59:59.123456789+23:59',
  ];
  const invalid = [
    '',
    '2026-01-01',
    '2026-01-01T00:00:00',
    '2026-01-01 00:00:00Z',
    '2026-1-01T00:00:00Z',
    '2026-01-01T00:00:00+0100',
    '2026-01-01T00:00:00.Z',
    '2026-01-01T24:00:00Z',
    '2026-01-01T00:60:00Z',
    '2026-01-01T00:00:61Z',
    '2026-13-01T00:00:00Z',
    '2026-00-10T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-02-29T00:00:00Z',
    '1900-02-29T00:00:00Z',
    '2026-01-01T00:00:00Z ',
    '2026-01-01T00:00:00+24:00',
    '1990-12-31T23:59:60+01:00',
    '2026-06-30T12:59:60Z',
    '２026-01-01T00:00:00Z',
  ];
  for (const text of valid) assert.equal(isRfc3339DateTime(text), true, text);
  for (const text of invalid) assert.equal(isRfc3339DateTime(text), false, text);
});

// The independent grammar leaves out the §5.7 leap-second restriction (checked by the examples
// above), so the mutated time has no second 60 to begin with.
test('agrees with the independent grammar on every one-character change of a valid time', () => {
  const base = '1996-02-29T16:39:57.5-08:00';
  const alphabet = '0123456789-+:.TtZz x';
  let compared = 0;
  for (let i = 0; i <= base.length; i++) {
    for (const c of alphabet) {
      for (const text of [base.slice(0, i) + c + base.slice(i + 1), base.slice(0, i) + c + base.slice(i)]) {
        assert.equal(isRfc3339DateTime(text), oracleDateTime(text), JSON.stringify(text));
        compared++;
      }
    }
    const dropped = base.slice(0, i) + base.slice(i + 1);
    assert.equal(isRfc3339DateTime(dropped), oracleDateTime(dropped), JSON.stringify(dropped));
  }
  assert.ok(compared > 1000);
});
