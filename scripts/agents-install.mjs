// Installs the real agent CLIs the agent tests run against, at the exact versions pinned in
// test/agents/pinned/ (package.json + package-lock.json), into a git-ignored cache folder:
// <repo>/.cache/agents/ unless TALLY_AGENT_CACHE names another. They stay out of the repository's
// own package.json: about 1.4 GB that only the agent tests need.
//
// Usage: node scripts/agents-install.mjs [--force | --check | --relock]
//   --force   reinstall even when the stamp matches
//   --check   install nothing; exit 0 when the cache holds the pinned set, 1 when it does not
//   --relock  regenerate test/agents/pinned/package-lock.json after a pin changes
// Progress goes to stderr. Exit 0 when the pinned agents are installed and each binary runs.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PINNED = join(REPO, 'test', 'agents', 'pinned');
const STAMP = '.tally-agents-stamp';

/** Each agent: its package and its command in node_modules/.bin (`--version` must print the pin). */
export const AGENTS = {
  'claude-code': { pkg: '@anthropic-ai/claude-code', bin: 'claude' },
  codex: { pkg: '@openai/codex', bin: 'codex' },
  'gemini-cli': { pkg: '@google/gemini-cli', bin: 'gemini' },
  'qwen-code': { pkg: '@qwen-code/qwen-code', bin: 'qwen' },
  opencode: { pkg: 'opencode-ai', bin: 'opencode' },
};

export function cacheDir() {
  return resolve(process.env.TALLY_AGENT_CACHE || join(REPO, '.cache', 'agents'));
}

/** The stamp names the exact lockfile and platform: a changed pin or another machine reinstalls. */
export function expectedStamp() {
  const h = createHash('sha256');
  for (const f of ['package.json', 'package-lock.json']) h.update(readFileSync(join(PINNED, f)));
  h.update(`${process.platform}-${process.arch}`);
  return h.digest('hex');
}

function say(text) {
  process.stderr.write(`agents-install: ${text}\n`);
}

function pinnedVersion(pkg) {
  return JSON.parse(readFileSync(join(PINNED, 'package.json'), 'utf8')).dependencies[pkg];
}

/** Runs each agent's `--version` (offline, isolated HOME) and returns the problems found. */
function verify(dir) {
  const problems = [];
  const home = join(dir, '.verify-home');
  mkdirSync(home, { recursive: true });
  for (const [name, { pkg, bin }] of Object.entries(AGENTS)) {
    const path = join(dir, 'node_modules', '.bin', bin);
    if (!existsSync(path)) {
      problems.push(`${name}: ${path} is missing`);
      continue;
    }
    const run = spawnSync(path, ['--version'], {
      encoding: 'utf8',
      timeout: 60_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, TMPDIR: home, NO_COLOR: '1' },
    });
    const out = `${run.stdout ?? ''}${run.stderr ?? ''}`.trim();
    const want = pinnedVersion(pkg);
    if (run.error || run.status !== 0 || !out.includes(want)) {
      const why = run.error ? run.error.message : `exit ${run.status}`;
      problems.push(
        `${name}: \`${bin} --version\` failed (${why}), printed: ${out.slice(0, 300) || '(nothing)'}`,
      );
    } else {
      say(`${name} ${want} runs (${out.split('\n')[0]})`);
    }
  }
  rmSync(home, { recursive: true, force: true });
  return problems;
}

/** True when the stamp names this lockfile and platform and every agent's command is still there. */
export function installedStampMatches(dir = cacheDir()) {
  try {
    if (readFileSync(join(dir, STAMP), 'utf8').trim() !== expectedStamp()) return false;
  } catch {
    return false;
  }
  return Object.values(AGENTS).every(({ bin }) => existsSync(join(dir, 'node_modules', '.bin', bin)));
}

export function install({ force = false } = {}) {
  const dir = cacheDir();
  if (!force && installedStampMatches(dir)) {
    say(`pinned agents already installed in ${dir} (lockfile stamp matches)`);
    return 0;
  }
  const started = Date.now();
  say(`installing the pinned agents into ${dir} with npm ci (about 1.4 GB; a few minutes when cold)`);
  mkdirSync(dir, { recursive: true });
  rmSync(join(dir, STAMP), { force: true });
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(PINNED, f), join(dir, f));
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  // Optional native add-ons some agents list (keytar, node-pty, audio capture) may fail to build
  // offline; npm tolerates that for optional dependencies, and the verify step below decides.
  const ci = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=http'], {
    cwd: dir,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });
  if (ci.error || ci.status !== 0) {
    const why = ci.error ? ci.error.message : `exit code ${ci.status}`;
    say(`FAILED: npm ci in ${dir} did not succeed (${why}).`);
    say(
      'The agent tests need the npm registry once; rerun `node scripts/agents-install.mjs` when it is reachable.',
    );
    return 1;
  }
  const problems = verify(dir);
  if (problems.length > 0) {
    say('FAILED: installed, but these agents do not run:');
    for (const p of problems) say(`  - ${p}`);
    return 1;
  }
  writeFileSync(join(dir, STAMP), `${expectedStamp()}\n`);
  say(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return 0;
}

// The registry these tests are run against may hold only some platform builds of a package (here:
// only linux-x64 of opencode's and a clipboard add-on's). npm then leaves those optional packages
// out of the lockfile, and `npm ci` refuses the lockfile as out of sync (npm 11 compares against
// an ideal tree that still holds the failed optional nodes). Relocking therefore lists each
// absent platform package as npm would, with the os/cpu/libc its name says, so that npm skips it
// on every other platform without fetching it.
const OS = [
  ['darwin', 'darwin'],
  ['linux', 'linux'],
  ['win32', 'win32'],
  ['windows', 'win32'],
  ['freebsd', 'freebsd'],
];
const CPU = ['arm64', 'x64', 'ia32', 'arm', 'ppc64', 's390x', 'riscv64', 'wasm32'];

function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const os = OS.find(([word]) => parts.includes(word))?.[1];
  const cpu = CPU.find((word) => parts.includes(word));
  if (!os || !cpu) return undefined;
  // Keys in the order npm writes them, so that a later relock leaves the file as it is.
  const libc = parts.includes('musl') ? ['musl'] : parts.includes('gnu') ? ['glibc'] : undefined;
  return libc ? { cpu: [cpu], libc, optional: true, os: [os] } : { cpu: [cpu], optional: true, os: [os] };
}

function relock() {
  say(`regenerating ${join(PINNED, 'package-lock.json')}`);
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const run = spawnSync(
    npm,
    ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'],
    {
      cwd: PINNED,
      stdio: ['ignore', 'inherit', 'inherit'],
    },
  );
  if (run.error || run.status !== 0) {
    say(`FAILED: npm install --package-lock-only (${run.error?.message ?? `exit ${run.status}`})`);
    return 1;
  }
  const file = join(PINNED, 'package-lock.json');
  const lock = JSON.parse(readFileSync(file, 'utf8'));
  const added = [];
  for (const [key, entry] of Object.entries(lock.packages)) {
    for (const [dep, spec] of Object.entries(entry.optionalDependencies ?? {})) {
      const nested = `${key ? `${key}/` : ''}node_modules/${dep}`;
      if (lock.packages[nested] || lock.packages[`node_modules/${dep}`]) continue;
      const platform = platformOf(dep);
      if (!platform || !/^\d+\.\d+\.\d+$/.test(spec)) {
        say(
          `FAILED: optional ${dep}@${spec} of ${key} is absent and its platform cannot be told from its name`,
        );
        return 1;
      }
      lock.packages[`node_modules/${dep}`] = { version: spec, ...platform };
      added.push(`${dep}@${spec}`);
    }
  }
  const [root, ...rest] = Object.entries(lock.packages);
  lock.packages = Object.fromEntries([root, ...rest.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  say(`listed ${added.length} absent optional platform package(s): ${added.join(', ') || 'none'}`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const known = ['--force', '--check', '--relock'];
  if (args.some((a) => !known.includes(a)) || args.length > 1) {
    say(`usage: node scripts/agents-install.mjs [--force | --check | --relock] (got: ${args.join(' ')})`);
    process.exit(2);
  }
  if (args.includes('--relock')) process.exit(relock());
  if (args.includes('--check')) {
    const ok = installedStampMatches(cacheDir());
    say(ok ? `installed in ${cacheDir()}` : `not installed (or stale) in ${cacheDir()}`);
    process.exit(ok ? 0 : 1);
  }
  process.exit(install({ force: args.includes('--force') }));
}
