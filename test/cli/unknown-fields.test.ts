/** Fields and event types the AHP snapshot does not define are recorded as received, and said. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { jsonOut, makeProject } from './tally-process.js';

describe('unknown fields and types', () => {
  it('are kept in the signed record, and the CLI names the unknown fields', async () => {
    const p = makeProject('tally-unknown-');
    assert.equal((await p.tally(['init'])).code, 0);
    const session = jsonOut(await p.tally(['session', 'start', '--json'])).session as string;
    const event = {
      type: 'tool.before',
      call: { id: 'c1', vendorTrace: 'abc' },
      path: 'native',
      tool: {
        origin: 'native',
        name: 'Read',
        kind: 'read',
        input: { file_path: 'a' },
        futureField: { x: 1 },
      },
    };
    const ran = await p.tally(['session', 'event'], { stdin: JSON.stringify(event) });
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stderr, /\/call\/vendorTrace/);
    assert.match(ran.stderr, /\/tool\/futureField/);
    const custom = await p.tally(['session', 'event'], {
      stdin: JSON.stringify({ type: 'vendor.thing', detail: [1, 2] }),
    });
    assert.equal(custom.code, 0, custom.stderr);
    const records = readFileSync(join(p.root, '.tally/sessions', session, 'events.log'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(Buffer.from(JSON.parse(l).payload, 'base64').toString()));
    const tool = records.find((r) => r.event.type === 'tool.before');
    assert.equal(tool.event.call.vendorTrace, 'abc');
    assert.deepEqual(tool.event.tool.futureField, { x: 1 });
    assert.deepEqual(records.find((r) => r.event.type === 'vendor.thing').event.detail, [1, 2]);
    const close = await p.tally(['session', 'close', '--json']);
    const receipt = jsonOut(await p.tally(['receipt', 'show', jsonOut(close).package as string, '--json']));
    assert.ok(JSON.stringify(receipt.unknown).includes('vendor.thing'));
  });
});
