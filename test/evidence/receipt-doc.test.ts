import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { canonicalize, parseJson } from '../../src/core/canonical.js';
import { composeReceipt, receiptBytes } from '../../src/evidence/receipt/receipt.js';
import type { EventRecord } from '../../src/evidence/record/record.js';

const DOC = readFileSync(new URL('../../../docs/receipt.md', import.meta.url), 'utf8');

/** The JSON block that follows `<!-- example:<name> -->` in docs/receipt.md. */
function example(name: string): unknown {
  const match = new RegExp(`<!-- example:${name} -->\\s*\`\`\`json\\n([\\s\\S]*?)\\n\`\`\``).exec(DOC);
  assert.ok(match?.[1], `docs/receipt.md has no example:${name} block`);
  return parseJson(match[1]);
}

describe('docs/receipt.md example', () => {
  it('composing the documented records gives the documented receipt, byte for byte', () => {
    const records = example('records') as EventRecord[];
    const expected = canonicalize(example('receipt'));
    const actual = receiptBytes(composeReceipt(records, '0'.repeat(64))).toString('utf8');
    assert.equal(actual, expected);
  });
});
