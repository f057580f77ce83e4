/** The docs' examples run, so they cannot drift from the code. */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { describe, it } from 'node:test';

function fenced(markdown: string, lang: string): string[] {
  return [...markdown.matchAll(new RegExp('```' + lang + '\\n([\\s\\S]*?)```', 'g'))].map((m) => m[1]!);
}

describe('docs/api.md', () => {
  it('its example runs against the package root and prints what the doc says', () => {
    const doc = readFileSync('docs/api.md', 'utf8');
    const example = fenced(doc, 'js').at(-1)!;
    const expected = fenced(doc, 'text').at(-1)!;
    // A file inside the package so that `import … from 'tally'` resolves to this package.
    const file = 'dist/api-example.mjs';
    writeFileSync(file, example);
    try {
      assert.equal(execFileSync(process.execPath, [file], { encoding: 'utf8' }), expected);
    } finally {
      rmSync(file);
    }
  });
});
