/**
 * The independent oracle for shell words: the real bash runs each command with PATH set to a temp
 * directory of stub programs that print their argv, so what bash would pass a program is
 * read from bash itself, never from the parser under test. A few real wrappers (timeout, nice,
 * nohup, env) and bash itself are linked in too, so wrapping and `bash -c` go through the real
 * programs. Every case runs in one bash process, in an empty directory (globs stay unexpanded).
 */
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Stubs: none of them is a bash builtin, so bash runs them from PATH. */
export const STUBS = [
  'rm',
  'cat',
  'grep',
  'tee',
  'cp',
  'mv',
  'chmod',
  'curl',
  'ls',
  'git',
  'head',
  'touch',
  'mkdir',
  'wc',
  // Wrappers as stubs: they print their own argv and run nothing.
  'sudo',
  'xargs',
  'busybox',
];
/** Real programs that run another command found on PATH (never with a PATH of their own). */
export const REAL_WRAPPERS = ['timeout', 'nice', 'nohup', 'env'];

const BASH = '/usr/bin/bash';

/**
 * Each stub appends one record: the argument count, then every argument, each ended by a NUL (the
 * one byte no argument can hold), in one `printf`, so concurrent stubs of a pipeline never
 * interleave. dash starts three times faster than bash, which keeps the oracle cheap.
 */
const STUB = `#!/usr/bin/dash
printf '%s\\0' "$(($# + 1))" "\${0##*/}" "$@" >> "$TALLY_ORACLE_OUT"
`;

export interface BashOracle {
  /** The argv of every stub program each command ran, sorted (pipelines run concurrently). */
  run(commands: readonly string[]): Promise<string[][][]>;
  close(): void;
}

/** Both cores: the cases are split between this many bash processes. */
const PARALLEL = 2;

export function bashOracle(): BashOracle {
  const root = mkdtempSync(join(tmpdir(), 'tally-bash-oracle-'));
  const bin = join(root, 'bin');
  const work = join(root, 'work');
  mkdirSync(bin);
  mkdirSync(work);
  // Redirections from the file need it to exist, or bash runs nothing.
  writeFileSync(join(work, '.env'), 'KEY=x\n');
  for (const name of STUBS) {
    writeFileSync(join(bin, name), STUB);
    chmodSync(join(bin, name), 0o755);
  }
  for (const name of REAL_WRAPPERS) symlinkSync(`/usr/bin/${name}`, join(bin, name));
  symlinkSync(BASH, join(bin, 'bash'));
  symlinkSync(BASH, join(bin, 'sh'));
  let batch = 0;

  /** Runs cases in one bash process; a marker record opens each case, a group isolates its I/O. */
  async function runChunk(commands: readonly string[]): Promise<string[][][]> {
    const id = batch++;
    const out = join(root, `out-${id}`);
    const script = commands
      .map((c, i) => `printf '#%d\\0' ${i} >> "$TALLY_ORACLE_OUT"\n{ ${c}\n} </dev/null >/dev/null 2>&1\n`)
      .join('');
    writeFileSync(join(root, `cases-${id}.sh`), script);
    writeFileSync(out, '');
    const child = spawn(BASH, ['--noprofile', '--norc', join(root, `cases-${id}.sh`)], {
      cwd: work,
      env: { PATH: bin, TALLY_ORACLE_OUT: out, HOME: work, LC_ALL: 'C.UTF-8' },
      stdio: 'ignore',
    });
    await new Promise<void>((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', () => resolve());
    });
    const results: string[][][] = [];
    const fields = readFileSync(out, 'utf8').split('\0');
    let current: string[][] = [];
    for (let i = 0; i < fields.length - 1; ) {
      const field = fields[i++] as string;
      if (field.startsWith('#')) {
        current = [];
        results.push(current);
        continue;
      }
      const count = Number(field);
      current.push(fields.slice(i, i + count));
      i += count;
    }
    return results.map((argvs) => argvs.sort(compareArgv));
  }

  return {
    async run(commands) {
      const size = Math.ceil(commands.length / PARALLEL);
      const chunks = Array.from({ length: PARALLEL }, (_, k) => commands.slice(k * size, (k + 1) * size));
      return (await Promise.all(chunks.map(runChunk))).flat();
    },
    close() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export function compareArgv(a: string[], b: string[]): number {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
