/**
 * What the command resolver knows about programs: wrappers that run another command, shells and
 * interpreters that run code given as text, and tools whose first operand is a subcommand. Each
 * row follows the program's manual; docs/policy.md reproduces these tables.
 */

import type { ShellWord } from './shell-grammar.js';
import { type OptionTable, optionTable } from './shell-options.js';

export interface Wrapper {
  /** How the wrapper's own options are read; options end at its first operand. */
  options: OptionTable;
  /** Operands the wrapper itself takes before the command (`timeout DURATION`, `chroot DIR`). */
  leadingOperands?: number;
  /** `env` and `sudo`-style leading `NAME=value` words are the wrapper's, not the command. */
  assignments?: boolean;
  /** The option whose value is a whole command line (`su -c`, `flock -c`, `script -c`). */
  scriptOption?: string;
  /** `env -S`: the value is split into words that go before the rest. */
  splitOption?: string;
  /** The option that sets the directory the command runs in (`env -C`, `sudo -D`). */
  chdirOption?: string;
  /** The wrapper adds words read from standard input (`xargs`). */
  stdinArguments?: boolean;
  /** The wrapper joins its operands and hands them to `sh -c` (`watch`, `su` with words). */
  joinsOperands?: boolean;
  /** Options with which the wrapper does not run the command at all (`command -v`). */
  noRun?: readonly string[];
  /** Options whose value is a file the wrapper itself writes (`time -o FILE`, `script -O FILE`). */
  writes?: readonly string[];
}

const stop = { abbreviate: false, stopAtOperand: true };

/** Wrappers: the command they run is judged as if written alone. */
export const WRAPPERS: ReadonlyMap<string, Wrapper> = new Map<string, Wrapper>([
  [
    'sudo',
    {
      options: optionTable(
        'A:askpass b:background C:close-from= D:chdir= E:preserve-env=? e:edit g:group= H:set-home h:host= i:login K:remove-timestamp k:reset-timestamp l:list n:non-interactive P:preserve-groups p:prompt= R:chroot= r:role= S:stdin s:shell t:type= T:command-timeout= U:other-user= u:user= V:version v:validate',
        stop,
      ),
      assignments: true,
      chdirOption: 'chdir',
      noRun: ['list', 'validate', 'version', 'remove-timestamp', 'reset-timestamp'],
    },
  ],
  ['doas', { options: optionTable('n s L u= C=', stop), noRun: ['-L'] }],
  ['pkexec', { options: optionTable('user= disable-internal-agent', stop) }],
  [
    'env',
    {
      options: optionTable(
        'i:ignore-environment 0:null u:unset= C:chdir= S:split-string= v:debug block-signal=? default-signal=? ignore-signal=? list-signal-handling',
        { abbreviate: true, stopAtOperand: true },
      ),
      assignments: true,
      splitOption: 'split-string',
      chdirOption: 'chdir',
    },
  ],
  ['nohup', { options: optionTable('', stop) }],
  [
    'timeout',
    {
      options: optionTable('s:signal= k:kill-after= foreground preserve-status v:verbose', {
        abbreviate: true,
        stopAtOperand: true,
      }),
      leadingOperands: 1,
    },
  ],
  ['nice', { options: optionTable('n:adjustment=', { abbreviate: true, stopAtOperand: true }) }],
  ['ionice', { options: optionTable('c:class= n:classdata= p:pid= P:pgid= t:ignore u:uid=', stop) }],
  [
    'chrt',
    {
      options: optionTable(
        'a:all-tasks b:batch d:deadline f:fifo i:idle o:other r:rr R:reset-on-fork m:max p:pid T:sched-runtime= P:sched-period= D:sched-deadline=',
        stop,
      ),
      leadingOperands: 1,
    },
  ],
  ['taskset', { options: optionTable('a:all-tasks c:cpu-list p:pid', stop), leadingOperands: 1 }],
  [
    'stdbuf',
    { options: optionTable('i:input= o:output= e:error=', { abbreviate: true, stopAtOperand: true }) },
  ],
  ['setsid', { options: optionTable('c:ctty f:fork w:wait', stop) }],
  [
    'time',
    { options: optionTable('p f:format= o:output= a:append v:verbose q:quiet', stop), writes: ['output'] },
  ],
  ['command', { options: optionTable('p v V', stop), noRun: ['-v', '-V'] }],
  ['builtin', { options: optionTable('', stop) }],
  ['exec', { options: optionTable('c l a=', stop) }],
  ['busybox', { options: optionTable('', stop) }],
  ['coproc', { options: optionTable('', stop) }],
  ['unbuffer', { options: optionTable('p', stop) }],
  ['chroot', { options: optionTable('userspec= groups= skip-chdir', stop), leadingOperands: 1 }],
  [
    'flock',
    {
      options: optionTable(
        's:shared x,e:exclusive u:unlock n:nonblock w:timeout= o:close E:conflict-exit-code= F:no-fork c:command= verbose',
        stop,
      ),
      leadingOperands: 1,
      scriptOption: 'command',
    },
  ],
  [
    'su',
    {
      options: optionTable(
        'c:command= session-command= l:login m,p:preserve-environment s:shell= g:group= G:supp-group= w:whitelist-environment= P:pty',
        stop,
      ),
      scriptOption: 'command',
      noRun: [],
    },
  ],
  [
    'runuser',
    {
      options: optionTable(
        'c:command= session-command= l:login u:user= m,p:preserve-environment s:shell= g:group= G:supp-group=',
        stop,
      ),
      scriptOption: 'command',
    },
  ],
  [
    'script',
    {
      options: optionTable(
        'a:append c:command= e:return f:flush E:echo= q:quiet t:timing=? T:log-timing= B:log-io= I:log-in= O:log-out=',
        stop,
      ),
      scriptOption: 'command',
      writes: ['timing', 'log-timing', 'log-io', 'log-in', 'log-out'],
    },
  ],
  [
    'watch',
    {
      options: optionTable(
        'b:beep c:color C:no-color d:differences=? e:errexit g:chgexit n:interval= p:precise t:no-title w:no-wrap x:exec q:equexit=',
        stop,
      ),
      joinsOperands: true,
    },
  ],
  [
    'xargs',
    {
      options: optionTable(
        '0:null a:arg-file= d:delimiter= E= e:eof=? I= i:replace=? L:max-lines= l=? n:max-args= o:open-tty P:max-procs= p:interactive process-slot-var= r:no-run-if-empty s:max-chars= show-limits t:verbose x:exit',
        { abbreviate: true, stopAtOperand: true },
      ),
      stdinArguments: true,
    },
  ],
]);

/** Shells: `-c SCRIPT` runs SCRIPT; with no script operand they read the script from standard input. */
export const SHELLS = new Set([
  'sh',
  'bash',
  'zsh',
  'dash',
  'ksh',
  'mksh',
  'ash',
  'fish',
  'yash',
  'posh',
  'rbash',
]);
/** Shell options that take a value, so the value is not taken for the script file. */
export const SHELL_OPTIONS = optionTable('o= O= rcfile= init-file=', {
  abbreviate: false,
  stopAtOperand: true,
});

/** Interpreters and the options that give them code as text (`python -c`, `node -e`). */
export const INTERPRETERS: ReadonlyMap<string, readonly string[]> = new Map([
  ['python', ['-c']],
  ['python2', ['-c']],
  ['python3', ['-c']],
  ['pypy', ['-c']],
  ['pypy3', ['-c']],
  ['node', ['-e', '-p', '--eval', '--print']],
  ['nodejs', ['-e', '-p', '--eval', '--print']],
  ['bun', ['-e', '--eval', '-p', '--print']],
  ['deno', ['eval']],
  ['perl', ['-e', '-E']],
  ['ruby', ['-e']],
  ['php', ['-r']],
  ['lua', ['-e']],
  ['luajit', ['-e']],
  ['Rscript', ['-e']],
  ['tclsh', []],
  ['osascript', ['-e']],
  ['pwsh', ['-c', '-Command', '-command', '-EncodedCommand', '-e', '-ec']],
  ['powershell', ['-c', '-Command', '-command', '-EncodedCommand', '-e', '-ec']],
]);

const SCRIPT_FILE = /\.(?:py|js|mjs|cjs|ts|pl|rb|php|lua|R|ps1|tcl)$/;

/**
 * The option that hands an interpreter its code as text (`-c`, `-e`, combined as in `-Bc`), looked
 * for up to the script file or `-m module`, after which options belong to the script.
 */
export function inlineCodeFlag(args: readonly ShellWord[], flags: readonly string[]): string | undefined {
  for (const w of args) {
    const v = w.value;
    if (v === '-m' || v === '--' || (!v.startsWith('-') && SCRIPT_FILE.test(v))) return undefined;
    if (flags.includes(v)) return v;
    const cluster = v.startsWith('-') && !v.startsWith('--') && v.length > 2;
    if (cluster && flags.some((f) => f.length === 2 && v.slice(1).includes(f[1] as string))) return v;
  }
  return undefined;
}

/** awk runs commands from its program with `system(…)` and pipes (`print | "sh"`). */
export const AWKS = new Set(['awk', 'gawk', 'mawk', 'nawk', 'busybox-awk']);

/** Tools whose first operand is a subcommand, so options before it are the tool's own (`git -C . push`). */
export const SUBCOMMAND_TOOLS = new Set([
  'git',
  'docker',
  'podman',
  'kubectl',
  'npm',
  'pnpm',
  'yarn',
  'cargo',
  'gh',
  'go',
  'pip',
  'pip3',
  'apt',
  'apt-get',
  'brew',
  'systemctl',
  'helm',
  'terraform',
  'aws',
  'gcloud',
  'az',
]);
