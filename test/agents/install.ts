/**
 * Where the pinned agent CLIs are and whether they are installed. The installer itself is
 * scripts/agents-install.mjs (run by scripts/test.mjs before the tests); this reads its stamp
 * through the same module, so the two cannot disagree about what "installed" means.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export type AgentName = 'claude-code' | 'codex' | 'gemini-cli' | 'qwen-code' | 'opencode';
export const AGENT_NAMES: readonly AgentName[] = [
  'claude-code',
  'codex',
  'gemini-cli',
  'qwen-code',
  'opencode',
];

interface InstallerModule {
  AGENTS: Record<AgentName, { pkg: string; bin: string }>;
  cacheDir(): string;
  installedStampMatches(dir?: string): boolean;
}

/** The repository root: the nearest parent holding the pinned manifest (works from dist/ too). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'test', 'agents', 'pinned', 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find the repository root (test/agents/pinned/package.json)');
    dir = up;
  }
  return dir;
}

let installer: Promise<InstallerModule> | undefined;

function loadInstaller(): Promise<InstallerModule> {
  installer ??= import(
    pathToFileURL(join(repoRoot(), 'scripts', 'agents-install.mjs')).href
  ) as Promise<InstallerModule>;
  return installer;
}

export interface InstalledAgent {
  name: AgentName;
  /** The command to run (node_modules/.bin/<bin> in the cache). */
  bin: string;
  /** The exact pinned version. */
  version: string;
}

/** The pinned version of an agent, from test/agents/pinned/package.json. */
export function pinnedVersion(name: AgentName, pkg: string): string {
  const manifest = JSON.parse(
    readFileSync(join(repoRoot(), 'test', 'agents', 'pinned', 'package.json'), 'utf8'),
  ) as {
    dependencies: Record<string, string>;
  };
  const version = manifest.dependencies[pkg];
  if (version === undefined)
    throw new Error(`${name}: ${pkg} is not pinned in test/agents/pinned/package.json`);
  return version;
}

/**
 * The installed agent, or an error that says why it cannot run and what to do: tests call this
 * first, so a missing agent fails the test with the reason instead of skipping it.
 */
export async function ensureAgent(name: AgentName): Promise<InstalledAgent> {
  const mod = await loadInstaller();
  const entry = mod.AGENTS[name];
  if (!entry) throw new Error(`unknown agent ${name}; known: ${AGENT_NAMES.join(', ')}`);
  const dir = mod.cacheDir();
  if (!mod.installedStampMatches(dir)) {
    throw new Error(
      `${name} is not installed at its pinned version in ${dir}: run \`node scripts/agents-install.mjs\` ` +
        '(scripts/test.mjs does this before the agent tests; it needs the npm registry once)',
    );
  }
  return { name, bin: join(dir, 'node_modules', '.bin', entry.bin), version: pinnedVersion(name, entry.pkg) };
}
