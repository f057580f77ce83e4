/**
 * Runs the real `tally` command as a child process, in a temporary project with its own TALLY_HOME.
 */

import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { git } from '../session/fixture.js';
import { tempDir } from '../temp.js';

export const TALLY_BIN = fileURLToPath(new URL('../../../bin/tally.js', import.meta.url));

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Project {
  dir: string;
  root: string;
  home: string;
  env: NodeJS.ProcessEnv;
  tally: (args: string[], options?: { stdin?: string; cwd?: string; passphrase?: string }) => Promise<Ran>;
}

/** Runs `program argv…` to its end: its exit code and output, `stdin` written and closed. */
export function runProcess(
  program: string,
  argv: string[],
  options: { cwd?: string; env: NodeJS.ProcessEnv; stdin?: string; passphrase?: string },
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    // A passphrase is handed over as the ship key's owner would: on a file descriptor (3).
    const hand = options.passphrase !== undefined;
    const child = spawn(program, argv, {
      ...(options.cwd ? { cwd: options.cwd } : {}),
      env: hand ? { ...options.env, TALLY_PASSPHRASE_FD: '3' } : options.env,
      stdio: hand ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'],
    });
    // A child that exits before it reads its input (`sh -c '… &'`) closes the pipe: not a failure.
    const unread = (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') reject(error);
    };
    child.stdin!.on('error', unread);
    if (hand) {
      const fd3 = child.stdio[3] as NodeJS.WritableStream;
      fd3.on('error', unread);
      fd3.end(`${options.passphrase}\n`);
    }
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
    });
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin!.end(options.stdin ?? '');
  });
}

export function runTally(
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; stdin?: string; passphrase?: string },
): Promise<Ran> {
  return runProcess(process.execPath, [TALLY_BIN, ...args], options);
}

/** A git repository with one commit and an empty Tally home; nothing initialised yet. */
export function makeProject(prefix = 'tally-cli-'): Project {
  const dir = tempDir(prefix);
  const root = join(dir, 'repo');
  const home = join(dir, 'home');
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(join(root, 'README.md'), '# project\n');
  writeFileSync(join(root, 'src/app.js'), 'export const v = 1;\n');
  git(root, 'init', '-q');
  git(root, 'add', '.');
  git(root, 'commit', '-qm', 'initial');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: dir,
    TALLY_HOME: home,
    NO_COLOR: '1',
  };
  return {
    dir,
    root,
    home,
    env,
    tally: (args, options = {}) =>
      runTally(args, {
        cwd: options.cwd ?? root,
        env,
        ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
        ...(options.passphrase !== undefined ? { passphrase: options.passphrase } : {}),
      }),
  };
}

/** Parses stdout that must be one JSON document and nothing else. */
export function jsonOut(ran: Ran): Record<string, unknown> {
  try {
    return JSON.parse(ran.stdout) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`stdout is not one JSON document (${(error as Error).message}):\n${ran.stdout}`);
  }
}

export function toolEvent(call: string, name: string, input: unknown, kind?: string): string {
  return JSON.stringify({
    type: 'tool.before',
    call: { id: call },
    path: 'native',
    tool: { origin: 'native', name, input, ...(kind ? { kind } : {}) },
  });
}

/** Every decoded DSSE payload in a log or package, joined: what a reader of the evidence sees. */
export function decodedPayloads(bytes: Buffer): string {
  const out: string[] = [];
  const visit = (value: unknown) => {
    if (typeof value !== 'object' || value === null) return;
    const v = value as Record<string, unknown>;
    if (typeof v.payload === 'string' && Array.isArray(v.signatures))
      out.push(Buffer.from(v.payload, 'base64').toString('utf8'));
    for (const child of Object.values(v)) visit(child);
  };
  for (const line of bytes.toString('utf8').split('\n')) {
    if (line.trim()) visit(JSON.parse(line));
  }
  return out.join('\n');
}
