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
  /**
   * Its options may also follow those operands (`setarch ARCH -R CMD`, `su USER -c CMD`: getopt
   * permutes them), and a `-` first (`su - USER`) is an option too.
   */
  optionsAfterLeading?: boolean;
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
        { abbreviate: true, stopAtOperand: true },
      ),
      leadingOperands: 1,
      optionsAfterLeading: true,
      scriptOption: 'command',
      noRun: [],
    },
  ],
  [
    'runuser',
    {
      options: optionTable(
        'c:command= session-command= l:login u:user= m,p:preserve-environment s:shell= g:group= G:supp-group=',
        { abbreviate: true, stopAtOperand: true },
      ),
      leadingOperands: 1,
      optionsAfterLeading: true,
      scriptOption: 'command',
    },
  ],
  [
    'script',
    {
      options: optionTable(
        'a:append c:command= e:return f:flush E:echo= q:quiet t:timing=? T:log-timing= B:log-io= I:log-in= O:log-out=',
        { abbreviate: true, stopAtOperand: true },
      ),
      scriptOption: 'command',
      writes: ['timing', 'log-timing', 'log-io', 'log-in', 'log-out'],
    },
  ],
  // Programs that set up a namespace, limits, privileges or a tracer and then run the command
  // (util-linux unshare(1), nsenter(1), prlimit(1), setpriv(1), setarch(8); fakeroot(1), strace(1),
  // valgrind(1), ssh-agent(1), dbus-run-session(1), sg(1)).
  [
    'unshare',
    {
      options: optionTable(
        'm:mount=? u:uts=? i:ipc=? n:net=? p:pid=? U:user=? C:cgroup=? T:time=? f:fork kill-child=? mount-proc=? r:map-root-user c:map-current-user map-auto map-user= map-group= map-users= map-groups= propagation= setgroups= R:root= w:wd= S:setuid= G:setgid= monotonic= boottime= l:load-interp= keep-caps',
        { abbreviate: true, stopAtOperand: true },
      ),
      chdirOption: 'wd',
    },
  ],
  [
    'nsenter',
    {
      options: optionTable(
        't:target= m:mount=? u:uts=? i:ipc=? n:net=? p:pid=? C:cgroup=? U:user=? T:time=? S:setuid= G:setgid= preserve-credentials r:root=? w:wd=? W:wdns= e:env F:no-fork Z:follow-context a:all user-parent keep-caps join-cgroup',
        { abbreviate: true, stopAtOperand: true },
      ),
    },
  ],
  [
    'prlimit',
    {
      options: optionTable(
        'p:pid= o:output= noheadings raw verbose c:core=? d:data=? e:nice=? f:fsize=? i:sigpending=? l:memlock=? m:rss=? n:nofile=? q:msgqueue=? r:rtprio=? s:stack=? t:cpu=? u:nproc=? v:as=? x:locks=? y:rttime=?',
        { abbreviate: true, stopAtOperand: true },
      ),
      noRun: ['pid'],
    },
  ],
  [
    'setpriv',
    {
      options: optionTable(
        'd:dump nnp,no-new-privs inh-caps= ambient-caps= bounding-set= keep-groups clear-groups init-groups groups= pdeathsig= reuid= regid= ruid= rgid= euid= egid= securebits= selinux-label= apparmor-profile= landlock-access= landlock-rule= reset-env',
        { abbreviate: true, stopAtOperand: true },
      ),
      noRun: ['dump'],
    },
  ],
  ...['setarch', 'linux32', 'linux64', 'i386', 'x86_64'].map((name): [string, Wrapper] => [
    name,
    {
      options: optionTable(
        'v:verbose 3:3gb 4:4gb B:32bit F:fdpic-funcptrs I:short-inode L:addr-compat-layout R:addr-no-randomize S:whole-seconds T:sticky-timeouts X:read-implies-exec Z:mmap-page-zero uname-2.6 list',
        { abbreviate: true, stopAtOperand: true },
      ),
      ...(name === 'setarch' ? { leadingOperands: 1, optionsAfterLeading: true } : {}),
      noRun: ['list'],
    },
  ]),
  ['fakeroot', { options: optionTable('l:lib= faked= s= i= u:unknown-is-real b= h:help v:version', stop) }],
  [
    'strace',
    {
      options: optionTable(
        'o:output= e= E:env= p:attach= u:user= s:string-limit= a:columns= P:trace-path= b:detach-on= O:summary-wall-clock= S:summary-sort-by= X:const-print-style= I= U:summary-columns= f:follow-forks c:summary-only C:summary w:summary-wall-clock d:debug D:daemonize h:help q:quiet r:relative-timestamps t:absolute-timestamps T:syscall-times v:no-abbrev V:version x y:decode-fds z:successful-only Z:failed-only k:stack-trace n:syscall-number i:instruction-pointer F seccomp-bpf output-separately',
        { abbreviate: true, stopAtOperand: true },
      ),
      writes: ['output'],
      noRun: ['attach', 'version', 'help'],
    },
  ],
  [
    'valgrind',
    {
      options: optionTable('q:quiet v:verbose h:help version tool= log-file= xml-file= log-socket=', stop),
      writes: ['log-file', 'xml-file'],
      noRun: ['help', 'version'],
    },
  ],
  ['ssh-agent', { options: optionTable('c s D d a= E= O= P= t= k', stop), noRun: ['-k'] }],
  ['dbus-run-session', { options: optionTable('config-file= dbus-daemon= version help', stop) }],
  [
    'sg',
    {
      options: optionTable('c=', stop),
      leadingOperands: 1,
      optionsAfterLeading: true,
      scriptOption: '-c',
      joinsOperands: true,
    },
  ],
  // npx (and `npm exec`): runs a package's program, or one on the PATH, or `-c`'s command line.
  [
    'npx',
    {
      options: optionTable(
        'p:package= c:call= y:yes no no-install ignore-existing q:quiet shell= prefix= w:workspace= workspaces include-workspace-root',
        stop,
      ),
      scriptOption: 'call',
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

/**
 * The interpreter a program name is, by its table's name: versioned names are the same program
 * (`python3.11`, `pypy3.10`, `perl5.36`, `ruby3.1`, `php8.2`, `lua5.4`, `tclsh8.6`).
 */
export function interpreterName(program: string): string | undefined {
  if (INTERPRETERS.has(program)) return program;
  const m = /^(python|pypy|perl|ruby|php|lua|tclsh)(\d+(?:\.\d+)*)$/.exec(program);
  if (m === null) return undefined;
  const base = m[1] as string;
  if (base === 'python' || base === 'pypy') return (m[2] as string).startsWith('2') ? `${base}` : `${base}3`;
  return base;
}

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
    // `--eval=CODE`: a long option with its value attached.
    if (flags.some((f) => f.startsWith('--') && v.startsWith(`${f}=`))) return v;
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
