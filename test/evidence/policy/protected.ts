/**
 * What the tests of writes into a protected folder share: the policy they judge under (every shell
 * command allowed, `protected/` forbidden to write, the control plane left out), whether a real
 * program they run as the oracle is on this machine, and their table of lines and verdicts.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  type ActionPolicy,
  type ActionVerdict,
  evaluateAction,
} from '../../../src/evidence/policy/patterns.js';

export const PROTECTED: ActionPolicy = {
  allow: ['Bash'],
  forbid: ['Write(protected/**)'],
  escalate: [],
  controlPlane: 'allow',
};

/** The judge's verdict on a shell line under PROTECTED, run from `/w` (no file is touched). */
export const verdictOf = (command: string, cwd = '/w'): ActionVerdict['verdict'] =>
  evaluateAction(PROTECTED, { tool: 'Bash', input: { command }, cwd }).verdict;

/** True when `program --version` runs here. */
export const have = (program: string): boolean =>
  spawnSync(program, ['--version'], { stdio: 'ignore' }).error === undefined;

/** What a line did when bash ran it (whether protected/ changed) and how the judge saw it. */
export interface LineOutcome {
  changed: boolean;
  verdict: ActionVerdict;
}

/**
 * One test per line: `changes` lines change protected/ when the real programs run them and must get
 * `verdict` (checked further by `also`, when given); `harmless` lines leave it as it was and stay
 * allowed.
 */
export function verdictTable(
  run: (line: string) => LineOutcome | Promise<LineOutcome>,
  table: {
    changes?: readonly string[];
    /** `refused`: forbidden or escalated, whichever (the line is not allowed). */
    verdict?: 'forbidden' | 'escalate' | 'refused';
    also?: (verdict: ActionVerdict) => void;
    harmless?: readonly string[];
  },
): void {
  for (const line of table.changes ?? [])
    test(`${line}: ${table.verdict ?? 'forbidden'}`, async () => {
      const { changed, verdict } = await run(line);
      assert.ok(changed, 'the real program changed protected/');
      if (table.verdict === 'refused') assert.notEqual(verdict.verdict, 'allowed', JSON.stringify(verdict));
      else assert.equal(verdict.verdict, table.verdict ?? 'forbidden', JSON.stringify(verdict));
      table.also?.(verdict);
    });
  for (const line of table.harmless ?? [])
    test(`${line}: allowed`, async () => {
      const { changed, verdict } = await run(line);
      assert.equal(changed, false, 'the real program left protected/ as it was');
      assert.equal(verdict.verdict, 'allowed', JSON.stringify(verdict));
    });
}

/**
 * What a folder holds, to tell whether a command changed it: every name below it, its mode, and
 * each file's content.
 */
export function protectedState(dir: string): string {
  if (!existsSync(dir)) return '(removed)';
  const out: string[] = [(statSync(dir).mode & 0o7777).toString(8)];
  const walk = (at: string, prefix: string) => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name);
      const stat = statSync(path);
      const mode = (stat.mode & 0o7777).toString(8);
      if (stat.isDirectory()) {
        out.push(`${prefix}${name}/ ${mode}`);
        walk(path, `${prefix}${name}/`);
      } else out.push(`${prefix}${name} ${mode}=${readFileSync(path).toString('base64')}`);
    }
  };
  walk(dir, '');
  return out.join('\n');
}

/**
 * Runs a line with bash in a new folder holding `protected/x` (`secret`) and `f` (`one`, `two`):
 * whether protected/ changed (names, modes and contents), and how the judge sees the line there.
 */
export function bashLine(line: string): LineOutcome {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'tally-line-')));
  try {
    mkdirSync(join(root, 'protected'));
    writeFileSync(join(root, 'protected', 'x'), 'secret\n');
    writeFileSync(join(root, 'f'), 'one\ntwo\n');
    const before = protectedState(join(root, 'protected'));
    spawnSync('bash', ['-c', line], { cwd: root, stdio: 'ignore', timeout: 10_000 });
    return {
      changed: protectedState(join(root, 'protected')) !== before,
      verdict: evaluateAction(PROTECTED, { tool: 'Bash', input: { command: line }, cwd: root }),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/**
 * Runs a line with bash in a git repository holding `protected/keep` and `f` (committed as `one`,
 * then changed to `two`), with its own HOME and git identity: whether protected/ changed, and how the
 * judge sees the line there.
 */
export function gitLine(line: string): LineOutcome {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'tally-git-line-')));
  try {
    const env = {
      ...process.env,
      HOME: root,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@example.com',
    };
    const sh = (command: string) =>
      spawnSync('bash', ['-c', command], { cwd: root, env, stdio: 'ignore', timeout: 20_000 });
    mkdirSync(join(root, 'protected'));
    writeFileSync(join(root, 'protected', 'keep'), 'keep\n');
    writeFileSync(join(root, 'f'), 'one\n');
    sh('git init -q && git add f && git commit -qm one && echo two > f');
    const before = protectedState(join(root, 'protected'));
    sh(line);
    return {
      changed: protectedState(join(root, 'protected')) !== before,
      verdict: evaluateAction(PROTECTED, { tool: 'Bash', input: { command: line }, cwd: root }),
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
