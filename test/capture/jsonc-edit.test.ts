/**
 * The in-place JSON editor: the text it writes holds exactly the value asked for (read back by the
 * same reader, and by JSON.parse once comments are gone), keeps every byte of what stays, and an
 * entry it added and then removed leaves the text as it was — through comments, trailing commas,
 * CRLF, tabs, one-line objects and arrays, and empty containers.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { plain, readJsonc } from '../../src/capture/jsonc.js';
import { editJsonc } from '../../src/capture/jsonc-edit.js';

const edit = (text: string, value: unknown) => editJsonc(text, readJsonc(text, 'jsonc'), value, 'jsonc');

/** Edits toward `value`, checks the value, and edits back toward the text's own value. */
function both(text: string, value: unknown): string {
  const out = edit(text, value);
  assert.deepEqual(plain(readJsonc(out, 'jsonc')), value);
  assert.equal(edit(out, plain(readJsonc(text, 'jsonc'))), text, 'back byte for byte');
  return out;
}

describe('editing JSON text in place', () => {
  it('adds members and items in the layout of their neighbours, and removes them again', () => {
    assert.equal(both('{\n  "a": 1\n}\n', { a: 1, b: [2] }), '{\n  "a": 1,\n  "b": [\n    2\n  ]\n}\n');
    assert.equal(both('{"a": 1}', { a: 1, b: { c: 2 } }), '{"a": 1, "b": {"c":2}}');
    assert.equal(both('{}', { a: 1 }), '{\n  "a": 1\n}');
    assert.equal(both('{\r\n\t"a": [1]\r\n}', { a: [1], b: 2 }), '{\r\n\t"a": [1],\r\n\t"b": 2\r\n}');
    assert.equal(
      both('{"args": ["x"], "command": "npx"}', { args: ['tally', '--', 'npx', 'x'], command: 'node' }),
      '{"args": ["tally", "--", "npx", "x"], "command": "node"}',
    );
    assert.equal(
      both('{\n  "args": [\n    "x"\n  ]\n}', { args: ['t', 'x'] }),
      '{\n  "args": [\n    "t",\n    "x"\n  ]\n}',
    );
  });

  it('keeps comments and trailing commas', () => {
    assert.equal(
      both('{\n  "a": 1, // about a\n  "b": [1, 2]\n}\n', { a: 1, b: [1, 2, 3], c: {} }),
      '{\n  "a": 1, // about a\n  "b": [1, 2, 3],\n  "c": {}\n}\n',
    );
    assert.equal(both('{\n  "a": 1,\n}', { a: 1, b: 2 }), '{\n  "a": 1,\n  "b": 2,\n}');
    assert.equal(both('{\n  // only a comment\n}', { b: 2 }), '{\n  // only a comment\n  "b": 2\n}');
    assert.equal(both('{\n  "a": 1 // last\n}', { a: 1, b: 2 }), '{\n  "a": 1, // last\n  "b": 2\n}');
  });

  it('removes an entry with its comma and its line, and keeps the comments of the others', () => {
    assert.equal(
      edit('{\n  "a": 1, // about a\n  // about b\n  "b": 2\n}', { b: 2 }),
      '{\n  // about b\n  "b": 2\n}',
    );
    assert.equal(edit('{"a": 1, "b": 2, "c": 3}', { a: 1, c: 3 }), '{"a": 1, "c": 3}');
    assert.equal(edit('[1, 2, 3]', [1, 3]), '[1, 3]');
    assert.equal(edit('[\n  1,\n  2\n]', [1]), '[\n  1\n]');
    assert.equal(edit('[\n  1,\n  2\n]', []), '[]');
  });

  it('edits a changed entry inside, replaces one of another kind, and leaves an equal text alone', () => {
    const text = '{\n  "hooks": {\n    "A": [{"x": 1}, {"y": 2}]\n  },\n  "n": 1\n}';
    assert.equal(
      edit(text, { hooks: { A: [{ x: 1 }] }, n: 'one' }),
      '{\n  "hooks": {\n    "A": [{"x": 1}]\n  },\n  "n": "one"\n}',
    );
    assert.equal(edit(text, plain(readJsonc(text))), text);
  });
});
