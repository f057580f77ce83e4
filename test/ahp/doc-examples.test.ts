/**
 * docs/ahp.md cannot drift: every fenced `sh` block that starts with `tally ahp` is run exactly as
 * written, through /bin/sh, as a real process. The working directory sits beside a link to the
 * shared corpus (so `../shared/ahp/...` paths resolve as they do from the repository root) and
 * holds the small files the page itself defines in `json file=NAME` blocks. A `# exit N` line
 * states the expected exit code (default 0); with `--json`, stdout must be one JSON document;
 * a stdio server's stdout must be JSON-RPC lines.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { tempDir } from './transport-helpers.js';

const DOC = fileURLToPath(new URL('../../../docs/ahp.md', import.meta.url));
const TALLY = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));
const SHARED = fileURLToPath(new URL('../../../../shared/', import.meta.url));

interface Example {
  command: string;
  exit: number;
}

function fenced(text: string, info: RegExp): { info: string; body: string }[] {
  const out: { info: string; body: string }[] = [];
  const fence = /^```([^\n]*)\n([\s\S]*?)^```$/gm;
  for (let m = fence.exec(text); m !== null; m = fence.exec(text)) {
    if (info.test(m[1] ?? '')) out.push({ info: m[1] ?? '', body: m[2] ?? '' });
  }
  return out;
}

const doc = readFileSync(DOC, 'utf8');
const files = fenced(doc, /^json file=\S+$/).map((b) => ({
  name: b.info.slice('json file='.length),
  body: b.body,
}));
const examples: Example[] = fenced(doc, /^sh$/)
  .filter((b) => b.body.startsWith('tally ahp'))
  .map((b) => {
    const lines = b.body.split('\n').filter((l) => l.trim() !== '');
    const exit = lines.map((l) => /^# exit (\d+)$/.exec(l.trim())).find((m) => m !== null);
    return { command: lines.filter((l) => !l.startsWith('#')).join('\n'), exit: exit ? Number(exit[1]) : 0 };
  });

function workspace(): { cwd: string; path: string } {
  const root = tempDir('tally-ahp-doc-');
  const cwd = join(root, 'work');
  const bin = join(root, 'bin');
  mkdirSync(cwd);
  mkdirSync(bin);
  symlinkSync(SHARED, join(root, 'shared'));
  const wrapper = join(bin, 'tally');
  writeFileSync(
    wrapper,
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(TALLY)} "$@"\n`,
  );
  chmodSync(wrapper, 0o755);
  for (const file of files) writeFileSync(join(cwd, file.name), file.body);
  return { cwd, path: `${bin}:${process.env.PATH ?? ''}` };
}

describe('docs/ahp.md CLI examples', { timeout: 120_000 }, () => {
  test('the page shows every subcommand and defines the files its examples use', () => {
    for (const sub of ['validate', 'capabilities', 'serve', 'dispatch']) {
      assert.ok(
        examples.some((e) => e.command.startsWith(`tally ahp ${sub}`)),
        `an example of tally ahp ${sub}`,
      );
    }
    assert.deepEqual(files.map((f) => f.name).sort(), [
      'discovery.jsonl',
      'event.json',
      'registration.json',
      'rules.json',
    ]);
  });

  const { cwd, path } = workspace();
  for (const example of examples) {
    test(example.command, () => {
      const run = spawnSync('/bin/sh', ['-c', example.command], {
        cwd,
        env: { ...process.env, PATH: path },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(run.status, example.exit, `exit code; stderr:\n${run.stderr}`);
      if (example.command.includes('--json')) assert.doesNotThrow(() => JSON.parse(run.stdout), run.stdout);
      if (example.command.includes('serve --stdio')) {
        const lines = run.stdout.trimEnd().split('\n');
        assert.ok(lines.length > 0);
        for (const line of lines) assert.equal((JSON.parse(line) as { jsonrpc: unknown }).jsonrpc, '2.0');
      }
    });
  }
});
