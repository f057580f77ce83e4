/**
 * bin/tally.js runs the bundled CLI (dist/cli, scripts/build-bundles.mjs): a command loads the
 * bundle's entry and chunks, not the modules tsc wrote under dist/src — except the files the
 * bundle locates as those modules would (the hook shim's bin/tally.js, the log verifier's worker).
 * Without the bundle (a build by tsc alone) it runs dist/src as before.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tempDir } from '../temp.js';
import { runProcess, TALLY_BIN } from './tally-process.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Runs `bin argv…` with a module hook that lists every file the ES module loader loads. */
async function loaded(
  bin: string,
  argv: string[],
  cwd: string,
): Promise<{ code: number | null; urls: string[] }> {
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
  return { code: ran.code, urls: urls.filter((u) => u !== pathToFileURL(register).href) };
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

  it('without the bundle (a build by tsc alone), runs the modules tsc wrote', async () => {
    const tree = tempDir('tally-cli-nobundle-');
    mkdirSync(join(tree, 'bin'));
    for (const f of ['tally.js', 'package.json']) copyFileSync(join(ROOT, 'bin', f), join(tree, 'bin', f));
    mkdirSync(join(tree, 'dist'));
    symlinkSync(join(ROOT, 'dist', 'src'), join(tree, 'dist', 'src'));
    symlinkSync(join(ROOT, 'package.json'), join(tree, 'package.json'));
    symlinkSync(join(ROOT, 'node_modules'), join(tree, 'node_modules'));
    const { urls } = await loaded(join(tree, 'bin', 'tally.js'), ['--help'], tree);
    assert.ok(
      urls.some((u) => u.endsWith('/dist/src/cli/main.js')),
      `dist/src/cli/main.js loaded: ${urls.join(', ')}`,
    );
    assert.ok(!urls.some((u) => u.includes('/dist/cli/')));
  });
});
