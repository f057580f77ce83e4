/**
 * bin/tally.js runs the bundled CLI (dist/cli, scripts/build-bundles.mjs): a command loads the
 * bundle's entry and chunks, not the modules tsc wrote under dist/src — except the files the
 * bundle locates as those modules would (the hook shim's bin/tally.js, the log verifier's worker).
 * Without the bundle (a build by tsc alone), or with one older than what tsc last wrote, it runs
 * dist/src as before.
 */
import assert from 'node:assert/strict';
import {
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tempDir } from '../temp.js';
import { runProcess, TALLY_BIN } from './tally-process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs `bin argv…` with a module hook that lists every file the ES module loader loads. */
async function loaded(bin: string, argv: string[], cwd: string): Promise<{ urls: string[] }> {
  const dir = tempDir('tally-cli-bundle-');
  const out = join(dir, 'loaded.txt');
  writeFileSync(out, '');
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  if (url.startsWith('file:')) appendFileSync(${JSON.stringify(out)}, url + '\\n');
  return next(url, context);
}
`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  const home = join(dir, 'home');
  const ran = await runProcess(process.execPath, ['--import', pathToFileURL(register).href, bin, ...argv], {
    cwd,
    env: { PATH: process.env.PATH, HOME: dir, TALLY_HOME: home },
  });
  assert.equal(ran.code, 0, ran.stderr);
  const urls = readFileSync(out, 'utf8').split('\n').filter(Boolean);
  return { urls: urls.filter((u) => u !== pathToFileURL(register).href) };
}

describe('the bundled CLI', () => {
  it('a command loads the bundle, not the modules under dist/src', async () => {
    const project = tempDir('tally-cli-bundle-project-');
    const { urls } = await loaded(TALLY_BIN, ['init'], project);
    const cli = pathToFileURL(join(ROOT, 'dist', 'cli')).href;
    const ours = urls.filter((u) => u.startsWith(pathToFileURL(ROOT).href) && !u.includes('/node_modules/'));
    assert.ok(
      ours.some((u) => u === `${cli}/main.js`),
      `dist/cli/main.js loaded: ${ours.join(', ')}`,
    );
    assert.deepEqual(
      ours.filter((u) => !u.startsWith(`${cli}/`)),
      [pathToFileURL(TALLY_BIN).href],
      'nothing of Tally outside the bundle but bin/tally.js',
    );
  });

  /** bin/ copied beside links to the real dist/src and node_modules; `cli`: what dist/cli holds. */
  function tree(cli: 'none' | 'stale'): string {
    const dir = tempDir('tally-cli-tree-');
    mkdirSync(join(dir, 'bin'));
    for (const f of ['tally.js', 'package.json']) copyFileSync(join(ROOT, 'bin', f), join(dir, 'bin', f));
    mkdirSync(join(dir, 'dist'));
    symlinkSync(join(ROOT, 'dist', 'src'), join(dir, 'dist', 'src'));
    symlinkSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    if (cli === 'stale') {
      // The bundle as the last full build left it, older than what tsc wrote since.
      mkdirSync(join(dir, 'dist', 'cli'));
      for (const f of readdirSync(join(ROOT, 'dist', 'cli')))
        if (f === 'main.js') copyFileSync(join(ROOT, 'dist', 'cli', f), join(dir, 'dist', 'cli', f));
        else symlinkSync(join(ROOT, 'dist', 'cli', f), join(dir, 'dist', 'cli', f));
      const compiled = statSync(join(ROOT, 'dist', 'src', 'cli', 'main.js')).mtimeMs;
      const older = new Date(compiled - 3_600_000);
      utimesSync(join(dir, 'dist', 'cli', 'main.js'), older, older);
    }
    return dir;
  }

  for (const [cli, why] of [
    ['none', 'without the bundle (a build by tsc alone)'],
    ['stale', 'with a bundle older than what tsc wrote since (tsc alone after a full build)'],
  ] as const)
    it(`${why}, runs the modules tsc wrote`, async () => {
      const dir = tree(cli);
      const { urls } = await loaded(join(dir, 'bin', 'tally.js'), ['--help'], dir);
      assert.ok(
        urls.some((u) => u.endsWith('/dist/src/cli/main.js')),
        `dist/src/cli/main.js loaded: ${urls.join(', ')}`,
      );
      assert.ok(!urls.some((u) => u.includes('/dist/cli/')));
    });
});
